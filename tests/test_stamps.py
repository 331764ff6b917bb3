"""Cache stamps move inside the write's own transaction (servers/writes.py, docs/architecture.md
"Cache freshness"): a bump outside a transaction is refused, a write whose bump fails is not
half-written, and what a write changed is what the next read sees, in this process and another."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.db import OperationalError, connection
from django.test import Client
from django.urls import reverse

from core.actors import token_agent_for
from core.resilient_cache import cache_get
from devtools.factories import make_preset
from presets import cache as preset_cache
from presets import services as preset_services
from servers import generational_cache
from servers.api_auth import server_id_for_token
from servers.directory import DirectoryChannel
from servers.models import ApiToken, AuditEvent, CacheStamp
from servers.selectors import directory_names, tokenizer_for
from servers.services import api_token_create, api_token_revoke, directory_replace, server_tokenizer_set
from servers.writes import server_write

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parent.parent
CHANNEL = 111_222_333_444_555_666


def active_preset_name(server_id: int) -> str | None:
    """The name of the preset the bot assembles with (None without one)."""
    compiled = preset_cache.get_active_preset(server_id)
    return compiled.name if compiled is not None else None


@contextlib.contextmanager
def stamp_writes_fail() -> Iterator[None]:
    """Every INSERT or UPDATE of the stamp table fails in the database layer, as a full disk or a
    lost lock would make it fail; reads of it still work."""
    table = CacheStamp._meta.db_table

    def refuse(execute, sql, params, many, context):
        words = sql.lstrip().split(None, 1)
        if table in sql and words and words[0].upper() in {"INSERT", "UPDATE"}:
            raise OperationalError("the stamp table cannot be written")
        return execute(sql, params, many, context)

    with connection.execute_wrapper(refuse):
        yield


def stamp_of(name: str, server_id: int) -> int | None:
    return (
        CacheStamp.objects.filter(server_id=server_id, name=name).values_list("generation", flat=True).first()
    )


@pytest.fixture
def house_style(lantern, alice):
    raw = make_preset(("lamp", "A lamp burns.", True))
    return preset_services.preset_import(
        server=lantern, raw=raw, filename="House Style.json", by=alice
    ).preset


def test_a_stamp_bumped_outside_a_transaction_is_refused_and_stays_where_it_was(lantern, house_style):
    before = stamp_of(preset_cache.STAMP, lantern.pk)
    assert not connection.in_atomic_block
    with pytest.raises(generational_cache.StampOutsideTransaction):
        generational_cache.bump(preset_cache.STAMP, lantern.pk)
    assert stamp_of(preset_cache.STAMP, lantern.pk) == before


def test_a_stamp_bumped_inside_a_transaction_moves_when_it_commits(lantern, house_style):
    before = stamp_of(preset_cache.STAMP, lantern.pk)
    with server_write(server_id=lantern.pk, stamps=(preset_cache.STAMP,)):
        pass
    after = stamp_of(preset_cache.STAMP, lantern.pk)
    assert after is not None and before is not None and after > before
    # ...and the shared cache learns the number at the commit.
    assert cache_get(generational_cache.generation_key(preset_cache.STAMP, lantern.pk)) == after


def test_a_write_that_raises_moves_no_stamp(lantern, house_style):
    before = stamp_of(preset_cache.STAMP, lantern.pk)
    with pytest.raises(ZeroDivisionError), server_write(server_id=lantern.pk, stamps=(preset_cache.STAMP,)):
        house_style.name = "Never Stored"
        house_style.save()
        _ = 1 / 0
    assert stamp_of(preset_cache.STAMP, lantern.pk) == before
    assert active_preset_name(lantern.pk) == "House Style"


def test_alice_renames_a_preset_while_the_stamp_table_fails_and_it_keeps_its_old_name(
    lantern, alice, house_style
):
    assert active_preset_name(lantern.pk) == "House Style"  # the bot has it cached
    client = Client(raise_request_exception=False)
    client.force_login(alice)
    url = reverse("presets:rename", kwargs={"server_id": lantern.pk, "preset_id": house_style.pk})
    with stamp_writes_fail():
        response = client.post(url, {"name": "Night Shift"})
    assert response.status_code >= 500  # alice is told it failed...
    page = client.get(reverse("presets:list", kwargs={"server_id": lantern.pk})).content.decode()
    assert "House Style" in page and "Night Shift" not in page  # ...and nothing was half-written:
    assert not AuditEvent.objects.filter(server=lantern, action="preset.rename").exists()
    assert active_preset_name(lantern.pk) == "House Style"  # the bot agrees
    response = client.post(url, {"name": "Night Shift"})  # once the table works again, the rename does
    assert response.status_code == 302
    assert active_preset_name(lantern.pk) == "Night Shift"


def test_alice_revokes_a_token_while_the_stamp_table_fails_and_it_is_not_revoked_halfway(lantern, alice):
    token, plain = api_token_create(server=lantern, name="bot", by=alice)
    assert server_id_for_token(plain, server_id=lantern.pk) == lantern.pk
    with stamp_writes_fail(), pytest.raises(OperationalError):
        api_token_revoke(token=token, by=alice)
    assert ApiToken.objects.get(pk=token.pk).revoked_at is None  # the tokens page still lists it live
    assert server_id_for_token(plain, server_id=lantern.pk) == lantern.pk  # and it does what it says
    api_token_revoke(token=token, by=alice)
    assert server_id_for_token(plain, server_id=lantern.pk) is None


def another_process() -> None:
    """What a second worker knows: nothing compiled, no generation seen; the shared cache is common."""
    generational_cache.forget_everything_local()


def test_alice_changes_the_tokenizer_and_the_next_count_uses_it_everywhere(lantern, alice):
    assert tokenizer_for(lantern.pk) == "o200k_base"
    another_process()
    assert tokenizer_for(lantern.pk) == "o200k_base"  # both processes have it cached
    server_tokenizer_set(server=lantern, encoding="cl100k_base", by=alice)
    assert tokenizer_for(lantern.pk) == "cl100k_base"
    another_process()
    assert tokenizer_for(lantern.pk) == "cl100k_base"


def test_the_bot_pushes_a_channel_name_and_the_pages_show_it_at_once(lantern):
    assert directory_names(lantern.pk).channel(CHANNEL) == ""
    directory_replace(
        server_id=lantern.pk,
        channels=[DirectoryChannel(id=CHANNEL, name="tavern-hall", parent=None, private=False)],
        members=[],
        by=token_agent_for("tk_test"),
    )
    assert directory_names(lantern.pk).channel(CHANNEL) == "tavern-hall"
    another_process()
    assert directory_names(lantern.pk).channel(CHANNEL) == "tavern-hall"


def test_a_write_whose_copy_to_the_shared_cache_is_lost_is_seen_at_the_next_check(
    lantern, alice, house_style, settings, monkeypatch
):
    """The worker dies between the commit and the copy: the write stands, and readers learn the new
    number from the database at their next check (CACHE_STAMP_CHECK_SECONDS), not after the TTL."""
    assert active_preset_name(lantern.pk) == "House Style"
    monkeypatch.setattr(generational_cache, "_publish", lambda *args: None)
    preset_services.preset_rename(preset=house_style, name="Night Shift", by=alice)
    monkeypatch.undo()
    settings.CACHE_STAMP_CHECK_SECONDS = 0  # this process's next check is due
    assert active_preset_name(lantern.pk) == "Night Shift"
    another_process()
    assert active_preset_name(lantern.pk) == "Night Shift"


def test_only_the_cache_layer_registers_commit_hooks():
    """Writes bump their stamps inside their transaction (servers.writes.server_write); the one hook
    that runs after a commit is the cache layer's copy of the new number to the shared cache."""
    hooks = sorted(
        str(path.relative_to(ROOT))
        for top in ROOT.iterdir()
        if top.is_dir() and not top.name.startswith(".") and top.name not in {"tests", "node_modules"}
        for path in top.rglob("*.py")
        if "on_commit(" in path.read_text(encoding="utf-8")
    )
    assert hooks == ["servers/generational_cache.py"]
