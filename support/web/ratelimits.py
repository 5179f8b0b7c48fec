"""Rate limits on sending chat messages: per client IP and per session, shared by the page and the API.

Over a limit the caller answers 429 with Retry-After (not django-ratelimit's
default 403), so this module counts with django-ratelimit's get_usage instead of
its blocking decorator.
"""

import logging
from ipaddress import ip_address, ip_network

from django.conf import settings
from django_ratelimit.core import get_usage

from support.conversations.services import session_ensure
from support.insight.metrics import RATE_LIMITED

logger = logging.getLogger(__name__)

# One budget for a client, whichever way its messages arrive.
IP_GROUP = "support.chat.ip"
SESSION_GROUP = "support.chat.session"


def _trusted_proxy_networks():
    return [ip_network(proxy, strict=False) for proxy in settings.BOOKLY_TRUSTED_PROXIES]


def _in_networks(address: str, networks) -> bool:
    try:
        parsed = ip_address(address)
    except ValueError:
        return False
    return any(parsed in network for network in networks)


def ip_in(address: str, networks: list[str]) -> bool:
    """Whether the address is one of these addresses or networks (CIDR)."""
    return _in_networks(address, [ip_network(network, strict=False) for network in networks])


def client_ip(request) -> str:
    """The client's address: REMOTE_ADDR, or behind a trusted proxy the right-most untrusted forwarded one.

    Each trusted proxy appends the address it received the request from, so
    X-Forwarded-For is read from the right, past our own proxies; anything
    further left was written by the client and is never believed.
    """
    remote = request.META.get("REMOTE_ADDR", "")
    networks = _trusted_proxy_networks()
    if not _in_networks(remote, networks):
        return remote
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
    for hop in reversed([part.strip() for part in forwarded.split(",") if part.strip()]):
        if _in_networks(hop, networks):
            continue
        try:
            return str(ip_address(hop))
        except ValueError:
            # Not an address where our proxy should have written one: do not guess.
            return remote
    return remote


def _session_key(group, request) -> str:
    return request.session.session_key


def chat_send_wait_seconds(request) -> int | None:
    """Count one message against both limits. Seconds to wait when either is exceeded, else None."""
    # A new visitor's session has no key until it is stored.
    session_ensure(session=request.session)
    waits = []
    for group, key, rate in (
        (IP_GROUP, "ip", settings.BOOKLY_RATELIMIT_IP),
        (SESSION_GROUP, _session_key, settings.BOOKLY_RATELIMIT_SESSION),
    ):
        usage = get_usage(request, group=group, key=key, rate=rate, increment=True)
        if usage and usage["should_limit"]:
            logger.info("chat message refused by rate limit %s (%s)", group, rate)
            RATE_LIMITED.labels(scope=key if isinstance(key, str) else "session").inc()
            waits.append(max(1, usage["time_left"]))
    return max(waits) if waits else None


def rate_limited_detail(wait_seconds: int) -> str:
    unit = "second" if wait_seconds == 1 else "seconds"
    return (
        "You're sending messages faster than I can answer them. "
        f"Please wait {wait_seconds} {unit}, then send your message again."
    )
