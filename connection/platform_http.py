"""Reading a shop platform's API within its limits, for every platform's room: a thin client of httpx
(already here for the model SDKs). Shopify's own Python library (ShopifyAPI) keeps one global session
and neither waits on a 429 nor reads the call limit; WooCommerce's (wc-api-python) is requests with a
URL builder. Each room says only its URLs, its pagination and its fields."""

import email.utils
import logging
import math
import ssl
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import httpcore2
import httpx2 as httpx

from connection.payloads import platform_json_loads

logger = logging.getLogger(__name__)

# A request is tried this many times when the platform is busy (429, 503) or fails (other 5xx, network,
# no whole answer within ATTEMPT_SECONDS).
ATTEMPTS = 5
# Waits between attempts when the platform says none (seconds, doubling), and the longest wait obeyed.
_FIRST_WAIT = 1.0
_LONGEST_WAIT = 60.0
# One attempt, from connecting to the last byte of the answer, ends within this many seconds: a page of
# 250 orders comes in a few, even from a slow WooCommerce host; a shop trickling its answer (a byte now
# and then, each within any per-read timeout) is cut off here and tried again like a dropped connection.
ATTEMPT_SECONDS = 30.0
# The most of an answer read (decoded bytes): a page of 250 orders is a few MB; more is no page of orders.
MAX_BODY_BYTES = 32 * 1024 * 1024
TIMEOUT = httpx.Timeout(ATTEMPT_SECONDS, connect=10.0)
# A list is read for at most this many pages past what the platform's own count needs (orders changed
# while it is read), and at most MAX_PAGES when it gives no count: 1,000,000 orders at 100 a page.
PAGES_SLACK = 10
MAX_PAGES = 10_000

# When the current attempt must end (time.monotonic()), for every socket wait of a platform_client.
_attempt_ends: ContextVar[float] = ContextVar("platform_attempt_ends", default=math.inf)
# When every request inside platform_budget must have ended, and that budget in seconds.
_budget: ContextVar[tuple[float, float]] = ContextVar("platform_budget", default=(math.inf, math.inf))


# Answers in the 4xx that say "not now" rather than "no": a timeout, a conflict, a lock, too many requests.
_TRANSIENT = frozenset({408, 409, 423, 429})


class PlatformError(Exception):
    """The platform refused or kept failing: its status and what it said, for the operator."""

    def __init__(self, message: str, *, status: int | None = None, said: str = ""):
        super().__init__(message)
        self.status = status
        # The platform's own words, when it gave any (for staff): "Invalid shipping postcode."
        self.said = said

    @property
    def refused(self) -> bool:
        """The platform said no (a 4xx other than 429): asking again the same way gets the same answer.
        Otherwise it could not be reached or kept failing, and a later attempt may do."""
        return self.status is not None and 400 <= self.status < 500 and self.status not in _TRANSIENT


@dataclass(frozen=True)
class Page:
    """One page of a platform's order list: its orders, and how many the whole list has (when said)."""

    orders: list[Mapping]
    total: int | None


def _retry_after(response: httpx.Response) -> float | None:
    """Seconds the platform asks to wait: Retry-After as seconds (Shopify: "2.0") or an HTTP date."""
    value = response.headers.get("Retry-After", "").strip()
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None  # neither: waited as if it were not said
        return max(0.0, when.timestamp() - time.time())


class _Late(Exception):
    """An attempt had no whole answer by its deadline."""


@contextmanager
def platform_budget(seconds: float) -> Iterator[None]:
    """Every platform_request inside, with all its attempts and waits, ends within `seconds` (a task's
    write within the queue's task timeout); past it, a PlatformError "no answer within … seconds"."""
    ends, _ = _budget.get()
    token = _budget.set((min(ends, time.monotonic() + seconds), seconds))
    try:
        yield
    finally:
        _budget.reset(token)


def _out_of_budget() -> PlatformError:
    return PlatformError(f"no answer within {_budget.get()[1]:g} seconds")


def _left(timeout: float | None, late: type[Exception]) -> float | None:
    """A socket wait's timeout, cut to the time the current attempt has left (`late` once none)."""
    ends = _attempt_ends.get()
    if ends == math.inf:
        return timeout
    left = ends - time.monotonic()
    if left <= 0:
        raise late("the attempt's time ran out")
    return left if timeout is None else min(timeout, left)


class _AttemptStream(httpcore2.NetworkStream):
    """A connection each of whose waits (a read, a write, the TLS handshake) ends by the current
    attempt's deadline: a platform sending its headers or its body a byte at a time is cut off there."""

    def __init__(self, stream: httpcore2.NetworkStream):
        self._stream = stream

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, _left(timeout, httpcore2.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, _left(timeout, httpcore2.WriteTimeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore2.NetworkStream:
        timeout = _left(timeout, httpcore2.ConnectTimeout)
        return _AttemptStream(self._stream.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str) -> Any:  # as httpcore's: what each `info` is varies
        return self._stream.get_extra_info(info)


class _AttemptBackend(httpcore2.NetworkBackend):
    """httpcore's own sockets, as _AttemptStreams."""

    def __init__(self) -> None:
        self._backend = httpcore2.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore2.SOCKET_OPTION] | None = None,
    ) -> httpcore2.NetworkStream:
        timeout = _left(timeout, httpcore2.ConnectTimeout)
        return _AttemptStream(self._backend.connect_tcp(host, port, timeout, local_address, socket_options))

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore2.SOCKET_OPTION] | None = None,
    ) -> httpcore2.NetworkStream:
        timeout = _left(timeout, httpcore2.ConnectTimeout)
        return _AttemptStream(self._backend.connect_unix_socket(path, timeout, socket_options))

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)


