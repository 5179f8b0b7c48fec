"""The provider's circuit: while Claude (or the OpenAI-compatible provider) is down, customers are
answered by the built-in model at once instead of a 503 on every message.

A turn that finds the provider down (ModelUnavailable after its own retries: overloaded,
rate-limited past what a turn can wait, unreachable, timed out; not a turn that ran out of its own
time) counts a failure; after BOOKLY_MODEL_CIRCUIT_FAILURES of them in a row the circuit opens for
BOOKLY_MODEL_CIRCUIT_SECONDS, and new turns go to the built-in model. Failures of turns that were
already waiting on the provider when it opened count for nothing. When the time is up, one turn
tries the provider (the others stay with the built-in model until it has its answer): a success
closes the circuit, a failure opens it again for twice as long (up to ten times the first). A turn
keeps the model it started with: a customer is never answered by two models in one turn.

The state is in the cache, so that every worker process shares it when REDIS_URL is set (one outage
opens it once for the whole site, and the customers of every worker see the same assistant); with
the zero-setup in-process cache it is per process, as the rate limits are. A cache that fails
(Redis down) leaves the circuit closed and records nothing: the provider answers as before.
"""

import functools
import logging
import time

from django.conf import settings
from django.core.cache import cache

from support.llm.types import ModelUnavailable

logger = logging.getLogger(__name__)

_FAILURES = "bookly:model-circuit:failures"
_OPEN_UNTIL = "bookly:model-circuit:open-until"
_OPENINGS = "bookly:model-circuit:openings"
_TRYING = "bookly:model-circuit:trying"
# How long the state is kept: longer than the longest opening, so a reopening doubles.
_MEMORY_SECONDS = 3600
_LONGEST = 10


def _now() -> float:
    return time.time()


def _fails_closed(function):
    """The circuit's cache calls never fail a customer's turn: a cache that is down means no circuit."""

    @functools.wraps(function)
    def guarded(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except Exception:
            logger.warning("the model circuit's cache failed; the provider answers", exc_info=True)
            return None

    return guarded


@_fails_closed
def circuit_open() -> bool:
    """Whether new turns go to the built-in model now."""
    open_until = cache.get(_OPEN_UNTIL)
    return open_until is not None and open_until > _now()


@_fails_closed
def circuit_lets_turn_through() -> bool:
    """Whether a new turn may go to the provider: closed, or the one turn trying it after an opening."""
    if circuit_open():
        return False
    if not cache.get(_OPENINGS):
        return True
    return cache.add(_TRYING, 1, int(settings.BOOKLY_TURN_DEADLINE_SECONDS) + 10)


@_fails_closed
def circuit_failure() -> None:
    """A turn found the provider down."""
    if circuit_open():
        return  # a turn that was already waiting when the circuit opened: it says nothing new
    openings = cache.get(_OPENINGS, 0)
    if openings:  # tried again after an opening, and still down: open again at once, for longer
        _open(openings)
        return
    cache.add(_FAILURES, 0, _MEMORY_SECONDS)
    try:
        failures = cache.incr(_FAILURES)
    except ValueError:  # expired between add and incr
        failures = 1
    if failures >= settings.BOOKLY_MODEL_CIRCUIT_FAILURES:
        _open(0)


@_fails_closed
def circuit_success() -> None:
    """The provider answered: close the circuit (a write only when there is something to forget)."""
    if cache.get_many([_FAILURES, _OPENINGS]):
        cache.delete_many([_FAILURES, _OPENINGS, _OPEN_UNTIL, _TRYING])


def _open(openings: int) -> None:
    seconds = settings.BOOKLY_MODEL_CIRCUIT_SECONDS * min(2**openings, _LONGEST)
    cache.set_many({_OPEN_UNTIL: _now() + seconds, _OPENINGS: openings + 1, _FAILURES: 0}, _MEMORY_SECONDS)
    cache.delete(_TRYING)


class CircuitRecorded:
    """A provider whose calls tell the circuit how it is doing; otherwise the provider itself."""

    def __init__(self, model):
        self.inner = model
        self.offline = model.offline
        self.name = model.name
        self.provider = model.provider
        self.keeps_state = model.keeps_state

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def create(self, **kwargs):
        try:
            reply = self.inner.create(**kwargs)
        except ModelUnavailable as unavailable:
            if unavailable.outage:
                circuit_failure()
            raise
        circuit_success()
        return reply
