"""When to try a model call again, the same for every provider: our own retries, within the turn's
deadline, never for what a retry cannot fix."""

import logging
import random
import time

from support.llm.types import ModelFailed, ModelUnavailable

logger = logging.getLogger(__name__)

# The API refused what the request says (invalid, too large, unprocessable): sending the
# same messages again would fail the same way.
REQUEST_REJECTED_STATUSES = frozenset({400, 413, 422})


def retry_after_seconds(headers) -> int | None:
    """The provider's Retry-After, between 1 and 300 seconds, when it gave one."""
    try:
        return max(1, min(int(float(headers.get("retry-after", ""))), 300))
    except (TypeError, ValueError):
        return None


def pause_before_retry(
    *,
    error: Exception,
    status: int | None,
    request_id: str,
    asked_wait: int | None,
    out_of_credit: bool,
    attempt: int,
    max_retries: int,
    deadline: float,
) -> float:
    """Seconds to wait before trying again after `error` (`status` None: no answer, a timeout or a
    connection error); raises ModelFailed or ModelUnavailable when not to try again."""
    if status is not None:
        if out_of_credit:
            logger.error("model spend limit reached; not retrying (request_id=%s)", request_id)
            raise ModelUnavailable("spend limit", retry_after=60, request_id=request_id) from None
        if not (status in (408, 409, 429) or status >= 500):
            logger.error("model API error status=%s request_id=%s", status, request_id)
            raise ModelFailed(
                f"API error {status}",
                request_id=request_id,
                request_rejected=status in REQUEST_REJECTED_STATUSES,
            ) from None
    logger.warning(
        "model call failed (%s, attempt %d, request_id=%s)", type(error).__name__, attempt + 1, request_id
    )
    backoff = 0.5 * 2**attempt + random.random() * 0.25  # noqa: S311 - jitter, not crypto
    pause = asked_wait if asked_wait is not None else backoff
    if attempt >= max_retries or deadline - time.monotonic() < pause + 2:
        raise ModelUnavailable(
            type(error).__name__, retry_after=asked_wait or 10, request_id=request_id
        ) from None
    return pause


def call_with_retries(call, *, errors: tuple[type[Exception], ...], pause, deadline: float):
    """`call(timeout)` until it answers, with `pause(error, attempt=…, deadline=…)` between tries
    (which raises when not to try again); each try's timeout ends by the turn's deadline. Returns
    what it answered and when the answering try started."""
    attempt = 0
    while True:
        started = time.monotonic()
        remaining = deadline - started
        if remaining < 1:
            raise ModelUnavailable("turn deadline reached", retry_after=5, outage=False)
        try:
            return call(remaining), started
        except errors as error:
            time.sleep(pause(error, attempt=attempt, deadline=deadline))
            attempt += 1
