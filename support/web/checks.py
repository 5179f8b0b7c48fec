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
