"""A recording OpenAI-compatible endpoint on 127.0.0.1: it keeps each chat-completion request body
and answers a short reply (streamed when asked)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "fidelity-model"
REPLY = "Noted."


class Recorder(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, port: int) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.bodies: list[dict[str, Any]] = []
        self.lock = threading.Lock()

    def take(self) -> list[dict[str, Any]]:
        with self.lock:
            bodies, self.bodies = self.bodies, []
        return bodies


class _Handler(BaseHTTPRequestHandler):
    server: Recorder

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        return

    def _send(self, status: int, body: bytes, kind: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            self._send(
                200, json.dumps({"object": "list", "data": [{"id": MODEL, "object": "model"}]}).encode()
            )
        else:
            self._send(404, b"{}")

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send(404, b"{}")
            return
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        with self.server.lock:
            self.server.bodies.append(body)
        if body.get("stream"):
            chunk = {"choices": [{"index": 0, "delta": {"role": "assistant", "content": REPLY}}]}
            done = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
            stream = f"data: {json.dumps(chunk)}\n\ndata: {json.dumps(done)}\n\ndata: [DONE]\n\n"
            self._send(200, stream.encode(), "text/event-stream")
            return
        answer = {
            "object": "chat.completion",
            "model": MODEL,
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": REPLY}, "finish_reason": "stop"}
            ],
        }
        self._send(200, json.dumps(answer).encode())


def start(port: int) -> Recorder:
    server = Recorder(port)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server
