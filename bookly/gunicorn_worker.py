"""gunicorn's threaded worker, with a bound on how long a half-sent request may hold a thread.

gunicorn's gthread worker hands a connection to a thread as soon as its first
bytes arrive, and the thread then reads the rest of the request with no
timeout at all. An outside probe opened 130 connections that sent one header
line and nothing more: all 128 threads waited on them, and `/health` went
unanswered for 150 s. Here each blocking read and write on a connection gives
up after READ_TIMEOUT_SECONDS without progress, and the connection is closed
at once: a stalled client holds a thread for seconds, not for ever.

What a timeout per read cannot stop is a client that trickles a byte every
few seconds; that, and thousands of idle connections, are a buffering proxy's
job in production (deploy/nginx/, README "Running in production").
The model's slow answers are untouched: a streamed turn writes an event, then
waits without touching the socket, and a timeout only counts while a read or
a write is blocked.
"""

import os

from gunicorn.http.errors import NoMoreData
from gunicorn.workers.gthread import TConn, ThreadWorker

# As long as gunicorn waits for a new connection's first bytes before giving it a thread.
READ_TIMEOUT_SECONDS = float(os.environ.get("GUNICORN_READ_TIMEOUT", "5"))


class _StallWatch:
    """The connection's request parser, noting when reading a request's head timed out."""

    def __init__(self, parser, conn: "_BoundedConn"):
        self._parser, self._conn = parser, conn

    def __iter__(self):
        return self

    def __next__(self):
        try:
            return next(self._parser)
        except TimeoutError:
            # Said the way gunicorn expects of a client that went quiet: closed with a debug line,
            # not a traceback per stalled connection in the error log.
            self._conn.stalled = True
            raise NoMoreData() from None

    def __getattr__(self, name):
        return getattr(self._parser, name)


class _BoundedConn(TConn):
    stalled = False

    def init(self):
        # The worker calls this before reading every request of the connection, right after putting
        # the socket back in blocking mode, which clears any timeout: set it again each time.
        first = not self.initialized
        super().init()
        if first and self.parser is not None and not self.is_http2:
            # A stand-in for the parser (it passes on what it does not watch), which the stubs' list of
            # parser classes cannot name.
            self.parser = _StallWatch(self.parser, self)  # type: ignore[assignment]
        self.sock.settimeout(READ_TIMEOUT_SECONDS)

    def close(self, graceful=False):
        # A graceful close lingers up to 2 s reading what the client still sends, on the worker's main
        # thread: for a client that stalled, that is 2 s of nobody accepting connections, each.
        super().close(graceful=graceful and not self.stalled)


class BoundedThreadWorker(ThreadWorker):
    def accept(self, listener):
        """As gunicorn's, with the bounded connection."""
        try:
            client_sock, client_addr = listener.accept()
        except (BlockingIOError, ConnectionAbortedError):
            return
        self.nr_conns += 1
        client_sock.setblocking(True)
        self.enqueue_req(_BoundedConn(self.cfg, client_sock, client_addr, listener.getsockname()))
