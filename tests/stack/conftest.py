"""The compose stack test starts every container of docker-compose.yml (minutes of building on a
fresh machine): it is collected only when COMPOSE_STACK=1, which `.ci/run` sets in its own step,
once, after both passes of the suite."""

from __future__ import annotations

import os

collect_ignore_glob = [] if os.environ.get("COMPOSE_STACK") == "1" else ["test_*.py"]
