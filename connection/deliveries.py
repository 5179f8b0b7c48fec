"""Bookly's events delivered to the store's webhook endpoints, as the Standard Webhooks specification
describes: a JSON body `{"type", "timestamp", "data"}` POSTed with `webhook-id` (the event's id, the same
on every attempt and for every endpoint), `webhook-timestamp` and `webhook-signature` (signed by the
`standardwebhooks` package with the endpoint's secret). At least once: an endpoint that does not answer
2xx is tried again with back-off for about a day, then the delivery is failed and shown to staff.

The steps run on the task queue (connection.tasks), never in a customer's request:
  event committed → event_dispatch (a delivery for each endpoint that wants it) → delivery_attempt,
and every minute deliveries_sweep picks up what a lost signal, a lost queue entry, a dead worker or a
back-off left behind. Each delivery is its own task on its own schedule, so a slow endpoint delays no
other, and an event an endpoint answers with an error delays no other event to it (after an attempt that
got no answer at all, new events wait at most HOLD_NEW_EVENTS). Ordering is not kept (a retried event
arrives after newer ones): receivers order by the body's `timestamp`, and treat `webhook-id` as the
event's identity (a retry has the same one).
"""

import ipaddress
import json
import logging
import socket
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from urllib.parse import urlsplit

import httpx2
from django.conf import settings
from django.db import transaction
from django.db.models import Exists, F, Min, OuterRef, Q
from django.utils import timezone
from standardwebhooks.webhooks import Webhook

from connection.models import DeliveryStatus, WebhookDelivery, WebhookEndpoint
from orders.models import Event, EventType, Shop

logger = logging.getLogger(__name__)

# After the nth failed attempt, the wait before the next (Standard Webhooks' suggested schedule, from
# one minute: the queue's scheduler looks once a minute); after the last, the delivery has failed.
# 1 min + 5 min + 30 min + 2 h + 5 h + 10 h + 10 h: the last attempt about 28 hours after the first.
RETRY_DELAYS = (
    timedelta(minutes=1),
    timedelta(minutes=5),
    timedelta(minutes=30),
    timedelta(hours=2),
    timedelta(hours=5),
    timedelta(hours=10),
    timedelta(hours=10),
)
MAX_ATTEMPTS = len(RETRY_DELAYS) + 1
# How long new events wait after an endpoint's latest attempt got no answer at all (at most: a retry
# due sooner goes first), so that a dead endpoint is not tried once per event.
HOLD_NEW_EVENTS = RETRY_DELAYS[1]
# A delivery queued and not yet claimed this long is queued again (the queue lost it).
REQUEUE_AFTER = timedelta(minutes=5)
# How much of a receiver's answer is kept for staff.
RESPONSE_KEPT_CHARS = 500


class EndpointRefused(Exception):
    """An endpoint that cannot be added as given; the message says why."""


# IPv6 ranges that carry an IPv4 address in their last 32 bits: NAT64, the old IPv4-compatible form, and
# SIIT's IPv4-translated ::ffff:0:a.b.c.d (not ipv4_mapped's ::ffff:a.b.c.d, which Python unwraps).
_EMBEDDING_IPV4 = (
    ipaddress.ip_network("64:ff9b::/96"),
    ipaddress.ip_network("::/96"),
    ipaddress.ip_network("::ffff:0:0:0/96"),
)
# Ranges Python calls global that no webhook receiver lives in: NAT64 for local use (RFC 8215: a
# translator of one's own network, its IPv4 anywhere in the address) and the IETF's protocol assignments
# (192.0.0.9 and 192.0.0.10 are anycast for PCP and TURN relays).
_NEVER_PUBLIC = (ipaddress.ip_network("64:ff9b:1::/48"), ipaddress.ip_network("192.0.0.0/24"))


