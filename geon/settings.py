"""Django settings for geon, read from the environment.

Every variable goes through one of the small ``env_*`` helpers below, which fail loudly and name
the variable, the bad value and what would be valid. The README has the table of variables.

>>> env_bool("GEON_DEBUG", False, environ={"GEON_DEBUG": "yes"})
True
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent

_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off", "")
_LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


def env_str(name: str, default: str, *, environ: Mapping[str, str] = os.environ) -> str:
    """The variable's value with surrounding blanks removed, or ``default`` when it is unset."""
    return environ.get(name, default).strip()


def env_bool(name: str, default: bool, *, environ: Mapping[str, str] = os.environ) -> bool:
    """A yes/no variable: ``1 true yes on`` or ``0 false no off`` (any case; empty means no)."""
    if name not in environ:
        return default
    value = environ[name].strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(
        f'{name}="{environ[name]}" is not a yes/no value; expected one of 1, true, yes, on, '
        "0, false, no, off"
    )


def env_int(
    name: str, default: int, *, minimum: int = 0, environ: Mapping[str, str] = os.environ
) -> int:
    """A whole number not below ``minimum``."""
    if name not in environ:
        return default
    raw = environ[name].strip()
    try:
        value = int(raw)
    except ValueError:
        value = minimum - 1
    if value < minimum:
        raise ImproperlyConfigured(
            f'{name}="{environ[name]}" is not a whole number >= {minimum}; expected e.g. '
            f'{name}="{max(default, minimum)}"'
        )
    return value


def env_list(
    name: str, default: list[str], *, environ: Mapping[str, str] = os.environ
) -> list[str]:
    """A comma-separated list; blanks around items are dropped, empty items are an error."""
    if name not in environ:
        return list(default)
    items = [item.strip() for item in environ[name].split(",")]
    if any(not item for item in items):
        raise ImproperlyConfigured(
            f'{name}="{environ[name]}" has an empty item; expected comma-separated values such '
            f'as "example.org,www.example.org"'
        )
    return items


def env_choice(
    name: str, default: str, choices: tuple[str, ...], *, environ: Mapping[str, str] = os.environ
) -> str:
    """One of ``choices`` (compared without case)."""
    value = environ.get(name, default).strip().upper()
    if value not in {c.upper() for c in choices}:
        raise ImproperlyConfigured(
            f'{name}="{environ[name]}" is not valid; expected one of {", ".join(choices)}'
        )
    return value


def env_url(
    name: str, schemes: tuple[str, ...], *, environ: Mapping[str, str] = os.environ
) -> str | None:
    """A URL whose scheme is one of ``schemes``, or None when the variable is unset or empty."""
    raw = environ.get(name, "").strip()
    if not raw:
        return None
    parts = urlsplit(raw)
    if parts.scheme not in schemes or not (parts.netloc or parts.path):
        expected = ", ".join(f"{s}://..." for s in schemes)
        raise ImproperlyConfigured(f'{name}="{raw}" is not a valid URL; expected one of {expected}')
    return raw


# --- core -----------------------------------------------------------------------------------

DEBUG = env_bool("GEON_DEBUG", False)

SECRET_KEY = env_str("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured(
            "SECRET_KEY is not set; set it to a long random string (make run keeps one in "
            "GEON_DATA_DIR/secret_key), or set GEON_DEBUG=1 for a local debugging session"
        )
    SECRET_KEY = "geon-debug-only-insecure-key"  # only ever used with DEBUG on

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

DATA_DIR = Path(env_str("GEON_DATA_DIR", str(BASE_DIR / "data"))).resolve()
DATA_DIR.mkdir(parents=True, exist_ok=True)

