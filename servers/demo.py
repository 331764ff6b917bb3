"""The demo content other apps bring to `manage.py demo_data`: each app adds its `populate(server)`
from its `AppConfig.ready()`, and the command calls them for the Lantern Guild in `order` (presets
10, cards 15, memory 20, groups 25, assembly 30), after the servers and personas it makes itself."""

from __future__ import annotations

from collections.abc import Callable

from core.hooks import Hook

from .models import Server

DEMO_DATA: Hook[Callable[[Server], None]] = Hook("demo data")
