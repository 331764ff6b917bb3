"""Presets imported before generation types (docs/assembly.md#generation-types-and-prefill) keep their prefill
and continue/impersonation prompts only in the stored upload: copy them into `settings`, and out of the
summary's "kept but not applied" list."""

import json

from django.db import migrations

KEYS = {
    "assistant_prefill": str,
    "assistant_impersonation": str,
    "continue_prefill": bool,
    "continue_nudge_prompt": str,
    "impersonation_prompt": str,
}


def copy_settings(apps, schema_editor):
    Preset = apps.get_model("presets", "Preset")
    for preset in Preset.objects.only("id", "stored_text", "settings", "summary").iterator(chunk_size=50):
        try:
            data = json.loads(preset.stored_text, strict=False)
        except ValueError:
            continue
        if not isinstance(data, dict):
            continue
        found = {key: data[key] for key, kind in KEYS.items() if isinstance(data.get(key), kind)}
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
    dependencies = [("presets", "0003_sampling")]

    operations = [migrations.RunPython(copy_settings, migrations.RunPython.noop)]
