"""A trivial WSGI application for bench/api_overhead.py: served through `python -m config.serve --app
bench.wsgi_echo:application`, it measures what the web server and the socket cost on their own.

It reads the whole request body and answers `?bytes=N` bytes of JSON (default a few), handed back
to the server as Django hands back an HttpResponse (an iterable of one chunk, with close()), so the
server takes the same path for it as for the API's answers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import parse_qs


class _Answer:
    def __init__(self, body: bytes) -> None:
        self.body = body

    def __iter__(self) -> Iterator[bytes]:
        yield self.body

    def close(self) -> None:
        pass


_bodies: dict[int, bytes] = {}


def application(environ: dict[str, Any], start_response: Callable[..., Any]) -> _Answer:
    length = int(environ.get("CONTENT_LENGTH") or 0)
    if length:
        environ["wsgi.input"].read(length)
    size = int(parse_qs(environ.get("QUERY_STRING", "")).get("bytes", ["12"])[0])
    body = _bodies.get(size)
    if body is None:
        body = _bodies[size] = b'"' + b"x" * max(0, size - 2) + b'"'
    start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
    return _Answer(body)
