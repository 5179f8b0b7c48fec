"""Rate limits on every customer write: per client IP and per session, shared by the page and the API.

Over a limit the caller answers 429 with Retry-After (not django-ratelimit's
default 403), so this module counts with django-ratelimit's get_usage instead of
its blocking decorator.
"""

import logging
from ipaddress import ip_address, ip_network

from django.conf import settings
from django_ratelimit.core import get_usage

from support.insight.metrics import RATE_LIMITED

logger = logging.getLogger(__name__)

# One budget for a client, whichever way its messages arrive.
IP_GROUP = "support.chat.ip"
SESSION_GROUP = "support.chat.session"
# Votes, ratings and new conversations: a budget of their own.
ACTION_IP_GROUP = "support.actions.ip"
ACTION_SESSION_GROUP = "support.actions.session"


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


def _wait_seconds(request, *, what: str, limits) -> int | None:
    """Count one request against each (group, key, rate). Seconds to wait when any is exceeded, else
    None. A visitor with no session yet is counted by address alone: a session is made only for a
    request that is served, never to count one that is refused."""
    waits = []
    for group, key, rate in limits:
        if key is _session_key and not request.session.session_key:
            continue
        usage = get_usage(request, group=group, key=key, rate=rate, increment=True)
        if usage and usage["should_limit"]:
            logger.info("%s refused by rate limit %s (%s)", what, group, rate)
            RATE_LIMITED.labels(scope=key if isinstance(key, str) else "session").inc()
            waits.append(max(1, usage["time_left"]))
    return max(waits) if waits else None


def chat_send_wait_seconds(request) -> int | None:
    """Count one message (or a request for a person, or an email given for an answer) against the
    chat's limits per client IP and per session."""
    return _wait_seconds(
        request,
        what="chat message",
        limits=(
            (IP_GROUP, "ip", settings.BOOKLY_RATELIMIT_IP),
            (SESSION_GROUP, _session_key, settings.BOOKLY_RATELIMIT_SESSION),
        ),
    )


def chat_action_wait_seconds(request) -> int | None:
    """Count one of the customer's other writes (a vote, a rating, starting a new conversation)
    against their own budget, per client IP and per session: voting on every reply never touches
    the budget for messages, and a script voting hundreds of times a minute is stopped."""
    return _wait_seconds(
        request,
        what="chat action",
        limits=(
            (ACTION_IP_GROUP, "ip", settings.BOOKLY_RATELIMIT_ACTIONS),
            (ACTION_SESSION_GROUP, _session_key, settings.BOOKLY_RATELIMIT_ACTIONS),
        ),
    )


def rate_limited_detail(wait_seconds: int, *, action: bool = False) -> str:
    """What a customer over a limit reads: about messages, or (action) about votes, ratings, resets."""
    unit = "second" if wait_seconds == 1 else "seconds"
    if action:
        return f"That was a lot in a short time. Please wait {wait_seconds} {unit}, then try again."
    return (
        "You're sending messages faster than I can answer them. "
        f"Please wait {wait_seconds} {unit}, then send your message again."
    )