# Behind a TLS-terminating proxy: secure cookies, HSTS, and trust the proxy's protocol header.
HTTPS = env_bool("GEON_HTTPS", False)
SESSION_COOKIE_SECURE = HTTPS
CSRF_COOKIE_SECURE = HTTPS
SECURE_SSL_REDIRECT = HTTPS
SECURE_HSTS_SECONDS = 31_536_000 if HTTPS else 0
SECURE_HSTS_INCLUDE_SUBDOMAINS = HTTPS
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if HTTPS else None
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
SESSION_COOKIE_HTTPONLY = True
# Scripts cannot read the CSRF cookie: pages hand their token to the editor in the form field
# {% csrf_token %} writes, which the bundle reads and sends as X-CSRFToken.
CSRF_COOKIE_HTTPONLY = True
# A CSRF failure under /api/ answers the JSON envelope (403 csrf_failed), elsewhere Django's page.
CSRF_FAILURE_VIEW = "geon.envelope.csrf_failure"
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
# Content-Security-Policy of every answer (geon.accounts.security; Django 6's SECURE_CSP shape,
# so its own middleware can take over): scripts only from this site, no inline script or event
# handler, no plugins, no framing. Inline styles stay allowed: the pages' <style> blocks and the
# editor's computed styles. The API docs page lives under it too (Swagger UI from static files).
SECURE_CSP: dict[str, list[str]] = {
    "default-src": ["'self'"],
    "script-src": ["'self'"],
    "style-src": ["'self'", "'unsafe-inline'"],
    "img-src": ["'self'", "data:", "blob:"],
    "connect-src": ["'self'"],
    "worker-src": ["'self'"],
    "object-src": ["'none'"],
    "base-uri": ["'none'"],
    "form-action": ["'self'"],
    "frame-ancestors": ["'none'"],
}

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    # django-ninja's static files: Swagger UI for /api/v1/docs, served from this site (no CDN).
    "ninja",
    # Accounts (geon/accounts/README.md): sign-up, email verification, password reset.
    "allauth",
    "allauth.account",
    "geon.accounts",
    "geon.graphs",
    "geon.runs",
    "geon.reviews",
    "geon.learn",
]

