"""Two web server instances (config.serve) on two loopback ports, one PostgreSQL and one Redis: what one instance is
told, the next request to the other knows. Two Celery workers drain one STM backlog together.

Real-services pass only: the instances are real processes, so they share state exactly as web
containers on different machines do (the database and the cache), and nothing else.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from http.cookies import SimpleCookie
from pathlib import Path
from urllib.parse import urlencode

import pytest
from django.db import connection
from django.utils import timezone

from devtools.celery_worker import start_worker, stop_worker, wait_until_ready, worker_database_url
from devtools.web_process import free_port, start_server, stop_server, wait_until_up
from lorebooks import services as lorebook_services
from lorebooks.models import LorebookEntry
from memory.models import DiscordUser, StmEntry
from memory.tasks import expire_stm_entries
from presets import services as preset_services
from presets.models import PresetNode
from servers.models import ApiToken, Channel

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

LOGIN_LIMIT = 4
BUCKETS = (Path(__file__).resolve().parents[2] / "assembly" / "default_buckets.json").read_bytes()


def _preset(colour: str) -> bytes:
    return json.dumps(
        {
            "prompts": [
                {"identifier": "main", "name": "Main", "content": "Lantern rules."},
                {"identifier": colour, "name": colour.title(), "content": f"The lamp burns {colour}."},
                {"identifier": "chatHistory", "name": "Chat History", "marker": True},
            ]
        }
    ).encode()


@dataclass
class Instance:
    name: str
    port: int

    def call(
        self, method: str, path: str, body: bytes | None = None, headers: dict[str, str] | None = None
    ) -> tuple[int, http.client.HTTPMessage, bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            conn.request(method, path, body=body, headers=headers or {})
            response = conn.getresponse()
            return response.status, response.headers, response.read()
        finally:
            conn.close()

    def assemble(self, server_id: int, token: str) -> tuple[int, set[str]]:
        """The status of an assemble request and the preset nodes its answer used."""
        status, _, body = self.call(
            "POST",
            f"/api/v1/servers/{server_id}/assemble",
            BUCKETS,
            {"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        )
        if status != 200:
            return status, set()
        messages = json.loads(body)["messages"]
        return status, {s["identifier"] for m in messages for s in m["sources"] if s["kind"] == "node"}


@dataclass
class Visitor:
    """A browser's cookie jar, carried to whichever instance it asks next (as a load balancer does)."""

    cookies: dict[str, str] = field(default_factory=dict)

    def call(self, instance: Instance, method: str, path: str, form: dict[str, str] | None = None):
        headers = {"Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())}
        body = None
        if form is not None:
            body = urlencode(form).encode()
            headers |= {
                "Content-Type": "application/x-www-form-urlencoded",
                "X-CSRFToken": self.cookies.get("csrftoken", ""),
            }
        status, response_headers, content = instance.call(method, path, body, headers)
        for line in response_headers.get_all("Set-Cookie") or []:
            for name, morsel in SimpleCookie(line).items():
                self.cookies[name] = morsel.value
        return status, response_headers, content

    def upload(self, instance: Instance, path: str, filename: str, content: bytes):
        """POST a file field named `file` (multipart), as the upload form does."""
        boundary = uuid.uuid4().hex
        body = (
            (
                f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{filename}"\r\n'
                f"Content-Type: application/json\r\n\r\n"
            ).encode()
            + content
            + f"\r\n--{boundary}--\r\n".encode()
        )
        headers = {
            "Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items()),
            "Content-Type": f"multipart/form-data; boundary={boundary}",
            "X-CSRFToken": self.cookies.get("csrftoken", ""),
        }
        return instance.call("POST", path, body, headers)

    def sign_in(self, instance: Instance, username: str, password: str = "correct horse battery"):
        _, _, page = self.call(instance, "GET", "/login/")
        token = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1).decode()  # type: ignore[union-attr]
        return self.call(
            instance,
            "POST",
            "/login/",
            {"username": username, "password": password, "csrfmiddlewaretoken": token},
        )


@pytest.fixture(scope="module")
def instances(django_db_setup) -> Iterator[tuple[Instance, Instance]]:
    """Instances A and B: one worker each, on the test database and the test Redis."""
    env = {
        **os.environ,
        "DATABASE_URL": worker_database_url(),
        "DEBUG": "0",
        "SECURE_HTTPS": "0",  # plain-HTTP loopback: cookies must not be Secure-only
        "LOGIN_ATTEMPTS_PER_15_MINUTES": str(LOGIN_LIMIT),
    }
    env.pop("TEST_DATABASE_NAME", None)
    ports = free_port(), free_port()
    servers = [start_server(port, workers=1, env=env) for port in ports]
    try:
        for port in ports:
            wait_until_up(port, time.monotonic() + 60)
        yield Instance("A", ports[0]), Instance("B", ports[1])
    finally:
        for server in servers:
            stop_server(server)


