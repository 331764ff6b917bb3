"""A 403 is logged as one line, never a traceback (issue 25): every refused request used to write
a full stack to the log."""

from __future__ import annotations

import io
import logging

from django.urls import reverse


def test_carol_refused_an_upload_leaves_one_log_line(client, carol, lantern):
    console = next(h for h in logging.getLogger().handlers if isinstance(h, logging.StreamHandler))
    stream = io.StringIO()
    previous = console.setStream(stream)
    try:
        client.force_login(carol)
        assert client.get(reverse("presets:upload", args=[lantern.id])).status_code == 403
    finally:
        console.setStream(previous)
    lines = stream.getvalue().strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("WARNING django.request: Forbidden")
    assert "Traceback" not in stream.getvalue()