MIDDLEWARE = [
    # Outermost: error answers under /api/ become the JSON envelope, whoever made them.
    "geon.envelope.ApiErrorMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "geon.accounts.security.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "allauth.account.middleware.AccountMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "geon.urls"
ASGI_APPLICATION = "geon.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- database -------------------------------------------------------------------------------

DATABASE_URL = env_url("DATABASE_URL", ("postgres", "postgresql", "sqlite"))
if DATABASE_URL:
    _database: dict[str, Any] = dict(dj_database_url.parse(DATABASE_URL, conn_max_age=0))
else:
    _database = {"ENGINE": "django.db.backends.sqlite3", "NAME": DATA_DIR / "geon.sqlite3"}
if _database["ENGINE"] == "django.db.backends.sqlite3":
    # The web server and the worker are separate processes sharing one file: WAL lets readers
    # go on while the worker writes, IMMEDIATE transactions avoid lock-upgrade deadlocks.
    _database["OPTIONS"] = {
        "timeout": 20,
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
    _database["CONN_MAX_AGE"] = 0
    _database.setdefault("TEST", {})["NAME"] = str(DATA_DIR / "test.sqlite3")
if _database["ENGINE"] == "django.db.backends.postgresql":
    # Under ASGI, Django advises a driver pool rather than persistent connections: each database
    # call borrows an open connection instead of connecting anew (10-20 ms each on loopback).
    # Celery (>= 5.6) closes the pool a prefork worker inherits. With health checks the pool
    # checks a connection before lending it (one round trip), so connections PostgreSQL dropped
    # while it restarted, or that an administrator ended, are replaced instead of failing a
    # request (issue 14, item 5).
    _database.setdefault("OPTIONS", {})["pool"] = {"min_size": 2, "max_size": 16, "timeout": 10}
    _database["CONN_HEALTH_CHECKS"] = True
DATABASES = {"default": _database}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Redis: channel layer and Celery broker -------------------------------------------------

REDIS_URL = env_url("REDIS_URL", ("redis", "rediss", "unix"))

# A websocket consumer waits on the channel layer with a blocking BZPOPMIN of 5 s
# (channels_redis's brpop_timeout); redis-py 8 reads every reply with a 5 s socket timeout by
# default, so an idle consumer's wait could time out first and tear its websocket down
# (django/channels_redis#422). The layer's connections read for longer than the pop blocks,
# and still give up on a Redis that stopped answering.
CHANNEL_LAYER_SOCKET_TIMEOUT = 15

if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            # channels_redis's layer; its receive ends when cancelled (geon.channel_layer)
            "BACKEND": "geon.channel_layer.CancellableRedisChannelLayer",
            "CONFIG": {
                "hosts": [{"address": REDIS_URL, "socket_timeout": CHANNEL_LAYER_SOCKET_TIMEOUT}]
            },
        }
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

# With the in-memory channel layer, events published by the worker process cannot reach the web
# process, so websocket consumers poll the Run rows instead (see geon.graphs.consumers).
GEON_RUN_EVENTS_BY_POLLING = REDIS_URL is None
GEON_RUN_POLL_SECONDS = 0.25

# Websocket limits: one frame's size, ops in one edit, and edits per second per connection
# (a token bucket that holds GEON_WS_EDIT_BURST edits).
GEON_WS_MAX_MESSAGE_BYTES = env_int("GEON_WS_MAX_MESSAGE_BYTES", 1_048_576, minimum=1024)
GEON_MAX_OPS_PER_EDIT = env_int("GEON_MAX_OPS_PER_EDIT", 1000, minimum=1)
# A generated shard plan is one edit of the server's own making: its node ops (Applications
# written and replaced, the Mesh, the inputs' placements) have this bound instead.
GEON_MAX_PLAN_OPS = env_int("GEON_MAX_PLAN_OPS", 20_000, minimum=1)
GEON_WS_EDITS_PER_SECOND = env_int("GEON_WS_EDITS_PER_SECOND", 20, minimum=1)
GEON_WS_EDIT_BURST = env_int("GEON_WS_EDIT_BURST", 40, minimum=1)
# Presence frames per second per connection (bursts of twice as many); what passes is merged
# and relayed at most every 50 ms per client.
GEON_WS_PRESENCE_PER_SECOND = env_int("GEON_WS_PRESENCE_PER_SECOND", 30, minimum=1)
# The issues an `applied` or `snapshot` carries (errors first; `issueCounts` has the totals).
GEON_WS_MAX_ISSUES = env_int("GEON_WS_MAX_ISSUES", 200, minimum=1)
# An `applied` carries the collectives of the document's current plan (edge labels with no
# request) when the document has at most this many Applications; above it the editor asks the
# plan's REST cost (benchmarks/bench_live_cost.py measures what carrying them adds to an edit).
GEON_LIVE_COST_MAX_APPLICATIONS = env_int("GEON_LIVE_COST_MAX_APPLICATIONS", 256, minimum=0)

# The largest request body Django reads (a big document is a few MB); larger ones answer 413.
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("GEON_MAX_REQUEST_BYTES", 16 * 1024 * 1024, minimum=1024)

# A live edit stores its ops; every this many versions the whole document is stored too, so
# reading a version replays at most this many edits.
GEON_SNAPSHOT_EVERY = env_int("GEON_SNAPSHOT_EVERY", 100, minimum=1)

BROKER_DIR = DATA_DIR / "broker"
if REDIS_URL:
    CELERY_BROKER_URL = REDIS_URL
    CELERY_BROKER_TRANSPORT_OPTIONS: dict[str, Any] = {}
else:
    # geon's filesystem transport (geon.runs.broker): kombu's, with atomic writes and undecodable
    # files set aside in BROKER_DIR/bad instead of killing the worker.
    CELERY_BROKER_URL = "geonfs://"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(BROKER_DIR / "queue"),
        "data_folder_out": str(BROKER_DIR / "queue"),
        "control_folder": str(BROKER_DIR / "control"),
        # Seconds between looks at the folders: also the latency of a run's first event, and
        # a worker's idle gap between two runs (bench_runs: 0.1 -> 9.5 runs/s, 0.02 -> 28; an
        # idle worker then uses about 1% of a core).
        "polling_interval": 0.02,
    }