def test_a_session_made_on_one_instance_is_signed_in_on_the_other(instances, alice):
    a, b = instances
    visitor = Visitor()
    status, _, _ = visitor.sign_in(a, "alice")
    assert status == 302
    status, _, page = visitor.call(b, "GET", "/")
    assert status == 200
    assert b"The Lantern Guild" in page
    status, headers, _ = Visitor().call(b, "GET", "/")  # and without the cookie, B asks for a sign-in
    assert status == 302
    assert headers["Location"].startswith("/login/")


def test_a_preset_activated_through_one_instance_is_used_by_the_next_assemble_on_the_other(
    instances, lantern, alice, api_token
):
    a, b = instances
    preset_services.preset_import(server=lantern, raw=_preset("amber"), filename="Amber.json", by=alice)
    cobalt = preset_services.preset_import(
        server=lantern, raw=_preset("cobalt"), filename="Cobalt.json", activate=False, by=alice
    ).preset
    for instance in (a, b):  # both have compiled Amber now
        assert instance.assemble(lantern.id, api_token) == (200, {"main", "amber"})
    visitor = Visitor()
    visitor.sign_in(a, "alice")
    status, _, _ = visitor.call(a, "POST", f"/servers/{lantern.id}/presets/{cobalt.pk}/activate/", {})
    assert status == 302
    assert b.assemble(lantern.id, api_token) == (200, {"main", "cobalt"})


def test_a_node_switched_off_through_one_instance_is_left_out_by_the_next_assemble_on_the_other(
    instances, lantern, alice, api_token
):
    a, b = instances
    amber = preset_services.preset_import(
        server=lantern, raw=_preset("amber"), filename="Amber.json", by=alice
    ).preset
    assert b.assemble(lantern.id, api_token) == (200, {"main", "amber"})
    node = PresetNode.objects.get(preset=amber, identifier="amber")
    visitor = Visitor()
    visitor.sign_in(a, "alice")
    url = f"/servers/{lantern.id}/presets/{amber.pk}/nodes/{node.pk}/toggle/"
    status, _, _ = visitor.call(a, "POST", url, {"enabled": "0"})
    assert status == 302
    assert b.assemble(lantern.id, api_token) == (200, {"main"})


def test_the_bot_sends_request_after_request_over_one_open_connection(instances, lantern, alice, api_token):
    a, _ = instances
    preset_services.preset_import(server=lantern, raw=_preset("amber"), filename="Amber.json", by=alice)
    conn = http.client.HTTPConnection("127.0.0.1", a.port, timeout=30)
    try:
        seen = []
        for _ in range(3):
            conn.request(
                "POST",
                f"/api/v1/servers/{lantern.id}/assemble",
                body=BUCKETS,
                headers={"Authorization": f"Bearer {api_token}", "Content-Type": "application/json"},
            )
            response = conn.getresponse()
            assert response.status == 200
            assert json.loads(response.read())["preset"] == "Amber"
            assert not response.will_close
            seen.append(conn.sock.getsockname())
        assert seen[0] == seen[1] == seen[2]  # the same socket each time: never closed, never reopened
    finally:
        conn.close()


def test_a_token_revoked_through_one_instance_is_refused_by_the_next_request_to_the_other(
    instances, lantern, alice, api_token
):
    a, b = instances
    assert b.assemble(lantern.id, api_token)[0] == 200  # B has the token cached as live
    token = ApiToken.objects.get(server=lantern)
    visitor = Visitor()
    visitor.sign_in(a, "alice")
    status, _, _ = visitor.call(
        a, "POST", f"/servers/{lantern.id}/tokens/{token.pk}/revoke/", {"confirmed": "1"}
    )
    assert status == 302
    assert b.assemble(lantern.id, api_token)[0] == 401


def test_an_upload_that_clashed_on_one_instance_is_finished_on_the_other_without_the_file(
    instances, lantern, alice, api_token
):
    a, b = instances
    preset_services.preset_import(server=lantern, raw=_preset("amber"), filename="Amber.json", by=alice)
    visitor = Visitor()
    visitor.sign_in(a, "alice")
    upload_url = f"/servers/{lantern.id}/presets/upload/"
    status, _, page = visitor.upload(a, upload_url, "Amber.json", _preset("ember"))
    assert status == 409
    pending = re.search(rb'name="pending" value="([^"]+)"', page).group(1).decode()  # type: ignore[union-attr]
    status, _, page = visitor.call(b, "POST", upload_url, {"resolve": "replace", "pending": pending})
    assert status == 200 and b"ember" in page  # B shows what the replace would change, from A's kept copy
    confirm = {"resolve": "replace", "pending": pending, "confirm": "1"}
    status, _, _ = visitor.call(b, "POST", upload_url, confirm)
    assert status == 302
    assert b.assemble(lantern.id, api_token) == (200, {"main", "ember"})


