"""One turn answered as server-sent events on the same POST: what the assistant is doing as it happens,
then the reply (or the error) in the JSON API's own shape.

The turn runs in a thread of its own while the request's thread writes its progress to the response:
the turn cannot yield from inside the tool loop, and a second request to ask for progress would cost
a poll's full round trip several times a turn (see the README, "The chat page"). The thread is not a
daemon: if the customer goes away, the turn still ends and commits, and a worker that is stopping
waits for it (within gunicorn's graceful timeout).
"""

import json
import queue
import threading
import time
from collections.abc import Callable, Iterator

from django.conf import settings
from django.db import connections

from support.assistant.turn import TurnResult, connections_release

# A comment line now and then keeps proxies from closing a quiet stream while the model thinks.
KEEPALIVE_SECONDS = 15.0
# Past the turn's own deadline, the stream gives up waiting (the turn has failed in a way it could not say).
_GRACE_SECONDS = 30.0


def sse_event(name: str, data: dict) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


def turn_events(
    *,
    take_turn: Callable[[Callable[[str], None]], TurnResult],
    answer: Callable[[TurnResult | Exception], dict],
    lost: dict,
) -> Iterator[bytes]:
    """Run `take_turn(progress)` in a thread; yield a `progress` event ({"status": line}) for each line it
    reports, then one `reply` event: `answer(result or error)`, the API's status and body (called in the
    `except` that caught the error, so that what it logs carries the traceback), or `lost` if the turn
    never says how it ended."""
    # The request's own connection would sit idle for the whole turn while the turn's thread holds another.
    connections_release()
    events: queue.Queue = queue.Queue()

    def run() -> None:
        outcome = lost
        try:
            outcome = answer(take_turn(lambda line: events.put(("progress", line))))
        except Exception as error:  # answered in the stream, as the JSON API would
            outcome = answer(error)
        finally:
            events.put(("done", outcome))
            connections.close_all()  # this thread's own connections

    threading.Thread(target=run, name="bookly-turn").start()
    give_up = time.monotonic() + settings.BOOKLY_TURN_DEADLINE_SECONDS + _GRACE_SECONDS
    while True:
        try:
            kind, value = events.get(timeout=KEEPALIVE_SECONDS)
        except queue.Empty:
            if time.monotonic() > give_up:
                yield sse_event("reply", lost)
                return
            yield b": still working\n\n"
            continue
        if kind == "progress":
            yield sse_event("progress", {"status": value})
        else:
            yield sse_event("reply", value)
            return
