"""Presets stored before group chats (docs/groups.md) kept neither `new_group_chat_prompt` nor
`group_nudge_prompt` in their settings; both are read back from the stored upload, so an old preset
sends what its file says in a group (a file without them keeps SillyTavern's defaults), and out of
the summary's "kept but not applied" list."""

import json

from django.db import migrations

KEYS = ("new_group_chat_prompt", "group_nudge_prompt")


def read_from_upload(apps, schema_editor):
    Preset = apps.get_model("presets", "Preset")
    for preset in Preset.objects.only("id", "stored_text", "settings", "summary").iterator(chunk_size=50):
        try:
            data = json.loads(preset.stored_text, strict=False)
        except (TypeError, ValueError, RecursionError):
            continue
        if not isinstance(data, dict):
            continue
        found = {key: data[key] for key in KEYS if isinstance(data.get(key), str)}
        if not found:
            continue
        summary = dict(preset.summary or {})
        kept = summary.get("kept_not_applied")
        if isinstance(kept, list):
            summary["kept_not_applied"] = [key for key in kept if key not in KEYS]
        Preset.objects.filter(pk=preset.pk).update(
            settings={**(preset.settings or {}), **found}, summary=summary
        )


class Migration(migrations.Migration):
    dependencies = [("presets", "0007_regex_source")]

    operations = [migrations.RunPython(read_from_upload, migrations.RunPython.noop)]
