"""The store's own order-number shape: one setting read everywhere, checked when the settings load."""

import json

import pytest
from django.conf import settings

from orders import checks, numbers
from orders.models import Shop
from orders.numbers import ORDER_NUMBERS, OrderNumbering
from orders.tests.factories import OrderFactory

DEMO = OrderNumbering(r"BK-[0-9]{4,6}", "BK-10042")


@pytest.mark.parametrize("typed", ["BK-10042", "bk-10042", "BK 10042", "bk10042", "BK - 10042", " BK-10042 "])
def test_the_demo_numbers_are_read_however_customers_type_them(typed):
    assert DEMO.canonical(typed) == "BK-10042"


@pytest.mark.parametrize("typed", ["BK-123", "BK-1234567", "XBK-10042", "BK-10042-2"])
def test_a_number_of_another_shape_is_not_one(typed):
    assert DEMO.canonical(typed) is None
    assert DEMO.mentions(f"order {typed} please") == []


# Written by a helper who saw no code: customers' messages with street numbers, ZIP and postal codes,
# phone numbers, amounts, dates, titles ("1984") and order numbers written as WooCommerce and Shopify
# show them ("Order #727", "#1001"), each with the order numbers a person reads in it. "ambiguous": a
# bare number nothing says is an order's ("where is 1050?"): not taken; the assistant asks for the
# number.
IN_CONTEXT = json.loads((settings.BASE_DIR / "orders" / "tests" / "numbers_in_context.json").read_text())


@pytest.mark.parametrize(
    ("pattern", "example"),
    [("[0-9]{3,}", "727"), ("#[0-9]{3,}", "#1001"), ("BK-[0-9]{3,6}", "BK-1001")],
)
def test_street_numbers_zip_codes_and_amounts_are_never_order_numbers(pattern, example):
    numbering = OrderNumbering(pattern, example)
    read = {case["text"]: numbering.mentions(case["text"]) for case in IN_CONTEXT}
    expected = {
        case["text"]: [numbering.prefix + number for number in case["order_numbers"]]
        if case["kind"] == "order"
        else []
        for case in IN_CONTEXT
    }
    assert len(IN_CONTEXT) >= 50 and sum(case["kind"] == "none" for case in IN_CONTEXT) >= 30
    assert read == expected


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("where is order 10042?", ["BK-10042"]),  # the prefix left out after "order" or "#"
        ("order no. 10042", ["BK-10042"]),
        ("it's #10042", ["BK-10042"]),
        ("10042", ["BK-10042"]),  # alone: the answer to "What is your order number?"
        ("where is 10042?", []),  # nothing says it is an order's
        ("I live at 10042 Elm St", []),
        ("order 150 copies", []),
        ("orders 10042 and 10043", ["BK-10042", "BK-10043"]),
        ("#10042, #10043", ["BK-10042", "BK-10043"]),
        ("Order 10042, 9690 Market St, San Francisco, CA 94103", ["BK-10042"]),  # a comma lists nothing
        ("where is my order? 10042", ["BK-10042"]),
        ("Can I order 1984 by George Orwell?", []),  # "order" the verb: what is bought
        ("I'd like to purchase 1984", []),
        ("I live at 12 Main St, apt #3020", []),
    ],
)
def test_a_number_without_its_prefix_is_an_order_s_where_the_words_say_so(text, found):
    assert DEMO.mentions(text) == found
    assert DEMO.canonical("10042") is None  # given whole (a tool argument, the API): its shape stands


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
    assert [match.group(0) for match in DEMO.look_alike_re.finditer("BK-123, bk 1234567 and BK-10042")] == [
        "BK-123",
        "bk 1234567",
        "BK-10042",
    ]
    no_prefix = OrderNumbering(r"[0-9]{3}-[0-9]{7}", "100-2345678")
    found = no_prefix.look_alike_re.finditer("100-2345678 or 5551234567")
    assert [match.group(0) for match in found] == ["100-2345678"]