class _AttemptTransport(httpx.HTTPTransport):
    """httpx's transport with _AttemptBackend: httpx takes no network backend, so its connection pool
    (httpcore's) is made again with httpx's own defaults and this backend."""

    def __init__(self) -> None:
        super().__init__()
        self._pool = httpcore2.ConnectionPool(
            ssl_context=httpx.create_ssl_context(),
            max_connections=100,
            max_keepalive_connections=20,
            keepalive_expiry=5.0,
            network_backend=_AttemptBackend(),
        )


def platform_client(**options: Any) -> httpx.Client:
    """A client for a platform's API (`options`: its key) whose every connection wait ends with the
    attempt's deadline (platform_request), following no redirect (the key would go with it)."""
    return httpx.Client(transport=_AttemptTransport(), timeout=TIMEOUT, follow_redirects=False, **options)


def platform_get(
    client: httpx.Client,
    url: str,
    *,
    params: Mapping | None = None,
    sleep: Callable[[float], None] = time.sleep,
    pace: Callable[[httpx.Response], float] | None = None,
) -> httpx.Response:
    """GET `url` within the platform's limits (platform_request); `pace` says how long to wait after a
    success (Shopify's call limit nearly used)."""
    return platform_request(client, "GET", url, params=params, sleep=sleep, pace=pace)


def platform_request(
    client: httpx.Client,
    method: str,
    url: str,
    *,
    params: Mapping | None = None,
    json: Mapping | None = None,
    sleep: Callable[[float], None] = time.sleep,
    pace: Callable[[httpx.Response], float] | None = None,
) -> httpx.Response:
    """Send a request, waiting as the platform asks: a 429 or 503 waits its Retry-After (else a
    back-off), another 5xx, a network error or no whole answer within ATTEMPT_SECONDS is tried again, up
    to ATTEMPTS (a write sent again is the same write: cancelling or re-addressing an order twice does it
    once), all within platform_budget when inside one. Anything else not 2xx, or an answer past
    MAX_BODY_BYTES, is a PlatformError (with its status when the platform answered one)."""
    wait = _FIRST_WAIT
    for attempt in range(1, ATTEMPTS + 1):
        try:
            response = _attempt(client, method, url, params=params, json=json)
        except (httpx.TransportError, _Late) as error:
            if attempt == ATTEMPTS:
                if isinstance(error, _Late):
                    raise PlatformError(f"{url}: {error}, at each of {ATTEMPTS} attempts") from None
                raise PlatformError(f"{url}: {type(error).__name__} ({error})") from error
            logger.info("%s: %s; trying again in %.1fs", url, error, wait)
            _wait(sleep, wait)
            wait = min(wait * 2, _LONGEST_WAIT)
            continue
        if response.is_success:
            if pace and (seconds := pace(response)):
                sleep(seconds)
            return response
        if response.status_code in (429, 503) or response.status_code >= 500:
            if attempt == ATTEMPTS:
                break
            asked = _retry_after(response)
            logger.info("%s answered %s; waiting %.1fs", url, response.status_code, asked or wait)
            _wait(sleep, min(asked if asked is not None else wait, _LONGEST_WAIT))
            wait = min(wait * 2, _LONGEST_WAIT)
            continue
        break
    said = _words_of(response)
    raise PlatformError(
        f"{url} answered {response.status_code}: {said or response.text[:300]}",
        status=response.status_code,
        said=f"{response.status_code}: {said}" if said else "",
    )


def _wait(sleep: Callable[[float], None], seconds: float) -> None:
    """`sleep`, unless the wait would end past the budget (platform_budget): then the request ends."""
    if time.monotonic() + seconds > _budget.get()[0]:
        raise _out_of_budget()
    sleep(seconds)


