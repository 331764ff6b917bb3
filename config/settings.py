"""Settings, every one from the environment.

With no DATABASE_URL / REDIS_URL the project runs embedded: SQLite, a local-memory cache and
Celery tasks executed eagerly in-process. Point DATABASE_URL at PostgreSQL and REDIS_URL at Redis
for production-like use.
"""

import os
from pathlib import Path
from typing import Any

import dj_database_url

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, *, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_int(name: str, *, default: int) -> int:
    value = os.environ.get(name, "").strip()
    return int(value) if value else default


DEBUG = env_bool("DEBUG", default=False)
SECRET_KEY = os.environ.get("SECRET_KEY") or "dev-only-insecure-key-set-SECRET_KEY-in-production"
ALLOWED_HOSTS = [
    h.strip() for h in os.environ.get("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1],testserver").split(",")
]
CSRF_TRUSTED_ORIGINS = [o.strip() for o in os.environ.get("CSRF_TRUSTED_ORIGINS", "").split(",") if o.strip()]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django_htmx",
    "template_partials",
    "servers",
    "presets",
    "lorebooks",
    "memory",
    "conversations",
    "characters",
    "groups",
    "assembly",
    "regex_scripts",
]

MIDDLEWARE = [
    "config.middleware.HealthCheckMiddleware",  # first: answers /healthz for any Host header
    "config.middleware.ApiJsonErrorsMiddleware",  # outside the rest: sees every error /api/ answers
    "django.middleware.security.SecurityMiddleware",
    "config.middleware.SecurityHeadersMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "core.client_rate.ClientRateMiddleware",  # before the session is read: a flood's 429 costs little
    "config.middleware.MaintenanceMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "config.middleware.BodySizeLimitMiddleware",  # before CSRF, which reads the whole form
    "config.middleware.UnstorableTextMiddleware",  # after the size check: NUL in a form is a 400
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "core.client_rate.AccountRateMiddleware",  # one account's rate across its sessions
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "config.middleware.HtmxMessagesMiddleware",  # after MessageMiddleware: its answer is seen first
    "core.fairness.ServerShareMiddleware",  # each server's share of this process (issue 35)
]

# The bot's API (/api/...) authenticates with a token and never uses a session, a CSRF token, a
# message or htmx: config/wsgi.py serves it through these only (host check, security headers,
# body limit, the database-down answer), in MIDDLEWARE's order.
API_MIDDLEWARE = [
    name
    for name in MIDDLEWARE
    if name
    in {
        "config.middleware.ApiJsonErrorsMiddleware",
        "django.middleware.security.SecurityMiddleware",
        "config.middleware.SecurityHeadersMiddleware",
        "config.middleware.MaintenanceMiddleware",
        "django.middleware.common.CommonMiddleware",
        "config.middleware.BodySizeLimitMiddleware",
        "config.middleware.UnstorableTextMiddleware",
        "core.fairness.ServerShareMiddleware",
    }
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "builtins": ["template_partials.templatetags.partials"],
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

_sqlite_default = f"sqlite:///{BASE_DIR / 'var' / 'tavernkeep.sqlite3'}"
DATABASES = {
    "default": dj_database_url.parse(os.environ.get("DATABASE_URL") or _sqlite_default, conn_max_age=60)
}
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    Path(DATABASES["default"]["NAME"]).parent.mkdir(parents=True, exist_ok=True)
    DATABASES["default"]["OPTIONS"] = {"timeout": 20}
    DATABASES["default"]["CONN_MAX_AGE"] = 0
else:
    DATABASES["default"].setdefault("OPTIONS", {})["connect_timeout"] = env_int(
        "DATABASE_CONNECT_TIMEOUT", default=3
    )
DATABASES["default"]["TEST"] = {"NAME": os.environ.get("TEST_DATABASE_NAME") or None}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = os.environ.get("REDIS_URL", "").strip()
CACHES: dict[str, dict[str, Any]]
if REDIS_URL:
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    CACHES = {
        "default": {
            # Django's Redis cache, with its redis-py client kept instead of built per call
            "BACKEND": "core.redis_cache.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": os.environ.get("CACHE_KEY_PREFIX", "tk"),
            "OPTIONS": {
                "socket_connect_timeout": 1,
                "socket_timeout": 1,
                # one try per call: redis-py's default retries turned a 1 s timeout into 4 s
                "retry": Retry(NoBackoff(), 0),
                # data only, never pickle: a value planted in Redis must not run code here
                "serializer": "core.cache_codec.MsgpackSerializer",
            },
        }
    }
    CELERY_BROKER_URL = REDIS_URL
    CELERY_TASK_ALWAYS_EAGER = False
    # a request that queues a task waits at most about a second for a hung broker
    CELERY_BROKER_TRANSPORT_OPTIONS = {"socket_timeout": 1, "socket_connect_timeout": 1, "max_retries": 0}
else:
    CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "tavernkeep"}
    }
    CELERY_BROKER_URL = "memory://"
    CELERY_TASK_ALWAYS_EAGER = True