def _world_info_uids(instance: Instance, server_id: int, token: str) -> set[int]:
    """The World Info entries an assemble request on `instance` activated."""
    status, _, body = instance.call(
        "POST",
        f"/api/v1/servers/{server_id}/assemble",
        BUCKETS,
        {"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    assert status == 200
    return {entry["uid"] for entry in json.loads(body)["world_info"]["activated"]}


def test_a_lorebook_entry_switched_off_through_one_instance_is_not_activated_by_the_other(
    instances, lantern, alice, api_token
):
    a, b = instances
    book = {"entries": {"7": {"uid": 7, "key": [], "content": "The lamp is old.", "constant": True}}}
    lorebook = lorebook_services.lorebook_import(
        server=lantern, raw=json.dumps(book).encode(), filename="Harbour.json", by=alice
    ).lorebook
    assert _world_info_uids(b, lantern.id, api_token) == {7}  # B has compiled the book
    entry = LorebookEntry.objects.get(lorebook=lorebook, uid=7)
    visitor = Visitor()
    visitor.sign_in(a, "alice")
    url = f"/servers/{lantern.id}/lorebooks/{lorebook.pk}/entries/{entry.pk}/toggle/"
    status, _, _ = visitor.call(a, "POST", url, {"enabled": "0"})
    assert status == 302
    assert _world_info_uids(b, lantern.id, api_token) == set()


def test_failed_sign_ins_on_both_instances_add_up_to_one_lockout(instances, alice):
    a, b = instances
    visitor = Visitor()
    for instance in (a, b) * (LOGIN_LIMIT // 2):  # half the limit on each: neither alone would lock
        status, _, page = visitor.sign_in(instance, "alice", password="not the password")
        assert status == 200
        assert b"Too many failed sign-ins" not in page
    status, _, page = visitor.sign_in(b, "alice")
    assert status == 200  # the right password, refused
    assert b"Too many failed sign-ins" in page
    assert "sessionid" not in visitor.cookies


# -- two Celery workers, one backlog ---------------------------------------------------------------

EXPIRED = 30_000
LIVE = 500


def _fill_backlog(lantern) -> None:
    channel = Channel.objects.create(discord_id=990_001, owner=lantern, server=lantern, name="tavern")
    user = DiscordUser.objects.create(id=990_002)
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO memory_stmentry (owner_id, server_id, channel_id, user_id, lineage, messages, summary, "
            "updated_at) SELECT %s, %s, %s, %s, (CASE WHEN g < %s THEN 'old-' ELSE 'live-' END) || g, '[]'::jsonb, '', "
            "CASE WHEN g < %s THEN now() - interval '30 hours' ELSE now() - interval '1 hour' END "
            "FROM generate_series(0, %s - 1) g",
            [lantern.id, lantern.id, channel.id, user.id, EXPIRED, EXPIRED, EXPIRED + LIVE],
        )


def _refresh_while_expiring(stop: threading.Event, refreshed: set[int], candidates: list[int]) -> None:
    """Bring expired entries back to life one by one, as the bot does when a channel speaks again."""
    try:
        for entry_id in candidates:
            if stop.is_set():
                return
            if StmEntry.objects.filter(pk=entry_id).update(updated_at=timezone.now()):
                refreshed.add(entry_id)
    finally:
        connection.close()


def test_two_workers_drain_one_backlog_together_and_never_delete_a_live_entry(lantern):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL")
    _fill_backlog(lantern)
    live = set(StmEntry.objects.filter(lineage__startswith="live-").values_list("id", flat=True))
    old = list(
        StmEntry.objects.filter(lineage__startswith="old-").order_by("-id").values_list("id", flat=True)
    )
    queue = f"stm-scale-{uuid.uuid4().hex[:8]}"
    names = [f"{queue}-{letter}@tavernkeep" for letter in "ab"]
    workers = [start_worker(queue, capture_output=True, name=name, loglevel="info") for name in names]
    refreshed: set[int] = set()
    stop = threading.Event()
    refresher = threading.Thread(target=_refresh_while_expiring, args=(stop, refreshed, old[::50]))
    try:
        wait_until_ready(*names)
        expire_stm_entries.apply_async(kwargs={"helpers": 1, "batch_size": 500}, queue=queue)
        refresher.start()
        deadline = time.monotonic() + 120
        while (
            time.monotonic() < deadline
            and StmEntry.objects.filter(
                lineage__startswith="old-", updated_at__lt=timezone.now() - timedelta(hours=12)
            ).exists()
        ):
            time.sleep(0.2)
    finally:
        stop.set()
        if refresher.is_alive():
            refresher.join(timeout=30)
        outputs = [stop_worker(worker) for worker in workers]
        connection.close()

    remaining = set(StmEntry.objects.values_list("id", flat=True))
    assert live <= remaining  # nothing live was deleted…
    assert refreshed <= remaining  # …including entries brought back to life during the run
    assert remaining == live | refreshed  # and every expired entry is gone
    shares = [
        sum(int(n) for n in re.findall(r"expired (\d+) short-term memory entries", output))
        for output in outputs
    ]
    assert all(share > 0 for share in shares), outputs  # both workers took part
    assert sum(shares) == EXPIRED - len(refreshed)  # no entry was deleted twice