def _is_public(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """Whether an address is a single host on the public internet, looking through the IPv6 forms that
    wrap an IPv4 address (::ffff:10.0.0.1, 6to4, NAT64, ::127.0.0.1), which Python alone calls global.
    Multicast is a group, not a receiver."""
    if address.is_multicast or any(
        address.version == network.version and address in network for network in _NEVER_PUBLIC
    ):
        return False
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped:
            return _is_public(address.ipv4_mapped)
        if address.sixtofour:
            return _is_public(address.sixtofour)
        if address.teredo:
            return all(_is_public(inner) for inner in address.teredo)
        if any(address in network for network in _EMBEDDING_IPV4):
            return address != ipaddress.IPv6Address("::") and _is_public(
                ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
            )
    return address.is_global


@dataclass(frozen=True)
class WebhookTarget:
    """Where an attempt connects: the URL with its host checked and pinned to one resolved address, so
    that the name cannot resolve elsewhere between the check and the connection."""

    url: httpx2.URL
    address: str

    @property
    def pinned_url(self) -> httpx2.URL:
        return self.url.copy_with(host=self.address)


def webhook_target(url: str) -> tuple[WebhookTarget | None, str | None]:
    """The URL's target, or why Bookly will not send to it. The host is read as the HTTP client reads
    it (IDNA 2008) and resolved once. Without BOOKLY_WEBHOOKS_ALLOW_PRIVATE_URLS, a host with any
    address that is loopback, private, link-local or otherwise not public is refused: an endpoint URL
    must not reach into the network Bookly runs in (server-side request forgery)."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port out of range
        parsed = httpx2.URL(url)
        host = parsed.raw_host.decode("ascii")
    except (ValueError, UnicodeError, httpx2.InvalidURL):
        return None, "is not a valid URL"
    if parts.scheme not in ("http", "https") or not host:
        return None, "must be an http:// or https:// URL"
    if parts.username or parts.password:
        return None, "must not hold a user name or password"
    try:
        infos = socket.getaddrinfo(
            host, parsed.port or (443 if parts.scheme == "https" else 80), type=socket.SOCK_STREAM
        )
        # An IPv6 address may carry its zone ("fe80::1%eth0"). str(): the socket address of a family Python
        # does not know is (number, bytes), and that number is no IP address (ValueError).
        addresses = [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos]
    except (OSError, UnicodeError, ValueError):
        return None, "has a host name that does not resolve"
    if not settings.BOOKLY_WEBHOOKS_ALLOW_PRIVATE_URLS and not all(map(_is_public, addresses)):
        return None, "reaches a loopback, private or link-local address (BOOKLY_WEBHOOKS_ALLOW_PRIVATE_URLS)"
    return WebhookTarget(url=parsed, address=str(addresses[0])), None


def webhook_url_problem(url: str) -> str | None:
    """Why Bookly will not send to this URL, or None (see webhook_target)."""
    return webhook_target(url)[1]


def webhook_endpoint_create(
    *, url: str, event_types: list[str], description: str = "", shop: Shop | None = None
) -> WebhookEndpoint:
    """A new endpoint with its own secret (read it from the result once: it is never shown again), for
    `shop`'s orders' events or (None) every shop's. Raises EndpointRefused for a URL Bookly will not
    send to or an event type it does not have."""
    url = url.strip()
    if problem := webhook_url_problem(url):
        raise EndpointRefused(f"The URL {problem}.")
    unknown = sorted(set(event_types) - set(EventType.values))
    if unknown:
        raise EndpointRefused(
            f"Unknown event type {', '.join(unknown)}; the types are {', '.join(EventType.values)}."
        )
    return WebhookEndpoint.objects.create(
        url=url, event_types=sorted(set(event_types)), description=description, shop=shop
    )


def event_dispatch(*, event_id: int) -> list[int]:
    """Give the event a delivery for each active endpoint that wants it, once: the ids of the deliveries
    made now (none for an event dispatched already, or one that is gone)."""
    now = timezone.now()
    with transaction.atomic():
        event = Event.objects.select_for_update().filter(pk=event_id, dispatched_at__isnull=True).first()
        if event is None:
            return []
        endpoints = [
            endpoint
            for endpoint in WebhookEndpoint.objects.filter(is_active=True)
            if endpoint.wants(event.type, event.shop_id)
        ]
        # ignore_conflicts with the unique (endpoint, event): two dispatchers at once make one each.
        WebhookDelivery.objects.bulk_create(
            [WebhookDelivery(endpoint=endpoint, event=event, queued_at=now) for endpoint in endpoints],
            ignore_conflicts=True,
        )
        Event.objects.filter(pk=event.pk).update(dispatched_at=now)
    return list(
        WebhookDelivery.objects.filter(
            event_id=event_id, attempts=0, status=DeliveryStatus.PENDING
        ).values_list("pk", flat=True)
    )


def _due_or_abandoned(now: datetime) -> Q:
    """On the delivery's own columns only: what the compare-and-set updates test. (A condition on the
    endpoint's row makes Django update through a subquery, which PostgreSQL does not re-read after
    waiting for a competing update's lock: both updates would then claim the same attempt.)"""
    due = Q(status=DeliveryStatus.PENDING, next_attempt_at__lte=now)
    abandoned = Q(status=DeliveryStatus.SENDING, lease_until__lt=now)  # its worker died mid-attempt
    return due | abandoned


def _claimable(now: datetime) -> Q:
    return _due_or_abandoned(now) & Q(endpoint__is_active=True)


def attempt_lease() -> timedelta:
    """How long an attempt may take at most: connecting, sending, the answer's first bytes and the
    rest of what is kept of it, each within the timeout, and a margin for the database."""
    return timedelta(seconds=4 * settings.BOOKLY_WEBHOOK_TIMEOUT_SECONDS + 30)


def delivery_claim(*, delivery_id: int, now: datetime) -> WebhookDelivery | None:
    """Take the next attempt of a delivery that is due, or None when it is not (delivered, failed,
    waiting for its back-off, its endpoint turned off, or claimed by another worker)."""
    delivery = WebhookDelivery.objects.filter(_claimable(now), pk=delivery_id).first()
    if delivery is None:
        return None
    if delivery.attempts == 0 and (resumes_at := _unanswering_endpoint_resumes_at(delivery.endpoint_id, now)):
        # The endpoint's latest attempt got no answer at all (down, or not reachable): a first attempt
        # waits a little, so a dead endpoint costs a worker about one attempt per HOLD_NEW_EVENTS, not one
        # per event. An endpoint that answers, even with an error for one event (a receiver's bug with one
        # body), holds up no other event: each has its own schedule.
        WebhookDelivery.objects.filter(pk=delivery.pk, status=DeliveryStatus.PENDING, attempts=0).update(
            next_attempt_at=resumes_at, queued_at=None
        )
        return None
    return _claim(delivery, now)


def _unanswering_endpoint_resumes_at(endpoint_id: int, now: datetime) -> datetime | None:
    """When a new event may be tried at an endpoint whose latest attempt got no answer: HOLD_NEW_EVENTS
    after that attempt, or sooner when one of its retries is due sooner (whichever goes first finds out
    whether it is back). None when the latest attempt was answered, or the hold is over."""
    latest = (
        WebhookDelivery.objects.filter(endpoint_id=endpoint_id, last_attempt_at__isnull=False)
        .order_by("-last_attempt_at", "-id")
        .values("last_status_code", "last_attempt_at")
        .first()
    )
    if latest is None or latest["last_status_code"] is not None:
        return None
    last_attempt_at = latest["last_attempt_at"]
    assert last_attempt_at is not None  # as filtered
    retries = WebhookDelivery.objects.filter(
        endpoint_id=endpoint_id, status=DeliveryStatus.PENDING, attempts__gt=0, next_attempt_at__gt=now
    ).aggregate(first=Min("next_attempt_at"))["first"]
    resumes_at = min(filter(None, [last_attempt_at + HOLD_NEW_EVENTS, retries]))
    return resumes_at if resumes_at > now else None


def _claim(delivery: WebhookDelivery, now: datetime) -> WebhookDelivery | None:
    """A compare-and-set on `attempts` as read: of two workers holding the same due delivery (the task
    queue handing a task out twice, the sweep and the first dispatch), one moves it on and the other
    updates nothing, so each attempt is sent once. The lease lets the sweep take back an attempt whose
    worker was killed: it is sent again, with the same webhook-id, as at-least-once allows; one killed
    on its last attempt has failed."""
    still_as_read = WebhookDelivery.objects.filter(
        _due_or_abandoned(now), pk=delivery.pk, attempts=delivery.attempts
    )
    if delivery.status == DeliveryStatus.SENDING and delivery.attempts >= MAX_ATTEMPTS:  # abandoned, last try
        still_as_read.update(
            status=DeliveryStatus.FAILED, lease_until=None, last_response="The last attempt never finished."
        )
        return None
    claimed = still_as_read.update(
        status=DeliveryStatus.SENDING,
        attempts=F("attempts") + 1,
        lease_until=now + attempt_lease(),
        queued_at=None,
        last_attempt_at=now,
    )
    if not claimed:
        return None
    return WebhookDelivery.objects.select_related("endpoint", "event").get(pk=delivery.pk)


def event_body(*, event: Event) -> str:
    """What every endpoint receives for the event, the same on every attempt."""
    return json.dumps(
        {"type": event.type, "timestamp": event.occurred_at.isoformat(), "data": event.data},
        separators=(",", ":"),
        sort_keys=True,
    )


def _post(delivery: WebhookDelivery, now: datetime) -> tuple[int | None, str]:
    """POST the delivery's event: the receiver's status code (None when there was no answer) and what
    staff should see of it. Never raises: whatever stops an attempt is its outcome."""
    endpoint, event = delivery.endpoint, delivery.event
    target, problem = webhook_target(endpoint.url)  # again: DNS may point elsewhere since it was added
    if target is None:
        return None, f"Not sent: the URL {problem}."
    body = event_body(event=event)
    headers = {
        "host": target.url.netloc.decode("ascii"),
        "content-type": "application/json",
        "user-agent": "Bookly-Webhooks/1",
        "webhook-id": event.public_id,
        "webhook-timestamp": str(int(now.timestamp())),
        "webhook-signature": Webhook(endpoint.secret).sign(event.public_id, now, body),
    }
    timeout = settings.BOOKLY_WEBHOOK_TIMEOUT_SECONDS
    deadline = time.monotonic() + timeout
    try:
        # Not trust_env: no proxy from the environment decides where the pinned request goes.
        with (
            httpx2.Client(timeout=timeout, follow_redirects=False, trust_env=False) as client,
            client.stream(
                "POST",
                target.pinned_url,
                content=body.encode(),
                headers=headers,
                extensions={"sni_hostname": target.url.host},
            ) as response,
        ):
            if response.is_redirect:
                location = response.headers.get("location", "?")[:200]
                return response.status_code, f"Redirected to {location}: not followed."
            kept = b""
            for chunk in response.iter_bytes():  # as much as staff read, within the time allowed
                kept += chunk
                if len(kept) >= RESPONSE_KEPT_CHARS or time.monotonic() > deadline:
                    break
    except httpx2.TimeoutException:
        return None, f"No answer within {timeout:g} seconds."
    except httpx2.HTTPError as error:
        return None, f"Could not connect ({type(error).__name__})."
    except Exception as error:  # anything else stops this attempt, never the delivery
        logger.exception("webhook delivery %s: the attempt failed", delivery.pk)
        return None, f"Could not send ({type(error).__name__})."
    return response.status_code, kept[:RESPONSE_KEPT_CHARS].decode("utf-8", "replace")


def delivery_attempt(*, delivery_id: int) -> DeliveryStatus | None:
    """Send the delivery's next attempt if it is due, and record how it went: the status it is left in,
    or None when there was nothing to send now."""
    now = timezone.now()
    delivery = delivery_claim(delivery_id=delivery_id, now=now)
    if delivery is None:
        return None
    status_code, answer = _post(delivery, now)
    return delivery_record(delivery=delivery, status_code=status_code, answer=answer)


def delivery_record(
    *, delivery: WebhookDelivery, status_code: int | None, answer: str
) -> DeliveryStatus | None:
    """Record how the claimed attempt went; None when the attempt is no longer ours (its lease ran out
    and the sweep gave the delivery to a newer attempt, whose outcome counts)."""
    done = timezone.now()
    if status_code is not None and 200 <= status_code < 300:
        outcome, fields = DeliveryStatus.DELIVERED, {"delivered_at": done}
    elif delivery.attempts >= MAX_ATTEMPTS:
        outcome, fields = DeliveryStatus.FAILED, {}
    else:
        outcome, fields = (
            DeliveryStatus.PENDING,
            {"next_attempt_at": done + RETRY_DELAYS[delivery.attempts - 1]},
        )
    ours = WebhookDelivery.objects.filter(
        pk=delivery.pk, status=DeliveryStatus.SENDING, attempts=delivery.attempts
    )
    if not ours.update(
        status=outcome, lease_until=None, last_status_code=status_code, last_response=answer, **fields
    ):
        return None
    if outcome != DeliveryStatus.DELIVERED:
        logger.warning(
            "webhook delivery %s to endpoint %s: attempt %s got %s; now %s",
            delivery.pk,
            delivery.endpoint_id,
            delivery.attempts,
            status_code or "no answer",
            outcome,
        )
    return outcome


def delivery_send_again(*, delivery: WebhookDelivery) -> bool:
    """Staff send a delivery again now (a failed one, or one the receiver lost): one more attempt, with
    the same webhook-id. False when it is being sent at this moment."""
    return bool(
        WebhookDelivery.objects.filter(pk=delivery.pk)
        .exclude(status=DeliveryStatus.SENDING)
        .update(status=DeliveryStatus.PENDING, next_attempt_at=timezone.now(), queued_at=None)
    )


def deliveries_take_due(*, now: datetime, limit: int = 1000) -> list[int]:
    """Deliveries to put on the queue now, marked queued: due (or abandoned by a dead worker) and not
    queued a moment ago."""
    ids = list(
        WebhookDelivery.objects.filter(_claimable(now))
        .filter(Q(queued_at__isnull=True) | Q(queued_at__lt=now - REQUEUE_AFTER))
        .order_by("next_attempt_at")
        .values_list("pk", flat=True)[:limit]
    )
    WebhookDelivery.objects.filter(pk__in=ids).update(queued_at=now)
    return ids


def events_undispatched(*, limit: int = 1000) -> list[int]:
    return list(
        Event.objects.filter(dispatched_at__isnull=True).order_by("id").values_list("pk", flat=True)[:limit]
    )


PURGE_BATCH = 1000


def events_purge(*, older_than: datetime) -> int:
    """Delete the events that occurred before `older_than` and are done with, with their deliveries:
    dispatched, and no delivery still owed (each delivered or failed). An event never dispatched (the
    worker was down) or still being tried is kept, whatever its age. In batches, so that a long
    history is not one long transaction. Returns how many events were deleted."""
    owed = WebhookDelivery.objects.filter(
        event=OuterRef("pk"), status__in=[DeliveryStatus.PENDING, DeliveryStatus.SENDING]
    )
    done = Event.objects.filter(occurred_at__lt=older_than, dispatched_at__isnull=False).exclude(Exists(owed))
    deleted = 0
    while batch := list(done.order_by("pk").values_list("pk", flat=True)[:PURGE_BATCH]):
        with transaction.atomic():
            _, per_model = Event.objects.filter(pk__in=batch).exclude(Exists(owed)).delete()
        deleted += per_model.get(Event._meta.label, 0)
        if len(batch) < PURGE_BATCH:
            break
    return deleted