def test_the_shapes_a_store_had_before_are_still_found():
    changed = OrderNumbering("#[0-9]{4,}", "#1001", former=("BK-[0-9]{4,6}",))
    assert changed.canonical("bk 10042") == "BK-10042"
    assert changed.canonical("#1050") == "#1050"
    assert changed.mentions("order BK-10042, and order 1050") == ["BK-10042", "#1050"]
    assert changed.exact.fullmatch("BK-10042") and changed.exact.fullmatch("#1050")
    assert [match.group(0) for match in changed.look_alike_re.finditer("BK-123 or #1050")] == [
        "BK-123",
        "#1050",
    ]  # a reply's, either shape
    assert OrderNumbering("#[0-9]{4,}", "#1001").canonical("BK-10042") is None
    # The store's shape now wins where a former one reads the same digits.
    moved = OrderNumbering("#[0-9]{4,}", "#1050", former=("[0-9]{3,}",))
    assert moved.mentions("order 1050") == ["#1050"]
    # A reply names orders anywhere, bare digits too; a customer's bare digits need their words.
    woo = OrderNumbering("[0-9]{3,}", "727")
    assert woo.mentions("Order 727 is being prepared, but 728 has shipped.", anywhere=True) == ["727", "728"]
    assert woo.mentions("Order 727 is being prepared, but 728 has shipped.") == ["727"]


def test_an_amount_time_or_date_in_a_reply_names_no_order_of_a_shop_whose_numbers_are_digits():
    """A Shopify shop (#1001) beside a WooCommerce one (727): "$120.00 off order #9999" names #9999 only,
    not an order 120 (or 00) of the site's."""
    both = OrderNumbering("#[0-9]{4,}", "#1001", others=(("[0-9]{2,}", "17"),))
    said = "The store took $120.00 off the price of order #9999, €45,50 back, 1,234.56 in all, at 10:30."
    assert both.mentions(said, anywhere=True) == ["#9999"]
    assert both.mentions("Order 727 and order 17 have shipped.", anywhere=True) == ["727", "17"]
    for written in ("order no.727", "order:727", "Your order 727.", "orders 727, 728"):
        assert both.mentions(written, anywhere=True)[0] == "727", written


def test_a_reply_s_look_alikes_of_a_sign_shape_and_a_prefix_left_out_are_found():
    shopify = OrderNumbering("#[0-9]{4,}", "#1001")
    found = [match.group(0) for match in shopify.look_alike_re.finditer("Order #999, # 1051 and order 1052")]
    assert found == ["#999", "# 1051", "order 1052"]


@pytest.mark.django_db
def test_stored_orders_their_shops_shape_does_not_match_fail_the_database_check(settings):
    order = OrderFactory.create(number="BK-10042")
    assert checks.order_numbers_check(databases=["default"]) == []
    Shop.objects.filter(pk=order.shop.pk).update(number_pattern="[0-9]{3,}", number_example="727")
    [error] = checks.order_numbers_check(databases=["default"])
    assert error.id == "orders.E001" and "BK-10042" in error.msg
    settings.BOOKLY_ORDER_NUMBER_FORMER_PATTERNS = ["BK-[0-9]{4,6}"]
    assert checks.order_numbers_check(databases=["default"]) == []


@pytest.mark.multiprocess
def test_a_new_shape_for_new_shops_leaves_the_demos_orders_found_no_trap_on_first_run(manage_py):
    """Finding 8: the demo loaded, then the Shopify shape set as the documented first step: the next
    start no longer fails, and the demo's orders keep their shape (their shop's)."""
    assert manage_py("migrate", "-v0").returncode == 0
    assert manage_py("loaddata", "demo", "-v0").returncode == 0
    shopify = {"BOOKLY_ORDER_NUMBER_PATTERN": "#[0-9]{4,}", "BOOKLY_ORDER_NUMBER_EXAMPLE": "#1001"}
    assert manage_py("migrate", "-v0", env=shopify).returncode == 0
    script = (
        "from orders.selectors import order_get_for_customer as get; from orders.models import Order; "
        "o = Order.objects.get(number='BK-10042'); "
        "print(get(order_number='bk 10042', email=o.customer_email))"
    )
    found = manage_py("shell", "--no-imports", "-c", script, env=shopify)
    assert found.stdout.strip() == "BK-10042"


def test_a_pattern_a_cut_would_break_is_read_whole():
    numbering = OrderNumbering(r"SO-?[0-9]{4}", "SO-1234")  # "-?": the cut would leave "?[0-9]{4}"
    assert numbering.canonical("so-1234") == "SO-1234"
    assert numbering.canonical("SO1234") == "SO1234"


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
def test_a_shape_that_cannot_work_stops_the_settings_from_loading(manage_py, pattern, example, problem):
    overrides = {"BOOKLY_ORDER_NUMBER_PATTERN": pattern, "BOOKLY_ORDER_NUMBER_EXAMPLE": example}
    result = manage_py("check", env=overrides)
    assert result.returncode != 0
    assert problem in result.stderr


