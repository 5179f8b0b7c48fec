"""The shop's backend proves itself with its store API key, `Authorization: Bearer <key>`, and nothing
else: no session cookie is read, so no customer's or staff member's browser can call the store API."""

import logging
from datetime import timedelta
from typing import TYPE_CHECKING

from django.conf import settings
from django.utils import timezone
from django_ratelimit.core import get_usage
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions, permissions, throttling
from rest_framework_api_key.permissions import KeyParser

from connection.models import StoreApiKey

if TYPE_CHECKING:
    from drf_spectacular.openapi import AutoSchema
    from rest_framework.request import Request
    from rest_framework.views import APIView

logger = logging.getLogger(__name__)

# How stale a key's "last used" may get before a request moves it on.
LAST_USED_PRECISION = timedelta(minutes=1)
# Guessed keys (ones that are no key of ours), counted per client IP (django-ratelimit's "ip" key: the
# client address behind our trusted proxies) in the cache, which Redis shares between workers.
FAILED_KEY_GROUP = "connection.store_api.failed_key"

# Why a key is refused (the "invalid_key" error's message). A revoked or expired key is the shop's own,
# and only its holder can present it, so saying which tells a guesser nothing.
KEY_NOT_VALID = "That API key is not valid."
KEY_REVOKED = "That API key was revoked: use the shop's current key."
KEY_EXPIRED = "That API key has expired: use the shop's current key."


class KeyRefused(exceptions.AuthenticationFailed):
    """A key refused, `message` saying why (one of the KEY_ sentences above)."""

    def __init__(self, message: str):
        super().__init__(detail=message)
        self.message = message


class KeyAttemptsThrottled(exceptions.Throttled):
    """Too many guessed keys from one address: until the window passes, every key from it that is not
    one of ours is refused with 429."""

    default_code = "key_attempts_throttled"


def _failed_key_usage(request: "Request", *, increment: bool) -> dict | None:
    return get_usage(
        request._request,
        group=FAILED_KEY_GROUP,
        key="ip",
        rate=settings.BOOKLY_STORE_API_KEY_FAILURES,
        increment=increment,
    )


def _stored_key(key: str) -> StoreApiKey | None:
    """The key of ours this is, revoked and expired ones too; None for any other (a guess). One lookup by
    its prefix, then its hash compared in constant time (djangorestframework-api-key's)."""
    prefix, _, _ = key.partition(".")
    api_key = StoreApiKey.objects.filter(prefix=prefix).first()
    return api_key if api_key is not None and api_key.is_valid(key) else None


class _BearerKeyParser(KeyParser):
    keyword = "Bearer"


class StoreApiKeyAuthentication(authentication.BaseAuthentication):
    parser = _BearerKeyParser()

    def authenticate(self, request: "Request") -> tuple[None, StoreApiKey] | None:
        key = self.parser.get(request)
        if not key:
            return None  # the permission below answers 401 not_authenticated
        # Read before the limit is looked at: the shop's right key, or its revoked or expired one, is
        # never held up by guesses from the same address (one worker still on a revoked key during a
        # rotation would otherwise lock out every worker behind the same egress IP).
        api_key = _stored_key(key)
        if api_key is None:
            usage = _failed_key_usage(request, increment=False)
            if usage and usage["count"] >= usage["limit"]:  # the limit's worth of guesses was made
                raise KeyAttemptsThrottled(wait=max(1, usage["time_left"]))
            if (usage := _failed_key_usage(request, increment=True)) and usage["count"] == usage["limit"]:
                logger.warning("store API: too many wrong keys from one address; refused for a while")
            raise KeyRefused(KEY_NOT_VALID)
        if api_key.revoked:
            raise KeyRefused(KEY_REVOKED)
        if api_key.has_expired:
            raise KeyRefused(KEY_EXPIRED)
        now = timezone.now()
        if api_key.last_used_at is None or now - api_key.last_used_at > LAST_USED_PRECISION:
            StoreApiKey.objects.filter(pk=api_key.pk).update(last_used_at=now)
        return (None, api_key)

    def authenticate_header(self, request: "Request") -> str:
        return 'Bearer realm="Bookly store API"'


class HasStoreApiKey(permissions.BasePermission):
    def has_permission(self, request: "Request", view: "APIView") -> bool:
        return isinstance(request.auth, StoreApiKey)


class PerKeyThrottle(throttling.SimpleRateThrottle):
    """BOOKLY_STORE_API_RATE requests per key, counted in the cache (Redis in production, shared by
    every worker)."""

    scope = "store_api"

    def get_cache_key(self, request: "Request", view: "APIView") -> str | None:
        if not isinstance(request.auth, StoreApiKey):
            return None
        return self.cache_format % {"scope": self.scope, "ident": request.auth.prefix}


class StoreApiKeyScheme(OpenApiAuthenticationExtension):
    """How the OpenAPI schema describes the key (drf-spectacular finds it by subclassing)."""

    target_class = StoreApiKeyAuthentication
    name = "storeApiKey"

    def get_security_definition(self, auto_schema: "AutoSchema") -> dict[str, str]:
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "A store API key (manage.py store_api_key create NAME, or admin).",
        }
