"""Each process keeps a stored channel's row behind the channel's stamp in the shared cache
(docs/channels.md#speed): a warm assembly from it makes no query, and a write through any path, made
by another process, is what this process's next assembly reads."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from conversations.channels import selectors, services
from conversations.tasks import expire_channel_messages
from core.actors import SYSTEM, Agent
from engine import BoundedCache
from servers.models import Server
from servers.services import channel_ensure

from .conftest import ASKER, TAVERN, Bot

pytestmark = pytest.mark.django_db

BOARD = 777_000_000_000_000_001  # a forum channel the tavern becomes a thread of
M = f"channels/{TAVERN}/messages"


@contextlib.contextmanager
def another_process() -> Iterator[None]:
    """Within the block, this process's kept channel rows are another process's (empty at first):
    what a write does to the rows kept outside the block, only the shared stamps tell them."""
    ours = selectors._ROWS
    selectors._ROWS = BoundedCache(max_entries=ours.max_entries, max_bytes=ours.max_bytes)
    try:
        yield
    finally:
        selectors._ROWS = ours


def seen(server_id: int) -> tuple[Any, ...] | None:
    """What an assembly from #tavern starts from: the history, the variables, the thread parent."""
    stored = selectors.stored_chat(server_id, int(TAVERN))
    if stored is None:
        return None
    return tuple((m["name"], m["content"]) for m in stored.history), stored.variables, stored.parent_id


@pytest.fixture
def tavern(bot: Bot) -> Bot:
    """#tavern: Mira's greeting and a reply with two swipes (the second current)."""
    assert bot.post("1000", "Hello, keeper.", role="user").status_code == 201
    bot.post("1001", "Welcome. {{setvar::hp::50}}")
    bot.call("POST", f"{M}/1001/swipes", {"content": "Welcome back. {{setvar::hp::40}}"})
    return bot


def _expire(bot: Bot) -> None:
    server = Server.objects.get(pk=bot.server)
    services.settings_set(server=server, user_writes=False, keep_messages=1, keep_days=30, by=SYSTEM)
    expire_channel_messages()


WRITES: dict[str, Callable[[Bot], Any]] = {
    "a message posted": lambda bot: bot.post("1002", "Any rooms free?", role="user"),
    "a reply posted": lambda bot: bot.post("1002", "Rooms! {{setvar::gold::3}}"),
    "an edit": lambda bot: bot.call("PATCH", f"{M}/1000", {"content": "Hello again."}),
    "a deletion": lambda bot: bot.call("DELETE", f"{M}/1000"),
    "a regenerated reply": lambda bot: bot.call(
        "POST", f"{M}/1001/swipes", {"content": "Hi. {{setvar::hp::9}}"}
    ),
    "a swipe switched": lambda bot: bot.call("PUT", f"{M}/1001/swipes/current", {"index": 0}),
    "a swipe deleted": lambda bot: bot.call("DELETE", f"{M}/1001/swipes/1"),
    "the render's writes kept": lambda bot: services.render_writes_keep(
        server_id=bot.server, channel_id=int(TAVERN), before={}, after={"mood": "grim"}
    ),
    "a private context": lambda bot: services.private_context_add(
        server_id=bot.server, channel_id=int(TAVERN), member="Aria", text="Aria hides a key.", by=Agent("t")
    ),
    "a member forgotten": lambda bot: bot.call("DELETE", f"users/{ASKER}/messages"),
    "the retention task": _expire,
    "a thread parent pushed": lambda bot: channel_ensure(
        channel_id=int(TAVERN), owner_id=bot.server, parent_id=BOARD
    ),
}


@pytest.mark.parametrize("write", list(WRITES))
def test_a_write_in_another_process_is_what_the_next_assembly_here_reads(
    tavern: Bot, write: str, django_capture_on_commit_callbacks
):
    before = seen(tavern.server)  # this process now keeps the row
    with another_process(), django_capture_on_commit_callbacks(execute=True):
        WRITES[write](tavern)
    with another_process():
        truth = seen(tavern.server)  # a brand-new process reads the database
    assert truth != before
    assert seen(tavern.server) == truth


