"""Keep each preset's regex scripts (and reasoning delimiters) beside its stored text, so a cache
fill no longer parses the whole file; rows stored before are filled from their stored text."""

import json

from django.db import migrations, models

_REASONING_KEYS = ("reasoning", "reasoning_prefix", "reasoning_suffix")


def _source(text):
    # A frozen copy of presets.regex_source.regex_source_of_text as of this migration.
    try:
        data = json.loads(text or "null")
    except (ValueError, RecursionError):
        return {}
    if not isinstance(data, dict):
        return {}
    kept = {key: data[key] for key in _REASONING_KEYS if key in data}
    extensions = data.get("extensions")
    if isinstance(extensions, dict) and "regex_scripts" in extensions:
        kept["extensions"] = {"regex_scripts": extensions["regex_scripts"]}
    return kept


def fill(apps, schema_editor):
    Preset = apps.get_model("presets", "Preset")
    for preset in Preset.objects.filter(regex_source__isnull=True).only("pk", "stored_text").iterator(chunk_size=50):
        Preset.objects.filter(pk=preset.pk).update(regex_source=_source(preset.stored_text))


class Migration(migrations.Migration):
    dependencies = [
        ("presets", "0006_settings_new_chat_and_names"),
    ]

    operations = [
        migrations.AddField(
            model_name="preset",
            name="regex_source",
            field=models.JSONField(blank=True, default=None, null=True),
        ),
        migrations.RunPython(fill, migrations.RunPython.noop),
    ]
