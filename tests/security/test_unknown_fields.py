"""Every JSON endpoint of the bot's API refuses a field it does not read: 400, naming the field and
the nearest field it does read, and nothing is done (docs/bot.md). The walk takes every API route the
authorization matrix knows (which fails on a route it does not), so a route added later is walked
without editing this file; a route whose body is a file, not fields, says so below."""

from __future__ import annotations

import json

import pytest
from django.db import transaction
from django.test import Client

from .routes import API, api_body, route_url

BODY_METHODS = ("POST", "PUT", "PATCH")
# name -> why its body's keys are not fields of ours
FILE_BODIES = {
    "presets:api-list": "the body is a SillyTavern preset file, whose keys are the file's own",
    "lorebooks:api-list": "the body is a SillyTavern World Info file, whose keys are the file's own",
}


def _walked() -> list[tuple[str, str]]:
    return [
        (name, method)
        for name, methods in API.items()
        if name not in FILE_BODIES
        for method in methods
        if method in BODY_METHODS
    ]


def _misspelt(name: str) -> str:
    """The name with one letter dropped, as a hurried hand types it (`messages` -> `mesages`)."""
    return name[:2] + name[3:] if len(name) > 3 else name + "x"


def _call(world, name: str, method: str, body: dict) -> tuple[int, str]:
    url = route_url(name, world)
    _, content_type, query = api_body(name, world)
    point = transaction.savepoint()
    try:
        response = Client().generic(
            method,
            url + query,
            json.dumps(body).encode(),
            content_type=content_type,
            HTTP_AUTHORIZATION=f"Bearer {world.live_token}",
        )
    finally:
        transaction.savepoint_rollback(point)
    return response.status_code, response.content.decode()


pytestmark = pytest.mark.django_db


def test_the_walk_covers_every_json_body_route_of_the_api():
    walked = {name for name, _ in _walked()}
    with_bodies = {name for name, methods in API.items() if set(methods) & set(BODY_METHODS)}
    assert walked | set(FILE_BODIES) == with_bodies
    assert {"groups:api-next", "groups:api-notes", "assembly:api-assemble", "memory:api-turns"} <= walked


def test_every_json_endpoint_names_an_unknown_field_and_the_field_it_meant(lantern_world):
    failures = []
    for name, method in _walked():
        raw, _, _ = api_body(name, lantern_world)
        good = json.loads(raw)
        assert isinstance(good, dict) and good, f"{name}: the walk's body is not a JSON object"
        status, text = _call(lantern_world, name, method, good)
        if status not in (200, 201):
            failures.append(f"{method} {name}: the walk's own body was refused ({status}: {text[:200]})")
            continue
        status, text = _call(lantern_world, name, method, {**good, "zz_not_a_field": 1})
        if status != 400 or "`zz_not_a_field`" not in text:
            failures.append(f"{method} {name} with an extra field: {status} {text[:200]}")
        key = next(iter(good))
        typo = _misspelt(key)
        status, text = _call(
            lantern_world, name, method, {typo if k == key else k: v for k, v in good.items()}
        )
        if status != 400 or f"`{typo}`" not in text or f"`{key}`" not in text:
            failures.append(f"{method} {name} with `{typo}` for `{key}`: {status} {text[:200]}")
    assert not failures, "\n".join(failures)


def test_a_misspelt_key_inside_a_group_message_is_named_too(lantern_world):
    body = {"messages": [{"role": "user", "name": "U", "contnet": "hi"}], "seed": 1}
    status, text = _call(lantern_world, "groups:api-next", "POST", body)
    assert status == 400 and "`contnet`" in text and "`messages[0]`" in text and "`content`" in text
