"""System checks for what the chat's web interface needs in production."""

from django.conf import settings
from django.core import checks

# Caches each worker process keeps to itself: counters in them are per process.
PER_PROCESS_CACHES = frozenset(
    {"django.core.cache.backends.locmem.LocMemCache", "django.core.cache.backends.dummy.DummyCache"}
)


@checks.register(checks.Tags.caches, deploy=True)
def shared_cache_check(app_configs, **kwargs):
    """With debug off, the rate limits (and the cached sessions) need a cache every worker shares."""
    if settings.DEBUG or settings.CACHES["default"]["BACKEND"] not in PER_PROCESS_CACHES:
        return []
    return [
        checks.Error(
            "The cache is per process, so each worker counts rate limits on its own: with N workers a "
            "client gets N times the limits.",
            hint="Set REDIS_URL: rate limits and sessions then live in Redis, shared by every worker.",
            id="bookly.E001",
        )
    ]


# A signing secret shorter than this can be guessed offline from one signature a page carries.
SIGNING_SECRET_MIN_LENGTH = 32


@checks.register(checks.Tags.security, deploy=True)
def customer_signing_secret_check(app_configs, **kwargs):
    """A store that signs its customers in needs a secret nobody can guess from a signature."""
    secret = settings.BOOKLY_CUSTOMER_SIGNING_SECRET
    if not secret or len(secret) >= SIGNING_SECRET_MIN_LENGTH:
        return []
    return [
        checks.Error(
            f"BOOKLY_CUSTOMER_SIGNING_SECRET is shorter than {SIGNING_SECRET_MIN_LENGTH} characters: "
            "anyone who sees one signed page can try secrets offline until one signs as any customer.",
            hint='Make one: python -c "import secrets; print(secrets.token_urlsafe(32))", and give it to the '
            "store's backend too.",
            id="bookly.E002",
        )
    ]


@checks.register(checks.Tags.security, deploy=True)
def widget_origins_check(app_configs, **kwargs):
    """The widget's frame carries the customer's session: only pages served over HTTPS may hold it."""
    return [
        checks.Warning(
            f"BOOKLY_WIDGET_ORIGINS lists {origin}, which is not HTTPS: the chat's session would be "
            "shown inside a page anyone on the network can change.",
            hint="List the store's https:// origins only (plain HTTP is for trying the widget locally).",
            id="bookly.W003",
        )
        for origin in settings.BOOKLY_WIDGET_ORIGINS
        if not origin.startswith("https://")
    ]