CELERY_TASK_DEFAULT_QUEUE = env_str("GEON_CELERY_QUEUE", "geon")
# Visitors' puzzle checks (no account: geon.learn.puzzles.do_queue_try) go to a queue of their
# own, which a worker of its own consumes (`geon serve`, docker-compose's tries-worker): however
# many visitors check, signed-in users' runs and checks on the default queue never wait behind
# them (issue 30, finding 8).
GEON_TRIES_QUEUE = env_str("GEON_TRIES_QUEUE", f"{CELERY_TASK_DEFAULT_QUEUE}-tries")
CELERY_TASK_IGNORE_RESULT = True  # results live in the Run rows, not in a result backend
# A task is acknowledged once it finished, and put back when its worker process dies under it;
# a worker takes one message at a time (geon.runs.services counts attempts and fails a run
# after GEON_RUN_MAX_ATTEMPTS).
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
# Stranded runs (geon.runs.services.sweep, every heartbeat in each worker): a worker refreshes a
# running run's heartbeat this often, and one silent for 3 heartbeats (or whose process is gone)
# is handed to a worker again, up to GEON_RUN_MAX_ATTEMPTS times in all, then failed with the
# reason; a run queued this many seconds while no run started is handed over again the same way.
GEON_RUN_HEARTBEAT_SECONDS = env_int("GEON_RUN_HEARTBEAT_SECONDS", 5, minimum=1)
GEON_RUN_REQUEUE_SECONDS = env_int("GEON_RUN_REQUEUE_SECONDS", 60, minimum=1)
GEON_RUN_MAX_ATTEMPTS = env_int("GEON_RUN_MAX_ATTEMPTS", 3, minimum=1)
# ONNX model imports (geon.runs.services.imports): the largest upload, and how many of one
# person's imports may wait for (or be on) a worker at once before more are refused with 429.
GEON_IMPORT_MAX_BYTES = env_int("GEON_IMPORT_MAX_BYTES", 64 * 1024 * 1024, minimum=1024)
GEON_IMPORTS_PER_USER = env_int("GEON_IMPORTS_PER_USER", 3, minimum=1)
# Each import runs in a child process of the worker (geon.interop.onnx_bounded) in an empty
# working folder, killed after this many seconds, its address space capped at this many bytes;
# the import task's Celery soft/hard time limits are 30/60 s past it.
GEON_IMPORT_SECONDS = env_int("GEON_IMPORT_SECONDS", 120, minimum=1)
GEON_IMPORT_MAX_MEMORY_BYTES = env_int(
    "GEON_IMPORT_MAX_MEMORY_BYTES", 2 * 1024**3, minimum=256 * 1024 * 1024
)
# An import stopped in review for its axes' names (issue 35) keeps its upload until they are
# given; one left there this many hours is swept (geon.runs.services.sweep): upload deleted,
# status "expired" with the reason.
GEON_IMPORT_REVIEW_HOURS = env_int("GEON_IMPORT_REVIEW_HOURS", 24, minimum=1)

# --- auth, i18n, static ---------------------------------------------------------------------

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

# API tokens expire: this many days unless POST /api/v1/tokens asks for 1..MAX days.
GEON_API_TOKEN_DAYS = env_int("GEON_API_TOKEN_DAYS", 90, minimum=1)
GEON_API_TOKEN_MAX_DAYS = env_int("GEON_API_TOKEN_MAX_DAYS", 365, minimum=GEON_API_TOKEN_DAYS)
# Tokens a user may hold at once (expired ones count until revoked).
GEON_API_TOKENS_PER_USER = env_int("GEON_API_TOKENS_PER_USER", 50, minimum=1)

