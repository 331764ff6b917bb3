"""Presets stored before the rules SillyTavern 1.18 corrected
(docs/assembly.md#what-sillytavern-118-corrected) kept neither `new_chat_prompt` nor `names_behavior` in their
settings; both are read back from the stored upload, so an old preset sends what its file says (a file without
them keeps SillyTavern's defaults)."""

import json

from django.db import migrations

KEYS = {"new_chat_prompt": (str,), "names_behavior": (int,)}
NAMES_BEHAVIORS = (-1, 0, 1, 2)


def read_from_upload(apps, schema_editor):
    Preset = apps.get_model("presets", "Preset")
    for preset in Preset.objects.only("id", "stored_text", "settings").iterator():
        try:
            data = json.loads(preset.stored_text, strict=False)
        except (TypeError, ValueError, RecursionError):
            continue
        if not isinstance(data, dict):
            continue
        settings = dict(preset.settings or {})
        for key, types in KEYS.items():
            value = data.get(key)
            if isinstance(value, bool) or not isinstance(value, types):
                continue
            if key == "names_behavior" and value not in NAMES_BEHAVIORS:
                continue
            settings[key] = value
        if settings != preset.settings:
            Preset.objects.filter(pk=preset.pk).update(settings=settings)


class Migration(migrations.Migration):
    dependencies = [("presets", "0005_versions_and_channel_presets")]

    operations = [migrations.RunPython(read_from_upload, migrations.RunPython.noop)]
