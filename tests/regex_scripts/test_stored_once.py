"""A preset's regex scripts are taken from its file once, at import: filling the cache reads the part
kept beside the stored text and never parses the (up to 2 MiB) stored text again."""

from __future__ import annotations

from presets import cache as preset_cache
from presets.models import Preset

from .conftest import script


def test_the_active_presets_scripts_come_from_what_the_import_kept(import_preset, lantern):
    preset = import_preset("Tidy", script("/teh/", "the", name="Typos"), reasoning_prefix="<think>")
    # Were the stored text read again, this would lose the scripts.
    Preset.objects.filter(pk=preset.pk).update(stored_text="not JSON any more")
    compiled = preset_cache.get_active_preset(lantern.pk)
    assert compiled is not None
    assert [s.script.name for s in compiled.regex_scripts] == ["Typos"]
    assert compiled.reasoning[0] == "<think>"


def test_a_preset_stored_before_the_scripts_were_kept_apart_reads_its_stored_text(import_preset, lantern):
    preset = import_preset("Old", script("/teh/", "the", name="Typos"))
    Preset.objects.filter(pk=preset.pk).update(regex_source=None)
    compiled = preset_cache.get_active_preset(lantern.pk)
    assert compiled is not None
    assert [s.script.name for s in compiled.regex_scripts] == ["Typos"]
