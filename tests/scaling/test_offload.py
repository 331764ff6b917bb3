"""Heavy page work runs in niced child processes (core/offload.py, issue 35 item 2): the preview of
a big preset renders there the page it renders inline, a render past its wall limit is stopped and
said so, and the work moved out still counts toward its server's share.

The children are real processes. The tests of the preview page read the test's rows from another
connection, so they need the real-services pass (a committed PostgreSQL database, a shared Redis).
"""

from __future__ import annotations

import json
import os
import threading
import time
from typing import Any

import pytest
from django.urls import reverse

from assembly.preview import PreviewOptions
from assembly.preview_result import (
    SMALL_PREVIEW_BYTES,
    SMALL_PREVIEW_ENTRIES,
    SMALL_PREVIEW_NODES,
    SMALL_PREVIEW_SCRIPTS,
    is_small_preview,
)
from characters import services as card_services
from core import fairness, offload
from devtools.factories import DEFAULT_BUCKETS, make_preset
from engine.regex import parse_script
from lorebooks import services as lorebook_services
from presets import services as preset_services
from regex_scripts import services as regex_services
from tests.engine.cards.test_reader import V2
from tests.regex_scripts.conftest import script
from tests.scaling.offload_work import burn, hold_until, refuse, tables_loaded


@pytest.fixture
def children(settings):
    settings.OFFLOAD_WORKERS = 2
    settings.OFFLOAD_WALL_SECONDS = 60  # generous: the machine running the tests may be busy
    settings.OFFLOAD_WARM_UP = ""  # seconds of CPU a child; the test of the warm-up turns it on
    offload.shut_down()
    yield
    offload.shut_down()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_work_past_its_wall_limit_is_stopped_and_its_child_killed(children, settings):
    warm_pid = offload.run(burn, seconds=0)  # a child started and set up
    assert warm_pid != os.getpid()
    settings.OFFLOAD_WALL_SECONDS = 0.5
    started = time.monotonic()
    with pytest.raises(offload.OffloadTimeout) as stopped:
        offload.run(burn, seconds=30)
    assert time.monotonic() - started < 5
    assert "took more than 0.5 s of work and was stopped" in stopped.value.message
    deadline = time.monotonic() + 5
    while _alive(warm_pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(warm_pid)  # the busy child was the one stopped: nothing keeps burning
    settings.OFFLOAD_WALL_SECONDS = 60
    assert offload.run(burn, seconds=0) not in (warm_pid, os.getpid())  # a new child does the next


def test_the_works_own_error_reaches_the_caller(children):
    with pytest.raises(LookupError, match="no such preset"):
        offload.run(refuse, message="no such preset")
    assert offload.run(burn, seconds=0) != os.getpid()  # the child is still there to serve


def test_offloaded_cpu_counts_toward_the_servers_share(children, settings, lantern, harbor):
    offload.run(burn, seconds=0)  # the child's start is not part of what is measured
    settings.SERVER_CPU_SHARE = 0.0001
    settings.SERVER_CPU_BURST_SECONDS = 0.2
    settings.SERVER_CPU_NEIGHBOUR_SECONDS = 3600
    fairness._credit.clear()
    fairness._enter(harbor.pk, counted=False)  # Harbor asked this process too: the meter applies
    token = fairness._claims.set([])
    try:
        fairness.claim_share(lantern.pk)
        offload.run(burn, seconds=0.3)  # this thread only waits: the child's CPU is what is charged
        fairness._give_back(fairness._claims.get() or [])
    finally:
        fairness._claims.reset(token)
        fairness._running.clear()
    token = fairness._claims.set([])
    try:
        with pytest.raises(fairness.ServerBusy):
            fairness.claim_share(lantern.pk)
    finally:
        fairness._claims.reset(token)
        fairness._credit.clear()


def test_one_servers_work_keeps_to_one_child_and_another_server_finds_one_free(children, harbor, lantern):
    offload.run(burn, seconds=0)  # one child started
    offload.run(burn, seconds=0)
    finished: dict[str, float] = {}
    started = time.monotonic()

    def harbor_work(name: str, seconds: float) -> None:
        token = fairness._claims.set([])
        try:
            fairness.claim_share(harbor.pk)
            offload.run(burn, seconds=seconds)
            finished[name] = time.monotonic() - started
        finally:
            fairness._give_back(fairness._claims.get() or [])
            fairness._claims.reset(token)

    first = threading.Thread(target=harbor_work, args=("harbor's first", 1.5))
    first.start()
    deadline = time.monotonic() + 10
    while offload._pool().turns.held_by(harbor.pk) == 0 and time.monotonic() < deadline:
        time.sleep(0.01)  # until Harbor's first work has its child
    second = threading.Thread(target=harbor_work, args=("harbor's second", 0))
    second.start()
    token = fairness._claims.set([])
    try:
        fairness.claim_share(lantern.pk)
        offload.run(burn, seconds=0)
        finished["lantern's"] = time.monotonic() - started
    finally:
        fairness._give_back(fairness._claims.get() or [])
        fairness._claims.reset(token)
    first.join()
    second.join()
    fairness._running.clear()
    assert finished["lantern's"] < finished["harbor's first"]  # the Lantern did not wait for Harbor
    assert finished["harbor's second"] >= finished["harbor's first"]  # Harbor's second waited its turn


def _as_server(server_id: int, work: Any, **kwargs: Any) -> Any:
    """`offload.run(work, **kwargs)` as a request of `server_id` would make it."""
    token = fairness._claims.set([])
    try:
        fairness.claim_share(server_id)
        return offload.run(work, **kwargs)
    finally:
        fairness._give_back(fairness._claims.get() or [])
        fairness._claims.reset(token)


def _until(condition: Any) -> None:
    deadline = time.monotonic() + 30
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert condition()


def test_with_one_child_the_lantern_gets_the_next_turn_before_harbors_second_call(
    children, settings, tmp_path, harbor, lantern
):
    settings.OFFLOAD_WORKERS = 1
    settings.SERVER_CONCURRENT_WORK_PER_PROCESS = 10
    offload.shut_down()
    offload.run(burn, seconds=0)  # the child started
    done = tmp_path / "done"
    turns = offload._pool().turns
    calls = [
        threading.Thread(target=_as_server, args=(harbor.pk, hold_until), kwargs={"path": str(done)}),
        threading.Thread(target=_as_server, args=(harbor.pk, burn), kwargs={"seconds": 0}),
        threading.Thread(target=_as_server, args=(lantern.pk, burn), kwargs={"seconds": 0}),
    ]
    calls[0].start()
    _until(lambda: turns.held_by(harbor.pk) == 1)  # Harbor's first holds the child
    calls[1].start()
    _until(lambda: turns.waiting_of(harbor.pk) == 1)  # Harbor's second waits in its line
    calls[2].start()
    _until(lambda: turns.waiting_of(lantern.pk) == 1)  # then the Lantern's arrives
    with pytest.raises(offload.OffloadBusy) as refused:  # Harbor's line is full: refused at once
        _as_server(harbor.pk, burn, seconds=0)
    assert "already has work running and waiting" in refused.value.message
    done.touch()
    for call in calls:
        call.join(60)
    fairness._running.clear()
    assert turns.served[-3:] == [harbor.pk, lantern.pk, harbor.pk]  # the Lantern's turn came first


def test_harbor_flooding_the_pool_holds_one_child_and_the_lanterns_work_runs_at_once(
    children, settings, tmp_path, harbor, lantern
):
    settings.OFFLOAD_WORKERS = 3
    settings.OFFLOAD_PER_SERVER = 5  # asked for more than the pool has: one child is always left
    settings.OFFLOAD_WAITING_PER_SERVER = 4
    settings.SERVER_CONCURRENT_WORK_PER_PROCESS = 10
    offload.shut_down()
    done = tmp_path / "done"
    turns = offload._pool().turns
    flood = [
        threading.Thread(target=_as_server, args=(harbor.pk, hold_until), kwargs={"path": str(done)})
        for _ in range(6)
    ]
    for call in flood:
        call.start()
    _until(lambda: turns.held_by(harbor.pk) == 2 and turns.waiting_of(harbor.pk) == 4)
    assert _as_server(lantern.pk, burn, seconds=0) != os.getpid()  # served while Harbor still waits
    assert turns.held_by(harbor.pk) == 2 and turns.waiting_of(harbor.pk) == 4
    done.touch()
    for call in flood:
        call.join(60)
    fairness._running.clear()
    assert turns.held_by(harbor.pk) == 0


def test_a_new_childs_first_work_finds_the_token_tables_loaded(children, settings):
    settings.OFFLOAD_WARM_UP = "assembly.warmup.warm_child"
    offload.shut_down()
    assert offload.run(tables_loaded) is True
    settings.OFFLOAD_WARM_UP = ""
    offload.shut_down()
    assert offload.run(tables_loaded) is False  # what the warm-up did, not the work itself


def test_harbors_stopped_work_pays_for_its_successor_and_the_lantern_keeps_its_child(
    children, settings, tmp_path, harbor, lantern
):
    settings.SERVER_CONCURRENT_WORK_PER_PROCESS = 10
    pool = offload._pool()
    lanterns_child = _as_server(lantern.pk, burn, seconds=0)
    first_children = {child.process.pid for child in pool._idle}
    # Every child set up first: a child still starting comes after one that worked for another server.
    _until(lambda: all(child.ready or child.conn.poll(0) for child in pool._idle))
    settings.OFFLOAD_WALL_SECONDS = 1
    with pytest.raises(offload.OffloadTimeout):  # Harbor's work is stopped, its child killed
        _as_server(harbor.pk, hold_until, path=str(tmp_path / "never"))
    settings.OFFLOAD_WALL_SECONDS = 60
    assert lanterns_child in {child.process.pid for child in pool._idle}  # Harbor took the other
    (successor,) = {child.process.pid for child in pool._idle} - first_children
    done = tmp_path / "done"
    harbors: dict[str, int] = {}
    harbors_next = threading.Thread(
        target=lambda: harbors.update(pid=_as_server(harbor.pk, hold_until, path=str(done)))
    )
    harbors_next.start()
    _until(lambda: pool.turns.held_by(harbor.pk) == 1)  # Harbor's next call holds a child
    assert _as_server(lantern.pk, burn, seconds=0) == lanterns_child  # the Lantern's, at once
    done.touch()
    harbors_next.join(60)
    fairness._running.clear()
    assert harbors["pid"] == successor  # Harbor's next waited for the start its stopped work caused


# -- the preview page, with the real database and cache ---------------------------------------------

pages = pytest.mark.services


def _big_preset(lantern, alice, nodes: int) -> None:
    contents = [(f"rule{i}", f"Rule {i}: the lamp stays lit.", True) for i in range(nodes)]
    preset_services.preset_import(
        server=lantern,
        raw=make_preset(*contents),
        filename="big.json",
        on_clash="replace",
        activate=True,
        by=alice,
    )


def _render(client, server_id: int):
    document = DEFAULT_BUCKETS.read_text(encoding="utf-8")
    return client.post(
        reverse("assembly:preview-render", args=[server_id]),
        {"document": document, "seed": "7"},
        HTTP_HX_REQUEST="true",
    )


@pages
@pytest.mark.django_db(transaction=True)
def test_an_offloaded_preview_shows_what_an_inline_one_shows(children, settings, client, alice, lantern):
    _big_preset(lantern, alice, 300)
    client.force_login(alice)
    offloaded = _render(client, lantern.pk)
    assert offloaded.status_code == 200 and "Rule 299: the lamp stays lit." in offloaded.content.decode()
    settings.OFFLOAD_WORKERS = 0
    inline = _render(client, lantern.pk)
    assert offloaded.content == inline.content


@pages
@pytest.mark.django_db(transaction=True)
def test_a_preview_past_its_wall_limit_is_stopped_and_says_so(children, settings, client, alice, lantern):
    _big_preset(lantern, alice, 300)
    client.force_login(alice)
    assert _render(client, lantern.pk).status_code == 200  # the child is up and warm
    settings.OFFLOAD_WALL_SECONDS = 0.002
    stopped = _render(client, lantern.pk)
    html = stopped.content.decode()
    assert stopped.status_code == 200  # htmx swaps only 2xx: the sentence is in the result
    assert 'data-testid="preview-error"' in html and "took more than 0.002 s of work and was stopped" in html
    full_page = client.get(reverse("assembly:preview", args=[lantern.pk]))
    assert full_page.status_code == 503 and "was stopped" in full_page.content.decode()
    settings.OFFLOAD_WALL_SECONDS = 60
    assert "Rule 299: the lamp stays lit." in _render(client, lantern.pk).content.decode()


@pages
@pytest.mark.django_db(transaction=True)
def test_harbors_offloaded_renders_still_empty_its_share(
    children, settings, client, charlie, harbor, lantern
):
    settings.SERVER_CPU_NEIGHBOUR_SECONDS = 3600
    fairness._enter(lantern.pk, counted=False)  # the Lantern asked this process too: the meter applies
    client.force_login(charlie)
    assert _render(client, harbor.pk).status_code == 200  # the child is up and warm
    settings.SERVER_CPU_SHARE = 0.0001
    settings.SERVER_CPU_BURST_SECONDS = 0.002
    fairness._credit.clear()
    assert _render(client, harbor.pk).status_code == 200  # the render that empties Harbor's bucket
    busy = client.get(reverse("regex_scripts:tester", args=[harbor.pk]))
    assert busy.status_code == 429 and "busy, try again" in busy.content.decode()
    fairness._credit.clear()


# -- small work in the web thread -------------------------------------------------------------------


@pytest.mark.django_db
def test_a_small_preview_is_made_in_the_web_thread_without_a_child(children, client, alice, lantern):
    _big_preset(lantern, alice, 30)
    client.force_login(alice)
    shown = _render(client, lantern.pk)
    assert shown.status_code == 200 and "Rule 29: the lamp stays lit." in shown.content.decode()
    assert offload._current is None  # no child was started, so none was waited for


@pytest.mark.django_db
def test_a_preview_past_a_bound_is_not_small(lantern, alice):
    sample = json.loads(DEFAULT_BUCKETS.read_text(encoding="utf-8"))
    _big_preset(lantern, alice, 30)
    assert is_small_preview(lantern.pk, sample, PreviewOptions())
    assert not is_small_preview(
        lantern.pk, {**sample, "padding": "x" * SMALL_PREVIEW_BYTES}, PreviewOptions()
    )
    assert not is_small_preview(lantern.pk, sample, PreviewOptions(conversation=1))  # a stored one
    _big_preset(lantern, alice, SMALL_PREVIEW_NODES + 1)
    assert not is_small_preview(lantern.pk, sample, PreviewOptions())


def _small_sample(lantern, alice) -> dict[str, Any]:
    _big_preset(lantern, alice, 30)
    sample = json.loads(DEFAULT_BUCKETS.read_text(encoding="utf-8"))
    assert is_small_preview(lantern.pk, sample, PreviewOptions())
    return sample


@pytest.mark.django_db
def test_a_preview_drawing_on_more_world_info_entries_than_the_bound_is_not_small(lantern, alice):
    sample = _small_sample(lantern, alice)
    entries = {
        str(i): {"uid": i, "key": [f"lamp{i}"], "content": "The lamp is old."}
        for i in range(SMALL_PREVIEW_ENTRIES + 1)
    }
    lorebook_services.lorebook_import(
        server=lantern, raw=json.dumps({"entries": entries}).encode(), filename="Lamps.json", by=alice
    )
    assert not is_small_preview(lantern.pk, sample, PreviewOptions())


@pytest.mark.django_db
def test_a_preview_with_more_of_the_servers_own_scripts_on_than_the_bound_is_not_small(lantern, alice):
    sample = _small_sample(lantern, alice)
    scripts = [
        parse_script(script(f"lamp{i}", "lantern", name=f"Lamp {i}")) for i in range(SMALL_PREVIEW_SCRIPTS)
    ]
    regex_services.scripts_import(server=lantern, scripts=scripts, by=alice)
    assert is_small_preview(lantern.pk, sample, PreviewOptions())  # at the bound
    regex_services.scripts_import(server=lantern, scripts=[parse_script(script("one", "more"))], by=alice)
    assert not is_small_preview(lantern.pk, sample, PreviewOptions())


@pytest.mark.django_db
def test_a_preview_whose_active_card_is_past_the_bytes_bound_is_not_small(lantern, alice):
    sample = _small_sample(lantern, alice)
    for name, description in (("Tomas", "A lamplighter."), ("Mira", "x" * SMALL_PREVIEW_BYTES)):
        card = {**V2, "data": {**V2["data"], "name": name, "description": description}}
        card_services.card_import(server=lantern, raw=json.dumps(card).encode(), filename="c.json", by=alice)
        assert is_small_preview(lantern.pk, sample, PreviewOptions()) == (name == "Tomas")  # the active one
