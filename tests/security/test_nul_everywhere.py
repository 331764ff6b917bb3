"""NUL and lone surrogates in the address, the query and every form field (issue 50, item 4).

PostgreSQL refuses NUL in text, so any of them reaching a query was a 500 there (a preset renamed
to "a\\0b", a token named so, `%00` in a group name in an API address). Every route of the URLconf
is walked from the resolver (tests/security/routes.py), so a route another change adds is walked
too: alice, admin of the Lantern Guild, sends each one a hostile query parameter, each of its form
fields with the hostile text in it, and the hostile text in every text part of its address. Each
answer is a 400 naming the part (JSON under /api/), and nothing of the server changes.
"""

from __future__ import annotations

import re
from typing import Any

from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from presets.models import Preset
from servers.models import ApiToken

from .conftest import World, preset_bytes, snapshot
from .routes import Route, all_routes, page_data

NUL = "\x00"

# `<name>`, `<str:name>`, `<path:name>` and a regex's `.*` take any text; the other converters
# never match NUL.
_TEXT_KWARG = re.compile(r"<(?:(?:str|path):)?(\w+)>|\(\?P<(\w+)>\.\*\)")


def _url(route: Route, world: World, text_kwarg: str | None = None, bad: str = "") -> str:
    """The route's address with the world's ids (1 for an id the world does not name, the first
    choice of a regex's alternation, `x` for other text), with `bad` after `text_kwarg`'s value.
    Built from the pattern, not `reverse`, so unnamed patterns (Django admin's) are walked too."""
    known = world.kwargs()

    def value(name: str, converter: str, regex: str = "") -> str:
        if name in known and converter in ("int", ""):
            text = str(known[name])
        elif converter == "int":
            text = "1"
        elif re.fullmatch(r"[\w|]+", regex):
            text = regex.split("|")[0]
        else:
            text = "x"
        return text + bad if name == text_kwarg else text

    path = route.route.replace("^", "").replace("$", "")
    path = re.sub(r"<(?:(\w+):)?(\w+)>", lambda m: value(m[2], m[1] or ""), path)
    path = re.sub(r"\(\?P<(\w+)>([^)]*)\)", lambda m: value(m[1], "re", m[2]), path)
    return "/" + path


def _form_variants(route: Route, world: World, bad: str) -> list[tuple[str, dict[str, Any]]]:
    """(the field holding the hostile text, the form): the route's working form with each of its
    text fields spoiled in turn, and the same form with one extra hostile field."""
    base = page_data(route.name, world)
    variants = [("note", {**base, "note": f"x{bad}y"})]
    for field, value in base.items():
        if isinstance(value, str):
            variants.append((field, {**base, field: value + bad}))
        elif isinstance(value, list):
            variants.append((field, {**base, field: [*value, bad]}))
    return variants


def _fresh(form: dict[str, Any]) -> dict[str, Any]:
    """The form with its uploaded files rewound (each post reads a file to its end)."""
    for value in form.values():
        if isinstance(value, SimpleUploadedFile):
            value.seek(0)
    return form


def _check(response: Any, route: Route, where: str, problems: list[str]) -> None:
    api = route.route.startswith("api/")
    if response.status_code != 400:
        problems.append(f"{route.name} {where}: {response.status_code}")
        return
    body = response.json()["error"] if api else response.content.decode()
    if "NUL character or a lone surrogate" not in body:
        problems.append(f"{route.name} {where}: 400 without the sentence: {body[:120]}")


