"""The example bot's tests: one httpx client that reaches the real app in process."""

from __future__ import annotations

import httpx
import pytest
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections


@pytest.fixture
def http():
    """One httpx client: Tavernkeep at http://testserver (the real app, in process), the rest on the wire.
    Like Django's test client, requests keep the test's database connection open."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    client = httpx.Client(mounts={"http://testserver": httpx.WSGITransport(app=get_wsgi_application())})
    yield client
    client.close()
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)
