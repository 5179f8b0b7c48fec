"""One turn answered as server-sent events on the same POST: what the assistant is doing as it happens,
then the reply (or the error) in the JSON API's own shape.

The turn runs in a thread of its own while the request's thread writes its progress to the response:
the turn cannot yield from inside the tool loop, and a second request to ask for progress would cost
a poll's full round trip several times a turn (see the README, "The chat page"). If the customer goes
away, the turn still ends and commits; the reply is in the transcript when they come back.
"""

import json
import queue
import threading
from collections.abc import Callable, Iterator

from django.db import connections

from support.assistant.turn import TurnResult

# A comment line now and then keeps proxies from closing a quiet stream while the model thinks.
KEEPALIVE_SECONDS = 15.0


def sse_event(name: str, data: dict) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


def turn_events(
    *,
    take_turn: Callable[[Callable[[str], None]], TurnResult],
    answer: Callable[[TurnResult | Exception], dict],
) -> Iterator[bytes]:
    """Run `take_turn(progress)` in a thread; yield a `progress` event ({"status": line}) for each line it
    reports, then one `reply` event: `answer(result or error)`, the API's status and body (called in the
    `except` that caught the error, so that what it logs carries the traceback)."""
    events: queue.Queue = queue.Queue()

    def run() -> None:
        try:
            outcome = answer(take_turn(lambda line: events.put(("progress", line))))
        except Exception as error:  # answered in the stream, as the JSON API would
            outcome = answer(error)
        finally:
            connections.close_all()  # this thread's own connections
        events.put(("done", outcome))

    worker = threading.Thread(target=run, name="bookly-turn", daemon=True)
    worker.start()
    while True:
        try:
            kind, value = events.get(timeout=KEEPALIVE_SECONDS)
        except queue.Empty:
            yield b": still working\n\n"
            continue
        if kind == "progress":
            yield sse_event("progress", {"status": value})
        else:
            yield sse_event("reply", value)
            return