def test_every_route_refuses_a_nul_in_its_address_query_and_form_fields(client, alice, lantern_world):
    bad = NUL
    client.force_login(alice)
    auth = {"HTTP_AUTHORIZATION": f"Bearer {lantern_world.live_token}"}
    before = snapshot(lantern_world.server)
    tokens_before = ApiToken.objects.count()
    problems: list[str] = []
    routes = all_routes()
    for route in routes:
        url = _url(route, lantern_world)
        headers = auth if route.route.startswith("api/") else {}
        response = client.get(url, {"q": f"a{bad}"}, **headers)
        _check(response, route, "query `q`", problems)
        for field, form in _form_variants(route, lantern_world, bad):
            response = client.post(url, _fresh(form), **headers)
            _check(response, route, f"form field `{field}`", problems)
            if response.status_code == 400 and f"`{field}`" not in response.content.decode():
                problems.append(f"{route.name}: the answer does not name the field `{field}`")
        for match in _TEXT_KWARG.finditer(route.route):
            name = match[1] or match[2]
            spoiled = _url(route, lantern_world, name, bad)
            _check(client.get(spoiled, **headers), route, f"address part `{name}`", problems)
            _check(client.post(spoiled, {}, **headers), route, f"address part `{name}` (POST)", problems)
    assert problems == []
    assert len(routes) >= 100  # the walk saw the whole URLconf
    assert snapshot(lantern_world.server) == before
    assert ApiToken.objects.count() == tokens_before


def test_the_refusal_names_the_field_and_keeps_the_preset(client, alice, lantern_world):
    """alice renames her preset to a name with a NUL in it: a page that says which field, and the
    preset keeps its name; the same form without it renames the preset."""
    client.force_login(alice)
    preset = Preset.objects.get(pk=lantern_world.preset_id)
    url = reverse("presets:rename", kwargs={"server_id": lantern_world.server.pk, "preset_id": preset.pk})
    refused = client.post(url, {"name": "Night\x00shift"})
    assert refused.status_code == 400
    assert "The form field `name` contains a NUL character" in refused.content.decode()
    preset.refresh_from_db()
    assert preset.name != "Night\x00shift" and "\x00" not in preset.name
    accepted = client.post(url, {"name": "Night shift"})
    assert accepted.status_code in (200, 302)
    preset.refresh_from_db()
    assert preset.name == "Night shift"


def test_a_nul_in_a_group_name_in_an_api_address_is_a_json_400(client, lantern_world):
    """The bot asks for a group whose name ends in %00: a JSON 400, not a 500 from the database."""
    url = f"/api/v1/servers/{lantern_world.server.pk}/groups/{lantern_world.group_name}%00"
    response = client.get(url, HTTP_AUTHORIZATION=f"Bearer {lantern_world.live_token}")
    assert response.status_code == 400
    assert response.json() == {
        "error": "The address contains a NUL character or a lone surrogate, which cannot be stored as text."
    }


def test_a_file_name_with_a_nul_is_stored_without_it(client, alice, lantern_world):
    """Django drops what is not printable from an uploaded file's name, so the preset named after
    the file is stored without the NUL."""
    client.force_login(alice)
    url = reverse("presets:upload", kwargs={"server_id": lantern_world.server.pk})
    upload = SimpleUploadedFile("night\x00shift.json", preset_bytes("Night"), "application/json")
    response = client.post(url, {"file": upload})
    assert response.status_code in (200, 302)
    assert Preset.objects.filter(server=lantern_world.server, name="nightshift").exists()


# A lone surrogate has no UTF-8 form; these are the bytes one would be if it had (what Python's
# "surrogatepass" writes). Forms and addresses decode them as U+FFFD replacement characters.
SURROGATE_BYTES = "%ED%A0%80"


def test_a_lone_surrogate_sent_as_bytes_never_reaches_the_database(client, alice, lantern_world):
    client.force_login(alice)
    server_id = lantern_world.server.pk
    url = reverse("presets:rename", kwargs={"server_id": server_id, "preset_id": lantern_world.preset_id})
    response = client.post(
        url, f"name=Night{SURROGATE_BYTES}shift", content_type="application/x-www-form-urlencoded"
    )
    assert response.status_code in (200, 302)
    assert Preset.objects.get(pk=lantern_world.preset_id).name == "Night\ufffd\ufffd\ufffdshift"
    api = client.get(
        f"/api/v1/servers/{server_id}/groups/{SURROGATE_BYTES}",
        {"q": "\ufffd"},
        HTTP_AUTHORIZATION=f"Bearer {lantern_world.live_token}",
    )
    assert api.status_code == 404 and "error" in api.json()
