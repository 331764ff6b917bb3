# Two commands matter: `make run` and `make test` (see README.md); `make dev` for development.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8000

.PHONY: run dev test test-fast fuzz setup browser lint format bench worker beat clean fidelity fidelity-check compose-up compose-down

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

setup: $(VENV)/.installed

# Debian's Chromium for the browser tests (Playwright never downloads a browser here).
browser:
	@command -v chromium >/dev/null 2>&1 || { \
		echo "Installing Debian's chromium for the browser tests…"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

# The demo as production serves it: DEBUG off (the project's own 404/403/500 pages), config.serve (granian),
# static files from WhiteNoise. Plain http on 127.0.0.1, so cookies drop the Secure flag (SECURE_HTTPS=0).
# One worker process: without REDIS_URL the cache lives in that process.
DEMO_ENV := DEBUG=0 SECURE_HTTPS=0

run: setup
	@$(BIN)/python -m config.serve --bind 127.0.0.1:$(PORT) --check-bind
	$(DEMO_ENV) $(BIN)/python manage.py migrate --noinput
	$(DEMO_ENV) $(BIN)/python manage.py collectstatic --noinput --verbosity 0
	$(DEMO_ENV) $(BIN)/python manage.py demo_data
	@echo "Open http://127.0.0.1:$(PORT)/ and sign in as alice / tavern-demo"
	$(DEMO_ENV) $(BIN)/python -m config.serve --bind 127.0.0.1:$(PORT) --workers 1 --threads 4 --access-log

# Development: DEBUG on (Django's debug pages), runserver reloading on every change.
dev: setup
	DEBUG=1 $(BIN)/python manage.py migrate --noinput
	DEBUG=1 $(BIN)/python manage.py demo_data
	@echo "Open http://127.0.0.1:$(PORT)/ and sign in as alice / tavern-demo"
	DEBUG=1 $(BIN)/python manage.py runserver 127.0.0.1:$(PORT)

# Embedded (no REDIS_URL) the tests are spread over the CPUs: each pytest-xdist worker has its own
# SQLite test database and local-memory cache. Against the real Redis every test shares one database
# (and empties it), so that run stays in one process. TEST_WORKERS=0 runs in one process anyway.
TEST_WORKERS ?= $(if $(REDIS_URL),0,auto)

test: setup browser
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/python manage.py makemigrations --check --dry-run
	$(BIN)/pytest -n $(TEST_WORKERS)

# The fast part while working: the engine's tests (no database, no cache) and the checks of the
# whole project, in about a minute of CPU. `make test` before a commit.
test-fast: setup
	$(BIN)/pytest -n $(TEST_WORKERS) -q tests/engine tests/test_architecture.py tests/test_docs.py

# The long search: every property test at its full example count, then 10,000 examples per parser.
fuzz: setup
	FUZZ=long $(BIN)/pytest -n $(TEST_WORKERS) -q tests/engine
	$(BIN)/python bench/fuzz.py

# The compose stack (docker-compose.yml) under Docker or podman, from nothing to a served page: builds the
# images (from a local Debian base when Docker Hub cannot be reached), starts every service, waits
# for health and prints the URL. `make compose-down` keeps the data; `make compose-down VOLUMES=1` drops it.
compose-up:
	deploy/stack.sh up

compose-down:
	deploy/stack.sh down $(if $(VOLUMES),-v)

lint:
	$(BIN)/ruff check . && $(BIN)/ruff format --check . && $(BIN)/mypy

format:
	$(BIN)/ruff format . && $(BIN)/ruff check --fix .

# The differential harness against SillyTavern 1.18 (docs/fidelity.md): installs it from the npm
# registry into ~/.cache/tavernkeep (never the repository), captures every case afresh, compares.
# CASES=a,b limits the run. fidelity-check compares with the captures kept in fidelity/expected/.
fidelity: setup browser
	$(BIN)/python -u -m fidelity run $(if $(CASES),--cases $(CASES))

fidelity-check: setup
	$(BIN)/python -u -m fidelity check $(if $(CASES),--cases $(CASES))

bench: setup
	$(BIN)/python bench/run_all.py

worker: setup
	$(BIN)/celery -A config worker --loglevel=info

beat: setup
	$(BIN)/celery -A config beat --loglevel=info

clean:
	rm -rf $(VENV) var staticfiles .pytest_cache .mypy_cache