# In a fresh process with the store's shape: the shop's order comes in under its own number, and the
# built-in assistant finds it in the customer's words and answers from the tool's result.
_STORE_CONVERSATION = """
from importlib import import_module
from django.conf import settings
from orders.intake import OrderRefused, incoming_order_clean, order_upsert
from orders.inbound import ORDER_EXAMPLE
from orders.models import OrderSource
from orders.shops import shop_own
from support.assistant.turn import conversation_take_turn
try:
    incoming_order_clean(number="BK-10042", data=ORDER_EXAMPLE)
except OrderRefused as refused:
    print("refused:", refused.problems)
incoming = incoming_order_clean(number="web 88812", data=ORDER_EXAMPLE)
order_upsert(incoming=incoming, source=OrderSource.API, shop=shop_own())
session = import_module(settings.SESSION_ENGINE).SessionStore()
session.create()
for text in ["hi, where is my order web88812?", "ada@example.com"]:
    print("reply:", conversation_take_turn(session=session, text=text).reply)
"""


@pytest.mark.multiprocess
def test_a_store_s_own_numbers_work_from_intake_to_the_assistant_s_reply(manage_py):
    overrides = {"BOOKLY_ORDER_NUMBER_PATTERN": "WEB-[0-9]{5}", "BOOKLY_ORDER_NUMBER_EXAMPLE": "WEB-88812"}
    migrated = manage_py("migrate", "-v0", env=overrides)
    assert migrated.returncode == 0, migrated.stderr
    result = manage_py("shell", "-c", _STORE_CONVERSATION, env=overrides)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert any(line.startswith("refused:") and "must look like WEB-88812" in line for line in lines)
    first, second = [line for line in lines if line.startswith("reply:")]
    assert "email" in first.lower()
    assert "WEB-88812" in second and "shipped" in second.lower() and "1Z999AA10123456799" in second


@pytest.mark.parametrize(
    ("pattern", "example"),
    [("[0-9]{3,}", "727"), ("#[0-9]{3,}", "#1001"), ("BK-[0-9]{3,6}", "BK-1001")],
)
def test_a_bare_number_nothing_says_is_an_order_s_is_one_to_ask_about(pattern, example):
    """The blind set's ambiguous messages ("where is 1050?") are asked about, save one with two numbers;
    a message that names its order, or whose numbers are an address, a phone, an amount, a count, is
    not."""
    numbering = OrderNumbering(pattern, example)
    asked: dict[str, list[tuple[str, str]]] = {kind: [] for kind in ("order", "none", "ambiguous")}
    for case in IN_CONTEXT:
        if found := numbering.unsure(case["text"]):
            asked[case["kind"]].append(found)
    assert asked["order"] == []
    assert len(asked["ambiguous"]) == 9
    assert all(canonical == numbering.prefix + written for written, canonical in asked["ambiguous"])
    # Only numbers that may be a title's ("1984", "451"), which the assistant asks about only in a
    # message about where an order is.
    assert sorted(written for written, _ in asked["none"]) == ["1984", "2001", "451"]


@pytest.mark.parametrize(
    ("text", "asked"),
    [
        ("is 10042 on its way?", "10042"),  # "on its way" is no street
        ("what's the status of 10042", "10042"),
        ("I moved to 94103", "94103"),  # nothing says what it is: asked, never taken
        ("tracking 123456", None),
        ("PO 20417", None),
        ("room 1203", None),
        ("my order from 2026", None),
        ("2500 Oak Ave please", None),
        ("my zip is 94103", None),
        ("call me on 5551234", None),
        ("card ending in 4421", None),
    ],
)
def test_what_is_asked_about_and_what_is_said_to_be_something_else(text, asked):
    found = DEMO.unsure(text)
    assert (found[0] if found else None) == asked


def test_a_name_the_numbering_does_not_have_reads_no_database(monkeypatch):
    """pytest probes every name a test module imports for its fixture marker: answering must read
    nothing (a read while collecting opened PostgreSQL's connection pool on the database before the
    test one, and every worker then migrated that one: CI's PostgreSQL leg failed so)."""

    def read():
        raise AssertionError("the shops' shapes were read")

    monkeypatch.setattr(numbers, "_shop_shapes", read)
    numbers.order_numbering_forget()
    assert not hasattr(ORDER_NUMBERS, "_pytestfixturefunction")
    assert not hasattr(ORDER_NUMBERS, "__wrapped__")