def _attempt(
    client: httpx.Client, method: str, url: str, *, params: Mapping | None, json: Mapping | None
) -> httpx.Response:
    """One try, its answer read whole within ATTEMPT_SECONDS (or the budget's time left) and within
    MAX_BODY_BYTES. No redirect is followed: httpx would send the platform's key (Shopify's is a header
    of its own, which httpx keeps on a redirect to another host) wherever it points."""
    started = time.monotonic()
    ends = min(started + ATTEMPT_SECONDS, _budget.get()[0])
    if ends <= started:
        raise _out_of_budget()
    late = _Late(f"no whole answer within {round(ends - started, 1):g} seconds")
    # Each socket wait within the time left, also for a client that is no platform_client (whose waits do
    # not end at the deadline by themselves: a trickle is then cut between the body's chunks only).
    timeout = {
        name: min(value or math.inf, ends - started) for name, value in client.timeout.as_dict().items()
    }
    token = _attempt_ends.set(ends)
    try:
        with client.stream(
            method, url, params=params, json=json, follow_redirects=False, timeout=httpx.Timeout(**timeout)
        ) as response:
            body = bytearray()
            for chunk in response.iter_bytes():
                body += chunk
                if len(body) > MAX_BODY_BYTES:
                    raise PlatformError(
                        f"{url} answered more than {MAX_BODY_BYTES / 2**20:g} MB, which no page of orders "
                        "is: not read further"
                    )
                if time.monotonic() > ends:
                    raise late
    except httpx.TimeoutException as error:
        # A socket wait cut at the deadline (a hair early, as timers go) is the deadline's.
        if time.monotonic() >= ends - 0.05:
            raise late from error
        raise
    finally:
        _attempt_ends.reset(token)
    # Read whole, it is handed on as any answer (its body decoded already, so no longer said encoded).
    headers = [(name, value) for name, value in response.headers.multi_items() if name != "content-encoding"]
    return httpx.Response(
        response.status_code, headers=headers, content=bytes(body), request=response.request
    )


def _words_of(response: httpx.Response) -> str:
    """What a platform's error body says in words: WooCommerce's `message`, Shopify's `errors` (a
    string, a list, or lists by field) or `error`; blank when it is not JSON or says none."""
    try:
        body = response.json()
    except ValueError:
        return ""
    if not isinstance(body, dict):
        return ""
    said = body.get("message") or body.get("errors") or body.get("error") or ""
    if isinstance(said, dict):
        said = "; ".join(
            f"{field}: {', '.join(map(str, words)) if isinstance(words, list) else words}".removeprefix(
                "base: "
            )
            for field, words in said.items()
        )
    elif isinstance(said, list):
        said = "; ".join(map(str, said))
    return str(said)[:300]


def _count(total: object) -> int | None:
    return total if isinstance(total, int) and not isinstance(total, bool) and total >= 0 else None


def page_limit(total: object, size: int) -> int:
    """How many pages of `size` a list the platform counted `total` orders is read for at most: its
    pages and PAGES_SLACK more, never past MAX_PAGES (nor when it gave no count)."""
    counted = _count(total)
    return MAX_PAGES if counted is None else min(MAX_PAGES, -(-counted // size) + PAGES_SLACK)


def pages_past_limit(*, read: int, total: object, size: int) -> PlatformError:
    """The list read for page_limit pages and still not ended: what the platform said, for the operator."""
    counted = "gave no count" if _count(total) is None else f"counted {total} orders"
    return PlatformError(
        f"stopped after {read} pages of {size} orders, the most this sync reads: the platform {counted} "
        "but kept saying there is a next page (a plugin or a cache changing its pagination?); the orders "
        "read are applied"
    )


def platform_next_page(link: str, *, page: httpx.URL, base: str) -> str:
    """The next page's address (a `Link` header's, relative to the page it came with), which must be at
    the base address itself: same scheme, host and port. Anywhere else is not followed (the key would go
    with it): a PlatformError saying where it pointed."""
    url, home = page.join(link), httpx.URL(base)
    if (url.scheme, url.host, url.port) != (home.scheme, home.host, home.port):
        origin = f"{url.scheme}://{url.host}" + (f":{url.port}" if url.port else "")
        raise PlatformError(
            f"the next page's address is at {origin}, not at the configured {base}: not followed (the "
            "access key goes only to the configured address); the orders read are applied"
        )
    return str(url)


def platform_json(response: httpx.Response) -> object:
    """The body of a platform's answer, which must be JSON (NaN and Infinity kept as words, for the
    intake to refuse by field)."""
    try:
        return platform_json_loads(response.content)
    except ValueError:
        raise PlatformError(
            f"{response.request.url} answered a body that is not JSON", status=response.status_code
        ) from None


def platform_address(url: str, setting: str) -> str:
    """A platform's address, which must be https (its key goes with every request); plain http only on
    this machine (a stand-in, a tunnel)."""
    parts = httpx.URL(url)
    if parts.scheme != "https" and not (
        parts.scheme == "http" and parts.host in ("127.0.0.1", "localhost", "::1")
    ):
        raise PlatformError(f"{setting} must be an https address: the API key is sent with every request")
    return url.rstrip("/")


def recipient_names(recipient: str) -> tuple[str, str]:
    """A recipient as platforms keep one, first and last name: the last word is the last name ("Ana
    de Souza" is "Ana de", "Souza"; one word is a first name only)."""
    first, _, last = recipient.strip().rpartition(" ")
    return (first, last) if first else (last, "")


def platform_id(value: object) -> str:
    """A platform's own id of an order or a line (Shopify's and WooCommerce's `id`: a positive whole
    number of 64 bits, as their databases keep it), as text; blank for anything else (a 4,001-digit id
    is no id, and would not fit the column)."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 < value < _LARGEST_ID:
        return str(value)
    return ""


_LARGEST_ID = 2**63
