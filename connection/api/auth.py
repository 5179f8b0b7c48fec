"""The shop's backend proves itself with its store API key, `Authorization: Bearer <key>`, and nothing
else: no session cookie is read, so no customer's or staff member's browser can call the store API."""

import logging
from datetime import timedelta

from django.conf import settings
from django.utils import timezone
from django_ratelimit.core import get_usage
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions, permissions, throttling
from rest_framework_api_key.permissions import KeyParser

from connection.models import StoreApiKey

logger = logging.getLogger(__name__)

# How stale a key's "last used" may get before a request moves it on.
LAST_USED_PRECISION = timedelta(minutes=1)
# Failed key attempts, counted per client IP (django-ratelimit's "ip" key: the client address behind our
# trusted proxies) in the cache, which Redis shares between workers.
FAILED_KEY_GROUP = "connection.store_api.failed_key"


class KeyAttemptsThrottled(exceptions.Throttled):
    """Too many wrong keys from one address: no key from it is looked at until the window passes."""

    default_code = "key_attempts_throttled"


def _failed_key_usage(request, *, increment: bool) -> dict | None:
    return get_usage(
        request._request,
        group=FAILED_KEY_GROUP,
        key="ip",
        rate=settings.BOOKLY_STORE_API_KEY_FAILURES,
        increment=increment,
    )


class _BearerKeyParser(KeyParser):
    keyword = "Bearer"


class StoreApiKeyAuthentication(authentication.BaseAuthentication):
    parser = _BearerKeyParser()

    def authenticate(self, request):
        key = self.parser.get(request)
        if not key:
            return None  # the permission below answers 401 not_authenticated
        usage = _failed_key_usage(request, increment=False)
        if usage and usage["count"] >= usage["limit"]:  # the limit's worth of wrong keys was tried
            # Refused unread, so guessing keys from one address goes no faster than the limit.
            raise KeyAttemptsThrottled(wait=max(1, usage["time_left"]))
        try:
            api_key = StoreApiKey.objects.get_from_key(key)
        except StoreApiKey.DoesNotExist:
            api_key = None
        if api_key is None or api_key.has_expired:
            if (usage := _failed_key_usage(request, increment=True)) and usage["count"] == usage["limit"]:
                logger.warning("store API: too many wrong keys from one address; refused for a while")
            raise exceptions.AuthenticationFailed
        now = timezone.now()
        if api_key.last_used_at is None or now - api_key.last_used_at > LAST_USED_PRECISION:
            StoreApiKey.objects.filter(pk=api_key.pk).update(last_used_at=now)
        return (None, api_key)

    def authenticate_header(self, request):
        return 'Bearer realm="Bookly store API"'


class HasStoreApiKey(permissions.BasePermission):
    def has_permission(self, request, view):
        return isinstance(request.auth, StoreApiKey)


class PerKeyThrottle(throttling.SimpleRateThrottle):
    """BOOKLY_STORE_API_RATE requests per key, counted in the cache (Redis in production, shared by
    every worker)."""

    scope = "store_api"

    def get_cache_key(self, request, view):
        if not isinstance(request.auth, StoreApiKey):
            return None
        return self.cache_format % {"scope": self.scope, "ident": request.auth.prefix}


class StoreApiKeyScheme(OpenApiAuthenticationExtension):
    """How the OpenAPI schema describes the key (drf-spectacular finds it by subclassing)."""

    target_class = StoreApiKeyAuthentication
    name = "storeApiKey"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "A store API key (manage.py store_api_key create NAME, or admin).",
        }
