"""The benchmark's database: created fresh for each run, then read for what was stored and billed."""

import sqlite3
import statistics
from collections import defaultdict
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from support.testing.prompt_cache import cost_index

# Model calls per turn index, over every conversation (the query probe's has more than six turns).
CALLS_PER_TURN = (
    "SELECT turn, COUNT(*), COUNT(DISTINCT conversation_id) FROM support_modelcall"
    " WHERE turn <= 6 GROUP BY turn ORDER BY turn"
)
# Model calls of the conversations that ran all six turns, in order.
WHOLE_CONVERSATION_CALLS = (
    "SELECT m.conversation_id, m.turn, m.input_tokens, m.cache_creation_input_tokens,"
    " m.cache_read_input_tokens FROM support_modelcall m"
    " JOIN support_conversation c ON c.id = m.conversation_id"
    " WHERE c.turn_count = 6 ORDER BY m.conversation_id, m.id"
)


def recreate(url: str) -> None:
    """Drop and create the database named in a postgres:// URL, or delete an SQLite file."""
    parts = urlsplit(url)
    if parts.scheme == "sqlite":
        path = Path(parts.path)
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        return
    import psycopg  # only needed for PostgreSQL

    name = parts.path.lstrip("/")
    if not name.replace("_", "").isalnum():
        raise SystemExit(f"bench: refusing an unusual database name {name!r}")
    admin = parts._replace(path="/postgres").geturl()
    with psycopg.connect(admin, autocommit=True, connect_timeout=10) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        connection.execute(f'CREATE DATABASE "{name}"')


def connect(url: str):
    """A DB-API connection to the benchmark's database (PostgreSQL or SQLite)."""
    parts = urlsplit(url)
    if parts.scheme == "sqlite":
        return sqlite3.connect(parts.path, timeout=30)
    import psycopg

    return psycopg.connect(url, connect_timeout=10)


def _rows(url: str, sql: str) -> list[tuple]:
    with closing(connect(url)) as connection:
        cursor = connection.cursor()
        cursor.execute(sql)
        return cursor.fetchall()


def activity(url: str) -> dict[str, int] | None:
    """PostgreSQL's counters of sessions opened and transactions ended in this database (None on SQLite)."""
    if urlsplit(url).scheme == "sqlite":
        return None
    sessions, commits, rollbacks = _rows(
        url,
        "SELECT sessions, xact_commit, xact_rollback FROM pg_stat_database"
        " WHERE datname = current_database()",
    )[0]
    return {"sessions": sessions, "commits": commits, "rollbacks": rollbacks}


def difference(before: dict | None, after: dict | None) -> dict[str, int] | None:
    """Counters over the load; the second reading's own session is not the site's."""
    if before is None or after is None:
        return None
    change = {key: after[key] - before[key] for key in before}
    change["sessions"] -= 1
    return change


@dataclass
class ConversationBill:
    """Billed input tokens of one whole conversation (all its model calls)."""

    uncached: int
    cache_write: int
    cache_read: int
    cost_index: float
    # Tokens written to the cache / tokens the conversation added to the cached prefix.
    # 1.0: every token written once; more: earlier turns were written again.
    rewrite_ratio: float


def _bill(calls: list[dict]) -> ConversationBill:
    first, last = calls[0], calls[-1]
    written = sum(call["cache_creation_input_tokens"] for call in calls)
    added = (
        last["cache_read_input_tokens"]
        + last["cache_creation_input_tokens"]
        - first["cache_read_input_tokens"]
    )
    return ConversationBill(
        uncached=sum(call["input_tokens"] for call in calls),
        cache_write=written,
        cache_read=sum(call["cache_read_input_tokens"] for call in calls),
        cost_index=cost_index(calls),
        rewrite_ratio=written / added if added > 0 else 0.0,
    )


@dataclass
class StoredResults:
    conversations: int  # whole six-turn conversations stored
    bills: list[ConversationBill] = field(default_factory=list)
    calls_per_turn: dict[int, float] = field(default_factory=dict)  # model calls, by turn index
    customer_messages: int = 0
    assistant_replies: int = 0
    returns: int = 0

    def median(self, attribute: str) -> float | None:
        values = [getattr(bill, attribute) for bill in self.bills]
        return statistics.median(values) if values else None


def stored_results(url: str) -> StoredResults:
    """What the run left in the database: bills of six-turn conversations, messages and returns."""
    calls = _rows(url, WHOLE_CONVERSATION_CALLS)
    by_conversation: dict[int, list[dict]] = defaultdict(list)
    for conversation_id, _turn, uncached, write, read in calls:
        by_conversation[conversation_id].append(
            {"input_tokens": uncached, "cache_creation_input_tokens": write, "cache_read_input_tokens": read}
        )
    messages = dict(
        _rows(
            url,
            "SELECT role, COUNT(*) FROM support_conversationmessage WHERE visible_text <> '' GROUP BY role",
        )
    )
    return StoredResults(
        conversations=len(by_conversation),
        bills=[_bill(rows) for rows in by_conversation.values()],
        calls_per_turn={turn: calls / turns for turn, calls, turns in _rows(url, CALLS_PER_TURN)},
        customer_messages=messages.get("user", 0),
        assistant_replies=messages.get("assistant", 0),
        returns=_rows(url, "SELECT COUNT(*) FROM orders_returnrecord")[0][0],
    )