# Sign-in throttling (geon.accounts.throttle): after this many failures within the window for one
# username, or from one client address, further tries are refused until the window ends. The
# address limit is higher: a classroom shares one address behind NAT.
GEON_SIGNIN_FAILURES_PER_ACCOUNT = env_int("GEON_SIGNIN_FAILURES_PER_ACCOUNT", 10, minimum=1)
GEON_SIGNIN_FAILURES_PER_ADDRESS = env_int("GEON_SIGNIN_FAILURES_PER_ADDRESS", 50, minimum=1)
GEON_SIGNIN_WINDOW_SECONDS = env_int("GEON_SIGNIN_WINDOW_SECONDS", 900, minimum=1)

# The cache holds the sign-in failure counts. With REDIS_URL every web process shares them in
# Redis; without it, the embedded default runs one web process, whose memory is enough (several
# processes without Redis would each count on their own).
if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": "geon",
        }
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

# --- training steps over REST (geon.graphs.training_api; docs/training.md) ---------------------
# A graph of more operations is refused before any work (geon train takes up to 20,000).
GEON_TRAIN_WEB_MAX_OPERATIONS = env_int("GEON_TRAIN_WEB_MAX_OPERATIONS", 2_000, minimum=1)

# --- plan cost and plan diff bounds (geon.graphs.services.plan_jobs; docs/cost-model.md) -------
# A REST cost or diff whose work estimate (plan_jobs.plan_work: shards, read/write pairs, devices)
# is past GEON_PLAN_COST_WEB_MAX_WORK goes to a worker, on the Celery queue GEON_PLAN_COST_QUEUE
# (the default queue when empty), and answers 202 with a location to poll; a job not answered in
# GEON_PLAN_COST_JOB_RETRY_SECONDS is queued again by the next poll. Answers (and
# refusals) are cached per (document version, plan, profile) for GEON_PLAN_COST_CACHE_SECONDS in
# the "plan_costs" cache, which the worker writes and every web process reads: Redis with
# REDIS_URL, files under GEON_DATA_DIR without (at most GEON_PLAN_COST_CACHE_ENTRIES of them).
# Device rows past GEON_PLAN_COST_DEVICE_ROWS are grouped (equal figures, a count and at most
# GEON_PLAN_COST_GROUP_MEMBERS devices listed), per-edge lists hold GEON_PLAN_COST_LIST_ROWS.
GEON_PLAN_COST_WEB_MAX_WORK = env_int("GEON_PLAN_COST_WEB_MAX_WORK", 40_000, minimum=1)
GEON_PLAN_COST_QUEUE = env_str("GEON_PLAN_COST_QUEUE", "")
# A job is stopped after GEON_PLAN_COST_SECONDS (Celery's soft limit, which a prefork worker
# enforces; the hard limit 10 s later) and answered as a refusal, so one plan never holds a
# worker that others' runs wait for longer than that.
GEON_PLAN_COST_SECONDS = env_int("GEON_PLAN_COST_SECONDS", 240, minimum=1)
GEON_PLAN_COST_JOB_RETRY_SECONDS = env_int("GEON_PLAN_COST_JOB_RETRY_SECONDS", 300, minimum=1)
GEON_PLAN_COST_CACHE_SECONDS = env_int("GEON_PLAN_COST_CACHE_SECONDS", 3600, minimum=1)
GEON_PLAN_COST_CACHE_ENTRIES = env_int("GEON_PLAN_COST_CACHE_ENTRIES", 500, minimum=10)
GEON_PLAN_COST_DEVICE_ROWS = env_int("GEON_PLAN_COST_DEVICE_ROWS", 256, minimum=1)
GEON_PLAN_COST_LIST_ROWS = env_int("GEON_PLAN_COST_LIST_ROWS", 4096, minimum=1)
GEON_PLAN_COST_GROUP_MEMBERS = env_int("GEON_PLAN_COST_GROUP_MEMBERS", 64, minimum=1)
if REDIS_URL:
    CACHES["plan_costs"] = {**CACHES["default"], "KEY_PREFIX": "geon-plan-costs"}