# A server's share of a web process's CPU (core/fairness.py): CPU-seconds earned per second, and
# the most a server may have saved up.
SERVER_CPU_SHARE = float(os.environ.get("SERVER_CPU_SHARE") or 0.5)
SERVER_CPU_BURST_SECONDS = float(os.environ.get("SERVER_CPU_BURST_SECONDS") or 1.0)
# The meter refuses a server only while another asked the same process within this many seconds:
# a server alone is served (docs/reliability.md#5d-hostile-neighbours-round-three-issue-50).
SERVER_CPU_NEIGHBOUR_SECONDS = float(os.environ.get("SERVER_CPU_NEIGHBOUR_SECONDS") or 2.0)
# Each signed-in browser's page requests per process (core/client_rate.py): a burst, then a rate.
CLIENT_BURST = float(os.environ.get("CLIENT_BURST") or 120)
CLIENT_REQUESTS_PER_SECOND = float(os.environ.get("CLIENT_REQUESTS_PER_SECOND") or 30)
# Dashboard sessions one account may hold at once (servers/sessions.py): a new sign-in ends the oldest.
SESSIONS_PER_ACCOUNT = env_int("SESSIONS_PER_ACCOUNT", default=5)
# One account's page requests per process, across its sessions (core/client_rate.py).
ACCOUNT_BURST = float(os.environ.get("ACCOUNT_BURST") or 240)
ACCOUNT_REQUESTS_PER_SECOND = float(os.environ.get("ACCOUNT_REQUESTS_PER_SECOND") or 60)
# The API's requests refused for their token, per client address and process (servers/api_auth.py):
# past a burst of API_REFUSALS_BURST, refilling at API_REFUSALS_PER_MINUTE, the address is answered
# 429 before any token is looked up. A bot whose token was accepted lately is not held back.
API_REFUSALS_BURST = env_int("API_REFUSALS_BURST", default=60)
API_REFUSALS_PER_MINUTE = env_int("API_REFUSALS_PER_MINUTE", default=30)
# Triggers (a member asking another to answer, docs/groups.md) per channel and minute, across processes.
GROUP_TRIGGERS_PER_MINUTE = env_int("GROUP_TRIGGERS_PER_MINUTE", default=20)
# Heavy page work (the preview's render, the regex tester, a preset's token total) runs in this many
# niced child processes per web process (core/offload.py), each call stopped after OFFLOAD_WALL_SECONDS.
# Off (inline) without REDIS_URL: a child's local-memory cache would not see the web process's writes.
OFFLOAD_WORKERS = max(0, env_int("OFFLOAD_WORKERS", default=2 if REDIS_URL else 0))
OFFLOAD_WALL_SECONDS = float(os.environ.get("OFFLOAD_WALL_SECONDS") or 10)
OFFLOAD_NICE = env_int("OFFLOAD_NICE", default=10)
# Run by each new child before it takes work (the token tables, the views, the templates): "" for none.
OFFLOAD_WARM_UP = os.environ.get("OFFLOAD_WARM_UP", "assembly.warmup.warm_child")
# Servers take turns for the children: one holds at most OFFLOAD_PER_SERVER of them (never all), and
# at most OFFLOAD_WAITING_PER_SERVER of its calls wait; its next is refused at once.
OFFLOAD_PER_SERVER = env_int("OFFLOAD_PER_SERVER", default=1)
OFFLOAD_WAITING_PER_SERVER = env_int("OFFLOAD_WAITING_PER_SERVER", default=1)
# Each web process listens for PostgreSQL's notifications of generation bumps (servers/stamp_listener.py).
CACHE_STAMP_LISTENER = env_bool("CACHE_STAMP_LISTENER", default=True)
CACHE_BREAKER_SECONDS = float(os.environ.get("CACHE_BREAKER_SECONDS") or 5)  # core/resilient_cache.py
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BEAT_SCHEDULE = {
    "expire-short-term-memory": {
        "task": "memory.tasks.expire_stm_entries",
        "schedule": env_int("STM_EXPIRY_INTERVAL_SECONDS", default=600),
    },
    "expire-channel-messages": {
        "task": "conversations.tasks.expire_channel_messages",
        "schedule": env_int("CHANNEL_EXPIRY_INTERVAL_SECONDS", default=600),
    },
}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "servers:home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATIC_ROOT.mkdir(exist_ok=True)  # whitenoise warns about a missing folder
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = True

