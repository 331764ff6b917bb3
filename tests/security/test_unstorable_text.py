"""NUL and lone surrogates in JSON (issue 35, item 7): every JSON endpoint answers 400 in JSON naming
the field, stores nothing, and never answers an HTML 500. JSON spells them `\\u0000` and `\\ud800`."""

from __future__ import annotations

import json

import pytest

from tests.security.conftest import DEFAULT_BUCKETS

NUL, LONE = "\\u0000", "\\ud800"
MIRA = 424242424242424242


def _bodies() -> list[tuple[str, str, str]]:
    """(path under the server, JSON text with BAD where the hostile text goes, the field named)."""
    document = json.loads(DEFAULT_BUCKETS.read_text(encoding="utf-8"))
    document["names"] = {**document.get("names", {}), "user": "@@BAD@@"}
    assemble = json.dumps(document).replace("@@BAD@@", "Mi BAD ra")
    turn = {"channel": 601, "user": MIRA, "messages": [{"role": "user", "content": "hi BAD"}]}
    preset = {"prompts": [{"identifier": "main", "name": "Main", "content": "BAD"}], "prompt_order": []}
    book = {"entries": {"0": {"uid": 0, "key": ["ale"], "content": "BAD"}}}
    return [
        ("assemble", assemble, "names.user"),
        ("regex/clean", json.dumps({"text": "a BAD b", "placement": "ai_output"}), "text"),
        ("stm/turns", json.dumps(turn), "messages[0].content"),
        ("stm/summary", json.dumps({"channel": 601, "user": MIRA, "summary": "BAD"}), "summary"),
        (
            "directory",
            json.dumps({"channels": [{"id": "5", "name": "BAD"}], "members": []}),
            "channels[0].name",
        ),
        (f"stm/users/{MIRA}/opt-in", json.dumps({"opt_in": True, "note": "BAD"}), "note"),
        ("presets", json.dumps(preset), "prompts[0].content"),
        ("lorebooks", json.dumps(book), "entries.0.content"),
    ]


@pytest.mark.parametrize("bad", [NUL, LONE], ids=["nul", "lone-surrogate"])
@pytest.mark.parametrize("path,template,field", _bodies(), ids=[b[0] for b in _bodies()])
def test_hostile_text_in_any_json_body_is_a_json_400_naming_the_field(
    client, api_token, lantern, path, template, field, bad
):
    body = template.replace("BAD", bad)
    response = client.post(
        f"/api/v1/servers/{lantern.pk}/{path}",
        data=body.encode(),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {api_token}",
    )
    assert response.status_code == 400, response.content[:300]
    assert response["Content-Type"].startswith("application/json")
    error = response.json()["error"]
    assert f"`{field}`" in error
    assert ("NUL" if bad == NUL else "lone surrogate") in error