else:
    CACHES["plan_costs"] = {
        "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
        "LOCATION": str(DATA_DIR / "plan-costs"),
        "OPTIONS": {"MAX_ENTRIES": GEON_PLAN_COST_CACHE_ENTRIES},  # type: ignore[dict-item]
    }

# --- accounts (django-allauth; geon/accounts/README.md) ------------------------------------

AUTHENTICATION_BACKENDS = [
    "django.contrib.auth.backends.ModelBackend",
    # sign-in by username or email address
    "allauth.account.auth_backends.AuthenticationBackend",
]
# Who may sign up: "open" (anyone), "invite" (only through an invitation to a graph or a team),
# "closed" (nobody; an administrator creates accounts).
GEON_SIGNUP = env_choice("GEON_SIGNUP", "invite", ("open", "invite", "closed")).lower()
ACCOUNT_ADAPTER = "geon.accounts.adapter.GeonAccountAdapter"
ACCOUNT_LOGIN_METHODS = {"username", "email"}
ACCOUNT_SIGNUP_FIELDS = ["email*", "username*", "password1*", "password2*"]
ACCOUNT_UNIQUE_EMAIL = True
# "mandatory" (the default): no sign-in before the address is confirmed, which is also what lets
# sign-up answer an address already in use exactly like a new one (allauth mails its owner
# instead); an invitation proves its address, so an invited person signs up without the extra
# step. "optional": a confirmation is sent, and sign-up says when an address is taken.
ACCOUNT_EMAIL_VERIFICATION = env_choice(
    "GEON_EMAIL_VERIFICATION", "mandatory", ("mandatory", "optional", "none")
).lower()
ACCOUNT_PREVENT_ENUMERATION = True  # reset and sign-up never say whether an address is known
ACCOUNT_LOGIN_ON_EMAIL_CONFIRMATION = True
ACCOUNT_LOGOUT_ON_PASSWORD_CHANGE = False
ACCOUNT_SESSION_REMEMBER = True
# allauth's own rate limits (per address / per account, in its "count/period/key" form) beside
# geon's sign-in throttle, which the login page keeps (geon.accounts.throttle).
ACCOUNT_RATE_LIMITS = {
    "login_failed": "10/m/ip,5/5m/key",
    "signup": "20/m/ip",
    "reset_password": "20/m/ip,5/m/key",
    "reset_password_from_key": "20/m/ip",
    "confirm_email": "1/3m/key",
    "change_password": "5/m/user",
}

# Email: to the console unless GEON_EMAIL_HOST names an SMTP server.
EMAIL_HOST = env_str("GEON_EMAIL_HOST", "")
if EMAIL_HOST:
    EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    EMAIL_PORT = env_int("GEON_EMAIL_PORT", 587, minimum=1)
    EMAIL_HOST_USER = env_str("GEON_EMAIL_USER", "")
    EMAIL_HOST_PASSWORD = env_str("GEON_EMAIL_PASSWORD", "")
    EMAIL_USE_TLS = env_bool("GEON_EMAIL_TLS", True)
    EMAIL_USE_SSL = env_bool("GEON_EMAIL_SSL", False)
    EMAIL_TIMEOUT = 20
else:
    EMAIL_BACKEND = env_str("GEON_EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
    EMAIL_FILE_PATH = env_str("GEON_EMAIL_FILE_PATH", str(DATA_DIR / "mail"))
DEFAULT_FROM_EMAIL = env_str("GEON_EMAIL_FROM", "geon <geon@localhost>")

# Days an invitation link to a graph or a team stays valid.
GEON_INVITATION_DAYS = env_int("GEON_INVITATION_DAYS", 14, minimum=1)

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "graph-list"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = DATA_DIR / "static"
STATIC_ROOT.mkdir(exist_ok=True)
# The editor bundle is built by Vite into geon/static/editor (make builds it).
STATICFILES_DIRS = [BASE_DIR / "geon" / "static"]
WHITENOISE_USE_FINDERS = True

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_choice("GEON_LOG_LEVEL", "INFO", _LOG_LEVELS)},
}
