"""The store's own order-number shape: one setting read everywhere, checked when the settings load."""

import os
import subprocess
import sys

import pytest
from django.conf import settings

from orders.numbers import OrderNumbering

DEMO = OrderNumbering(r"BK-[0-9]{4,6}", "BK-10042")


@pytest.mark.parametrize("typed", ["BK-10042", "bk-10042", "BK 10042", "bk10042", "BK - 10042", " BK-10042 "])
def test_the_demo_numbers_are_read_however_customers_type_them(typed):
    assert DEMO.canonical(typed) == "BK-10042"


@pytest.mark.parametrize("typed", ["BK-123", "BK-1234567", "XBK-10042", "10042", "BK-10042-2"])
def test_a_number_of_another_shape_is_not_one(typed):
    assert DEMO.canonical(typed) is None
    assert DEMO.mentions(f"order {typed} please") == []


@pytest.mark.parametrize(
    ("pattern", "example", "text", "found"),
    [
        (r"#[0-9]{4,}", "#1001", "Where is order #1001? And #1002.", ["#1001", "#1002"]),
        # Between digits the hyphen stays: a phone number is not an order.
        (r"[0-9]{3}-[0-9]{7}", "100-2345678", "order 100 - 2345678, call 5551234567", ["100-2345678"]),
        (r"web-[0-9]{5}", "web-88812", "WEB-88812 please", ["web-88812"]),
        (r"[]A-]{2}-[0-9]{3}", "AA-123", "aa-123", ["AA-123"]),
        (r"WEB-[0-9]{5}", "WEB-88812", "web-88812 and WEB88813, not WEB-1", ["WEB-88812", "WEB-88813"]),
        # A top-level alternative is never cut at its hyphens: the exact shapes only, in any case.
        (r"A-[0-9]{3}|B[0-9]{3}", "A-123", "a-123 or b456", ["A-123", "B456"]),
    ],
)
def test_a_store_s_own_shape_is_found_in_running_text(pattern, example, text, found):
    numbering = OrderNumbering(pattern, example)
    assert numbering.mentions(text) == found
    assert numbering.last_mention(text) == found[-1]
    assert numbering.replace("[n]", text).count("[n]") == len(found)


def test_a_reply_s_look_alike_numbers_are_found_whatever_their_length():
    assert DEMO.look_alike_re.findall("BK-123, bk 1234567 and BK-10042") == [
        "BK-123",
        "bk 1234567",
        "BK-10042",
    ]
    no_prefix = OrderNumbering(r"[0-9]{3}-[0-9]{7}", "100-2345678")
    found = no_prefix.look_alike_re.finditer("100-2345678 or 5551234567")
    assert [match.group(0) for match in found] == ["100-2345678"]


def test_a_pattern_a_cut_would_break_is_read_whole():
    numbering = OrderNumbering(r"SO-?[0-9]{4}", "SO-1234")  # "-?": the cut would leave "?[0-9]{4}"
    assert numbering.canonical("so-1234") == "SO-1234"
    assert numbering.canonical("SO1234") == "SO1234"


def _manage(*arguments: str, overrides: dict[str, str], database: str) -> subprocess.CompletedProcess:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("DJANGO_", "BOOKLY_"))}
    env.update(
        DJANGO_DEBUG="true",
        DATABASE_URL=f"sqlite:///{database}",
        BOOKLY_LLM="offline",
        REDIS_URL="",
        **overrides,
    )
    return subprocess.run(
        [sys.executable, "manage.py", *arguments],
        cwd=settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    ("pattern", "example", "problem"),
    [
        ("WEB-[0-9", "WEB-1", "is not a regular expression"),
        ("(?i)web-[0-9]{5}", "WEB-88812", "without inline flags"),
        ("^WEB-[0-9]{5}$", "WEB-88812", "leave out ^ and $"),
        ("WEB-[0-9]{5}", "BK-10042", "must match its example"),
    ],
)
@pytest.mark.multiprocess
def test_a_shape_that_cannot_work_stops_the_settings_from_loading(tmp_path, pattern, example, problem):
    overrides = {"BOOKLY_ORDER_NUMBER_PATTERN": pattern, "BOOKLY_ORDER_NUMBER_EXAMPLE": example}
    result = _manage("check", overrides=overrides, database=str(tmp_path / "db.sqlite3"))
    assert result.returncode != 0
    assert problem in result.stderr


# In a fresh process with the store's shape: the shop's order comes in under its own number, and the
# built-in assistant finds it in the customer's words and answers from the tool's result.
_STORE_CONVERSATION = """
from importlib import import_module
from django.conf import settings
from orders.intake import OrderRefused, incoming_order_clean, order_upsert
from orders.schemas import ORDER_EXAMPLE
from orders.models import OrderSource
from support.assistant.turn import conversation_take_turn
try:
    incoming_order_clean(number="BK-10042", data=ORDER_EXAMPLE)
except OrderRefused as refused:
    print("refused:", refused.problems)
order_upsert(incoming=incoming_order_clean(number="web 88812", data=ORDER_EXAMPLE), source=OrderSource.API)
session = import_module(settings.SESSION_ENGINE).SessionStore()
session.create()
for text in ["hi, where is my order web88812?", "ada@example.com"]:
    print("reply:", conversation_take_turn(session=session, text=text).reply)
"""


@pytest.mark.multiprocess
def test_a_store_s_own_numbers_work_from_intake_to_the_assistant_s_reply(tmp_path):
    database = str(tmp_path / "db.sqlite3")
    overrides = {"BOOKLY_ORDER_NUMBER_PATTERN": "WEB-[0-9]{5}", "BOOKLY_ORDER_NUMBER_EXAMPLE": "WEB-88812"}
    migrated = _manage("migrate", "-v0", overrides=overrides, database=database)
    assert migrated.returncode == 0, migrated.stderr
    result = _manage("shell", "-c", _STORE_CONVERSATION, overrides=overrides, database=database)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert any(line.startswith("refused:") and "must look like WEB-88812" in line for line in lines)
    first, second = [line for line in lines if line.startswith("reply:")]
    assert "email" in first.lower()
    assert "WEB-88812" in second and "shipped" in second.lower() and "1Z999AA10123456799" in second