def test_a_channel_forgotten_in_another_process_is_gone_here_too(
    tavern: Bot, django_capture_on_commit_callbacks
):
    assert seen(tavern.server) is not None
    with another_process(), django_capture_on_commit_callbacks(execute=True):
        assert tavern.call("DELETE", f"channels/{TAVERN}/conversation").status_code == 200
    assert seen(tavern.server) is None
    assert tavern.call("POST", "assemble", {"conversation": TAVERN}).status_code == 404


def test_a_write_in_this_process_is_read_at_once_even_before_the_stamp_moves(tavern: Bot):
    """Without the commit's hook (the test's transaction never commits), this process's own copy is
    dropped by the write itself."""
    before = seen(tavern.server)
    tavern.call("PATCH", f"{M}/1000", {"content": "Hello again."})
    after = seen(tavern.server)
    assert after is not None and after != before and ("Mira", "Hello again.") in after[0]


def assemble(bot: Bot) -> dict[str, Any]:
    response = bot.call("POST", "assemble", {"conversation": TAVERN})
    assert response.status_code == 200, response.content
    return response.json()


def test_a_warm_assembly_from_the_stored_conversation_makes_no_query(tavern: Bot):
    first = assemble(tavern)
    with CaptureQueriesContext(connection) as queries:
        again = assemble(tavern)
    assert [q["sql"] for q in queries.captured_queries] == []
    assert again["messages"] == first["messages"]


def test_a_cold_process_reads_the_row_once_then_keeps_it(tavern: Bot):
    with another_process():
        with CaptureQueriesContext(connection) as cold:
            seen(tavern.server)
        with CaptureQueriesContext(connection) as warm:
            seen(tavern.server)
    assert len(cold.captured_queries) >= 1 and len(warm.captured_queries) == 0


def test_without_the_shared_cache_every_assembly_reads_the_database(tavern: Bot, monkeypatch):
    """No stamp to trust (Redis down): nothing kept is served, so no write can be missed."""
    from servers import generational_cache

    monkeypatch.setattr(generational_cache, "read_shared", lambda key: None)
    monkeypatch.setattr(generational_cache, "cache_add", lambda *args: False)
    seen(tavern.server)
    with CaptureQueriesContext(connection) as queries:
        seen(tavern.server)
    assert len(queries.captured_queries) >= 1


def test_a_kept_row_is_read_again_after_the_check_interval(tavern: Bot, settings):
    """A stamp whose new value never reached the shared cache is bounded by the database check."""
    seen(tavern.server)
    settings.CACHE_STAMP_CHECK_SECONDS = 0
    with CaptureQueriesContext(connection) as queries:
        seen(tavern.server)
    assert len(queries.captured_queries) >= 1


def test_the_kept_rows_stay_bounded_by_count_and_bytes(bot: Bot, monkeypatch):
    small: BoundedCache[Any, Any] = BoundedCache(max_entries=3, max_bytes=64 * 1024)
    monkeypatch.setattr(selectors, "_ROWS", small)
    channels = [str(500 + n) for n in range(5)]
    for channel in channels:
        bot.post("1000", "hi", channel=channel)
        selectors.stored_chat(bot.server, int(channel))
    assert len(small) == 3 and small.bytes <= 64 * 1024
    huge = "x" * (16 * 1024)  # more than an eighth of the bytes: never kept
    services.render_writes_keep(server_id=bot.server, channel_id=500, before={}, after={"lore": huge})
    selectors.stored_chat(bot.server, 500)
    with CaptureQueriesContext(connection) as queries:
        stored = selectors.stored_chat(bot.server, 500)
    assert stored is not None and stored.variables["lore"] == huge
    assert len(queries.captured_queries) >= 1
    assert small.bytes <= 64 * 1024


def test_a_request_changing_its_variables_leaves_the_kept_row_as_stored(tavern: Bot):
    stored = selectors.stored_chat(tavern.server, int(TAVERN))
    assert stored is not None
    stored.variables["hp"] = "0"
    again = selectors.stored_chat(tavern.server, int(TAVERN))
    assert again is not None and again.variables["hp"] == "40"
