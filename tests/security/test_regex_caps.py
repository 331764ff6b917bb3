"""A server cannot store unbounded regex work (issue 25): at most 512 scripts per preset and 512 per
server; the import summary says how many were refused and why."""

from __future__ import annotations

import json

from presets import selectors as preset_selectors
from regex_scripts.models import ServerScript
from tests.regex_scripts.conftest import import_preset, run_cli, script  # noqa: F401 (a fixture)


def test_a_preset_carrying_600_scripts_keeps_512_and_its_summary_says_88_were_refused(
    import_preset,  # noqa: F811
):
    preset = import_preset("Heavy", *[script(f"/p{i}/", id=f"p{i}") for i in range(600)])
    stored = preset_selectors.regex_scripts(preset.pk)
    assert len(stored.scripts) == 512
    assert stored.scripts[-1].id == "p511"
    assert stored.skipped == ()
    sentence = (
        "This preset carries 600 regex scripts; 88 were refused (the ones after the first 512): "
        "a preset holds at most 512 regex scripts."
    )
    assert sentence in json.dumps(preset.summary, ensure_ascii=False)


def test_a_server_stores_at_most_512_scripts_and_the_import_says_how_many_were_refused(lantern, tmp_path):
    export = tmp_path / "many.json"
    export.write_text(json.dumps([script(f"/s{i}/", id=f"s{i}") for i in range(500)]))
    code, first, _ = run_cli("import", str(export), "--server", str(lantern.id), "--json")
    assert code == 0 and first["scripts"] == 500 and "refused" not in first
    code, second, _ = run_cli("import", str(export), "--server", str(lantern.id), "--json")
    assert code == 0
    assert (second["scripts"], second["refused"]) == (12, 488)
    assert second["refused_reason"] == "488 scripts were refused: a server holds at most 512 regex scripts."
    assert ServerScript.objects.filter(server=lantern).count() == 512
    code, _, error = run_cli("import", str(export), "--server", str(lantern.id), "--json")
    assert code != 0
    assert "already holds 512 regex scripts" in error
    assert ServerScript.objects.filter(server=lantern).count() == 512
