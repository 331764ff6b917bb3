"""One request's regex work is bounded as a whole (issue 25): a preset full of catastrophic scripts
runs until the request's budget (REGEX_REQUEST_BUDGET_MS, 250 ms of CPU) is spent, and the scripts
after it are skipped with a warning naming the budget."""

from __future__ import annotations

from tests.regex_scripts.conftest import import_preset, script  # noqa: F401 (a fixture)
from tests.regex_scripts.test_api_and_pages import clean

SLOW = "/(a+)+$/"  # backtracks exponentially on a run of a's that does not end the text
TEXT = "a" * 40 + "!"


def slow_scripts(count: int) -> list[dict]:
    return [script(SLOW, "x", id=f"slow-{i}", name=f"Slow {i}") for i in range(count)]


def test_forty_catastrophic_scripts_stop_at_the_budget_and_the_rest_are_skipped_by_name(
    client,
    lantern,
    api_token,
    import_preset,  # noqa: F811
):
    import_preset("Trap", *slow_scripts(40), script("/!/g", "?", id="last", name="Last"))
    answer = clean(client, lantern.id, api_token, {"text": TEXT, "seed": 1})
    assert answer.status_code == 200
    errors = answer.json()["errors"]
    skipped = [e for e in errors if "REGEX_REQUEST_BUDGET_MS = 250 ms" in e["error"]]
    stopped = [e for e in errors if e["error"].startswith("Stopped after 50 ms")]
    assert len(stopped) + len(skipped) == 40 + 1  # every slow one, and Last, which came after them
    assert len(stopped) <= 10
    assert skipped[-1]["script"] == "Last"
    assert answer.json()["stored"] == TEXT


def test_a_preset_within_the_budget_runs_every_script(client, lantern, api_token, import_preset):  # noqa: F811
    import_preset("Fine", *[script(f"/a{i}/g", "b", id=f"fine-{i}") for i in range(40)])
    answer = clean(client, lantern.id, api_token, {"text": "a1 a2 a7", "seed": 1})
    assert answer.json()["errors"] == []
    assert answer.json()["stored"] == "b b b"
