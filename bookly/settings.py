"""Bookly settings: every value comes from the environment (see .env.example)."""

from datetime import date
from pathlib import Path

import environ

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()
# A developer's .env fills in what the real environment leaves unset; the
# real environment always wins, so production never depends on the file.
if (BASE_DIR / ".env").is_file():
    env.read_env(BASE_DIR / ".env", overwrite=False)

DEBUG = env.bool("DJANGO_DEBUG", default=False)

SECRET_KEY = env.str("DJANGO_SECRET_KEY", default="")
if not SECRET_KEY:
    if not DEBUG:
        # SystemExit prints one line instead of a settings traceback.
        raise SystemExit("bookly: DJANGO_SECRET_KEY must be set when DJANGO_DEBUG is off (see .env.example).")
    SECRET_KEY = "django-insecure-debug-only-key"  # noqa: S105 - debug only

ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS", default=["127.0.0.1", "localhost"])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "orders",
    "policies",
    "support",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "bookly.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "bookly.urls"

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
                "bookly.context_processors.store_clock",
            ],
        },
    },
]

WSGI_APPLICATION = "bookly.wsgi.application"
ASGI_APPLICATION = "bookly.asgi.application"

DATABASES = {
    "default": env.db("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}"),
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL lets readers run beside the one writer; IMMEDIATE takes the write
    # lock when a transaction starts instead of failing mid-way with
    # "database is locked"; the timeout makes writers queue, not error.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            "transaction_mode": "IMMEDIATE",
            "timeout": 20,
        }
    )

FIXTURE_DIRS = [BASE_DIR / "fixtures"]

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = env.str("DJANGO_TIME_ZONE", default="UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "whitenoise.storage.CompressedManifestStaticFilesStorage"
        ),
    },
}

# The store's "today": the real date unless frozen for demos and tests.
BOOKLY_TODAY = None
if _today := env.str("BOOKLY_TODAY", default=""):
    try:
        BOOKLY_TODAY = date.fromisoformat(_today)
    except ValueError:
        raise SystemExit(
            f"bookly: BOOKLY_TODAY must be an ISO date like 2026-04-14, not {_today!r}."
        ) from None

# The assistant's model. "auto": Claude when ANTHROPIC_API_KEY is set, else the
# built-in offline model; "offline" forces the offline model; "anthropic" requires a key.
BOOKLY_LLM = env.str("BOOKLY_LLM", default="auto")
if BOOKLY_LLM not in ("auto", "offline", "anthropic"):
    raise SystemExit(f"bookly: BOOKLY_LLM must be auto, offline or anthropic, not {BOOKLY_LLM!r}.")
ANTHROPIC_API_KEY = env.str("ANTHROPIC_API_KEY", default="")
if BOOKLY_LLM == "anthropic" and not ANTHROPIC_API_KEY:
    raise SystemExit("bookly: BOOKLY_LLM=anthropic needs ANTHROPIC_API_KEY.")
# A current Sonnet that the pinned SDK does not list as deprecated (a test checks).
DEFAULT_ANTHROPIC_MODEL = "claude-sonnet-5-5"
ANTHROPIC_MODEL = env.str("ANTHROPIC_MODEL", default=DEFAULT_ANTHROPIC_MODEL)
ANTHROPIC_BASE_URL = env.str("ANTHROPIC_BASE_URL", default="")
ANTHROPIC_MAX_TOKENS = env.int("ANTHROPIC_MAX_TOKENS", default=1024)
ANTHROPIC_TIMEOUT_SECONDS = env.float("ANTHROPIC_TIMEOUT_SECONDS", default=30.0)
ANTHROPIC_MAX_RETRIES = env.int("ANTHROPIC_MAX_RETRIES", default=1)

# Limits of one turn and one conversation.
BOOKLY_MAX_MODEL_CALLS_PER_TURN = env.int("BOOKLY_MAX_MODEL_CALLS_PER_TURN", default=8)
BOOKLY_MAX_TURNS_PER_CONVERSATION = env.int("BOOKLY_MAX_TURNS_PER_CONVERSATION", default=40)
BOOKLY_MAX_MESSAGE_CHARS = env.int("BOOKLY_MAX_MESSAGE_CHARS", default=4000)
# A turn gives up (503, "try again") once this much time has passed, so that
# it always ends inside the server's request timeout (gunicorn: 120 s).
BOOKLY_TURN_DEADLINE_SECONDS = env.float("BOOKLY_TURN_DEADLINE_SECONDS", default=75.0)
# How long a running turn holds its conversation; longer than any turn can run.
BOOKLY_TURN_LEASE_SECONDS = env.float("BOOKLY_TURN_LEASE_SECONDS", default=90.0)
BOOKLY_CONVERSATION_IDLE_MINUTES = env.int("BOOKLY_CONVERSATION_IDLE_MINUTES", default=30)
BOOKLY_CONVERSATION_RETENTION_DAYS = env.int("BOOKLY_CONVERSATION_RETENTION_DAYS", default=90)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env.str("BOOKLY_LOG_LEVEL", default="INFO")},
    # The SDK's HTTP client logs every request URL at INFO; keep only its warnings.
    "loggers": {"httpx2": {"level": "WARNING"}, "httpcore2": {"level": "WARNING"}},
}
