"""Reading a shop platform's API within its limits, for every platform's room: a thin client of httpx
(already here for the model SDKs). Shopify's own Python library (ShopifyAPI) keeps one global session
and neither waits on a 429 nor reads the call limit; WooCommerce's (wc-api-python) is requests with a
URL builder. Each room says only its URLs, its pagination and its fields."""

import email.utils
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import httpx2 as httpx

logger = logging.getLogger(__name__)

# A request is tried this many times when the platform is busy (429, 503) or fails (other 5xx, network).
ATTEMPTS = 5
# Waits between attempts when the platform says none (seconds, doubling), and the longest wait obeyed.
_FIRST_WAIT = 1.0
_LONGEST_WAIT = 60.0
TIMEOUT = httpx.Timeout(30.0, connect=10.0)


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
    back-off), another 5xx or a network error is tried again, up to ATTEMPTS (a write sent again is
    the same write: cancelling or re-addressing an order twice does it once). Anything else not 2xx is
    a PlatformError with its status."""
    wait = _FIRST_WAIT
    for attempt in range(1, ATTEMPTS + 1):
        try:
            response = client.request(method, url, params=params, json=json)
        except httpx.TransportError as error:
            if attempt == ATTEMPTS:
                raise PlatformError(f"{url}: {type(error).__name__} ({error})") from error
            sleep(wait)
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
            sleep(min(asked if asked is not None else wait, _LONGEST_WAIT))
            wait = min(wait * 2, _LONGEST_WAIT)
            continue
        break
    said = _words_of(response)
    raise PlatformError(
        f"{url} answered {response.status_code}: {said or response.text[:300]}",
        status=response.status_code,
        said=f"{response.status_code}: {said}" if said else "",
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


def platform_json(response: httpx.Response) -> object:
    """The body of a platform's answer, which must be JSON."""
    try:
        return response.json()
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
    number), as text; blank for anything else."""
    return str(value) if isinstance(value, int) and not isinstance(value, bool) and value > 0 else ""
