"""Throwaway infrastructure for fault tests: a second redis-server and a cuttable TCP proxy.

The suite's own PostgreSQL and Redis are never stopped; faults are made on copies or on a proxy in
front of them, all on loopback.
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator

import pytest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ThrowawayRedis:
    """A redis-server of our own on a free loopback port, which a test may stop."""

    def __init__(self) -> None:
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix="tk-redis-")
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            pytest.skip("redis-server is not installed")
        self.process = subprocess.Popen(
            [
                binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                self.dir,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("throwaway redis-server did not start")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)


class CuttableProxy:
    """A loopback TCP proxy to a target; `cut()` drops every connection and refuses new ones."""

    def __init__(self, target_host: str, target_port: int) -> None:
        self.target = (target_host, target_port)
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.port = self.listener.getsockname()[1]
        self.open = True
        self.sockets: list[socket.socket] = []
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if not self.open:
                client.close()
                continue
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                continue
            with self.lock:
                self.sockets += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        try:
            while chunk := source.recv(65536):
                sink.sendall(chunk)
        except OSError:
            pass
        finally:
            for s in (source, sink):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)

    def cut(self) -> None:
        self.open = False
        with self.lock:
            for s in self.sockets:
                try:
                    s.shutdown(socket.SHUT_RDWR)
                    s.close()
                except OSError:
                    pass
            self.sockets.clear()

    def close(self) -> None:
        self.cut()
        self.listener.close()


@pytest.fixture
def throwaway_redis() -> Iterator[ThrowawayRedis]:
    redis = ThrowawayRedis()
    redis.start()
    yield redis
    redis.stop()
    shutil.rmtree(redis.dir, ignore_errors=True)


# -- helpers for the fault tests (hardening) -----------------------------------------------------------

DEFAULT_BUCKETS = (
    __import__("pathlib").Path(__file__).resolve().parents[2] / "assembly" / "default_buckets.json"
)


def assemble(client, server_id: int, token: str):
    """POST the default bucket document to the assemble API; the response."""
    from django.urls import reverse

    return client.post(
        reverse("assembly:api-assemble", args=[server_id]),
        data=DEFAULT_BUCKETS.read_text(),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )


def node_sources(response) -> set[str]:
    """Identifiers of the preset nodes an assemble answer used."""
    return {
        source["identifier"]
        for message in response.json()["messages"]
        for source in message["sources"]
        if source["kind"] == "node"
    }


FAULT_PRESET = (
    b'{"prompts": [{"identifier": "main", "name": "Main", "content": "Lantern rules."},'
    b' {"identifier": "lamp", "name": "Lamp", "content": "Keep the lamp lit."},'
    b' {"identifier": "chatHistory", "name": "Chat History", "marker": true}]}'
)


@pytest.fixture
def lamp_preset(lantern, alice):
    """An active preset for the Lantern Guild whose nodes `main` and `lamp` show in every assembly."""
    from presets import cache as preset_cache
    from presets import services

    preset_cache.clear_local()
    return services.preset_import(server=lantern, raw=FAULT_PRESET, filename="Lamp.json", by=alice).preset
