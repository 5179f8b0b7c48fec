"""Keeps the leases of this process's running turns alive, so that a lease can be short.

A turn holds its conversation's lease for BOOKLY_TURN_LEASE_SECONDS at a time.
While it runs, one thread per process renews the leases of all the turns it
has in flight, in one UPDATE every third of that time; the thread ends when
no turn runs. A lease is renewed only up to its turn's deadline (plus one
lease), so a turn stuck past it cannot hold its conversation for ever. When a worker dies, its
thread dies with it and its conversations are free again within one lease
(seconds), instead of after the longest a turn could ever run. A turn never
renews a lease it no longer holds: the UPDATE matches on the token.
"""

import logging
import os
import threading
import time
import uuid
from datetime import timedelta

from django.conf import settings
from django.db import connection
from django.utils import timezone

from support.conversations.models import Conversation

logger = logging.getLogger(__name__)

_lock = threading.Lock()
# token -> (conversation pk, time.monotonic() after which the lease is no longer renewed)
_held: dict[uuid.UUID, tuple[int, float]] = {}
_keeper_pid: int | None = None  # the process whose thread renews; a forked child starts its own


def _forget_all_in_child() -> None:
    global _keeper_pid
    _held.clear()  # the parent's turns are the parent's
    _keeper_pid = None


os.register_at_fork(after_in_child=_forget_all_in_child)


def lease_keep(conversation_pk: int, token: uuid.UUID, *, until: float) -> None:
    """Renew this lease until lease_forget(token), or until the time.monotonic() `until`."""
    global _keeper_pid
    with _lock:
        _held[token] = (conversation_pk, until)
        if _keeper_pid != os.getpid():
            threading.Thread(target=_renew_while_turns_run, name="bookly-lease-keeper", daemon=True).start()
            _keeper_pid = os.getpid()


def lease_forget(token: uuid.UUID) -> None:
    with _lock:
        _held.pop(token, None)


def leases_renew() -> int:
    """Push the expiry of every lease this process holds one lease length ahead; returns how many."""
    now = time.monotonic()
    with _lock:
        for token in [token for token, (_, until) in _held.items() if until < now]:
            logger.warning("a turn ran past its deadline; its lease is no longer renewed")
            del _held[token]
        held = dict(_held)
    if not held:
        return 0
    expires_at = timezone.now() + timedelta(seconds=settings.BOOKLY_TURN_LEASE_SECONDS)
    return Conversation.objects.filter(
        pk__in=[pk for pk, _ in held.values()], lease_token__in=list(held)
    ).update(lease_expires_at=expires_at)


# How often the thread looks at the clock; it renews every third of a lease.
_TICK_SECONDS = 0.5


def _renew_while_turns_run() -> None:
    global _keeper_pid
    renewed_at = time.monotonic()
    while True:
        time.sleep(_TICK_SECONDS)
        with _lock:
            if not _held:
                _keeper_pid = None  # no turn runs: the next lease starts a new thread
                return
        if time.monotonic() - renewed_at < settings.BOOKLY_TURN_LEASE_SECONDS / 3:
            continue
        renewed_at = time.monotonic()
        try:
            leases_renew()
        except Exception:
            # Whatever went wrong (the database away for a moment), try again next time: a
            # thread that died here would let every running turn's lease lapse.
            logger.exception("could not renew the leases of running turns")
        finally:
            connection.close()  # this thread's own connection, back to the pool until next time