# Uploads are bounded before they are read (docs/import.md#input-checks).
PRESET_MAX_BYTES = env_int("PRESET_MAX_BYTES", default=2 * 1024 * 1024)
# An upload that stopped at a name clash is kept this long for its "Replace" / "Keep both" buttons.
PRESET_PENDING_UPLOAD_SECONDS = env_int("PRESET_PENDING_UPLOAD_SECONDS", default=15 * 60)
LOREBOOK_MAX_BYTES = env_int("LOREBOOK_MAX_BYTES", default=5 * 1024 * 1024)
LOREBOOK_MAX_ENTRIES = env_int("LOREBOOK_MAX_ENTRIES", default=10_000)
DATA_UPLOAD_MAX_MEMORY_SIZE = PRESET_MAX_BYTES + 256 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = PRESET_MAX_BYTES + 256 * 1024
# Any request body, unless its view declares less (config.middleware.BodySizeLimitMiddleware);
# the largest upload is a sample chat file (8 MiB).
MAX_REQUEST_BYTES = env_int("MAX_REQUEST_BYTES", default=8 * 1024 * 1024 + 256 * 1024)

ST_PRESET_CACHE_TTL_MINUTES = env_int("ST_PRESET_CACHE_TTL_MINUTES", default=10)
# Compiled active presets each web process keeps (least recently used go first): about 1 MiB each
# for an average corpus preset (bench/capacity.py, docs/scaling.md).
ST_PRESET_LOCAL_ENTRIES = max(1, env_int("ST_PRESET_LOCAL_ENTRIES", default=64))
# How often each process checks the shared cache's generations against the database's own stamps
# (servers.generational_cache): the longest a Redis restored from an old snapshot can be believed.
CACHE_STAMP_CHECK_SECONDS = float(os.environ.get("CACHE_STAMP_CHECK_SECONDS", "5"))
SHORT_TERM_MEMORY_TTL_HOURS = env_int("SHORT_TERM_MEMORY_TTL_HOURS", default=12)
SHORT_TERM_MEMORY_SUMMARY_TTL_HOURS = env_int("SHORT_TERM_MEMORY_SUMMARY_TTL_HOURS", default=24)
SHORT_TERM_MEMORY_MAX_OTHER_CHANNELS = env_int("SHORT_TERM_MEMORY_MAX_OTHER_CHANNELS", default=3)
SHORT_TERM_MEMORY_MIN_MESSAGES_FOR_SUMMARY = env_int("SHORT_TERM_MEMORY_MIN_MESSAGES_FOR_SUMMARY", default=6)
# How many expiry tasks drain a backlog at once (memory.tasks): about the number of worker processes.
STM_EXPIRY_PARALLEL = max(1, env_int("STM_EXPIRY_PARALLEL", default=1))

# Assemble/clean API requests one server may run at once in one web process; past it: 429 + Retry-After.
SERVER_CONCURRENT_WORK_PER_PROCESS = env_int("SERVER_CONCURRENT_WORK_PER_PROCESS", default=2)
# CPU time one request's regex scripts may take in all; the rest are skipped with a warning.
REGEX_REQUEST_BUDGET_MS = env_int("REGEX_REQUEST_BUDGET_MS", default=250)
LOGIN_ATTEMPTS_PER_15_MINUTES = env_int(
    "LOGIN_ATTEMPTS_PER_15_MINUTES", default=10
)  # per (username, address)
LOGIN_ATTEMPTS_PER_ADDRESS_PER_15_MINUTES = env_int("LOGIN_ATTEMPTS_PER_ADDRESS_PER_15_MINUTES", default=50)

# Cookies and transport security: strict whenever DEBUG is off.
SECURE_HTTPS = env_bool("SECURE_HTTPS", default=not DEBUG)
SESSION_COOKIE_SECURE = SECURE_HTTPS
CSRF_COOKIE_SECURE = SECURE_HTTPS
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Lax"
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", default=0 if DEBUG else 31536000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = not DEBUG
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
# Behind our reverse proxy (docker-compose.yml): the scheme and the client's address come from the
# X-Forwarded-* headers it sets (core.login_throttle reads the address).
BEHIND_PROXY = env_bool("BEHIND_PROXY", default=False)
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if BEHIND_PROXY else None
X_FRAME_OPTIONS = "DENY"
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; "
    "frame-ancestors 'none'; form-action 'self'"
)

# One handler, on the root logger: Django's own loggers (django, django.request, django.server)
# keep their levels but print through it, so each line appears once whatever DEBUG is.
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(levelname)s %(name)s: %(message)s"}},
    "filters": {"forbidden_on_one_line": {"()": "config.logging_filters.ForbiddenOnOneLine"}},
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": "plain",
            "filters": ["forbidden_on_one_line"],
        }
    },
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "WARNING")},
    "loggers": {
        "django": {"handlers": [], "level": "INFO", "propagate": True},
        "django.server": {"handlers": [], "level": "INFO", "propagate": True},
        # INFO: where each offloaded call's time went (core/offload.py; bench/neighbours_load.py reads it)
        "tavernkeep.offload": {"level": os.environ.get("OFFLOAD_LOG_LEVEL", "WARNING")},
    },
}
