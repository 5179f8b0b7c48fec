"""The budget for identity checks (finding 4 of issue 33): a model response runs a few tool calls at most,
and failed order/email checks are capped per conversation, session and client address, across turns, in
the shared cache, with a growing delay between them; an order number guessed at by anyone asks for a
one-time code emailed to the order, never locks its owner out (issue 50, finding a)."""

import hashlib
import hmac
import itertools
import json
import re
import time

import pytest
from django.core import mail
from django.core.cache import caches
from django.utils.crypto import salted_hmac

from orders.models import CustomerEmail, Order, OrderSource, ReturnRecord
from orders.shops import shop_of_platform
from orders.tests.factories import OrderItemFactory, delivered_order
from store.clock import store_today
from support.assistant.budget import (
    CheckLimit,
    CheckScope,
    client_checks_held,
    identity_check_failed,
    order_checks_spent,
)
from support.assistant.check_codes import code_typed
from support.assistant.understanding.wording import CHECKS_SPENT_REPLY, CODE_NEEDED_REPLY
from support.conversations.identity import customer_signature
from support.llm.protocol import OFFER_PERSON, ToolError
from support.models import Conversation, TurnTrace
from support.testing.chat_client import ChatClient
from support.testing.messages_stub import message, text, tool_use
from support.testing.metric_counts import Counts

RIGHT = "sarah.chen@example.com"  # the email on BK-10042
NOT_FOUND, SPENT = ToolError.ORDER_NOT_FOUND, ToolError.TOO_MANY_FAILED_CHECKS
CODE, SOON = ToolError.CODE_NEEDED, ToolError.CHECK_TOO_SOON
PLENTY = 10_000


@pytest.fixture
def limits(settings):
    """Every limit out of the way; a test sets the one it is about."""
    settings.BOOKLY_MAX_TOOL_CALLS_PER_RESPONSE = PLENTY
    settings.BOOKLY_FAILED_CHECKS_PER_ORDER = PLENTY
    settings.BOOKLY_FAILED_CHECKS_PER_CONVERSATION = PLENTY
    settings.BOOKLY_FAILED_CHECKS_PER_SESSION = PLENTY
    settings.BOOKLY_FAILED_CHECKS_PER_IP = PLENTY
    settings.BOOKLY_FAILED_CHECK_DELAY_SECONDS = 0
    return settings


def _lookup(order_id: str, email: str) -> dict:
    return tool_use("lookup_order", {"order_id": order_id, "customer_email": email})


def _results(request: dict) -> list[dict]:
    """The tool results a request carried in its last message, parsed, in call order."""
    blocks = request["messages"][-1]["content"]
    return [json.loads(block["content"]) for block in blocks if block.get("type") == "tool_result"]


def _codes(results: list[dict]) -> list[str]:
    return [result.get("error", "ok") for result in results]


_MESSAGES = itertools.count()


def _turn(stub, customer, *calls, said: str = "") -> list[dict]:
    """One turn in which the model makes `calls` in one response: the results it was sent back."""
    # Words the validator lets through: two replaced replies in a row would hand the conversation over.
    stub.reset(message(*calls), message(text("Is there anything else about your order?")))
    # Each message its own words: the same words twice in a row are a double submit, answered once.
    assert customer.send(said or f"Here are my details ({next(_MESSAGES)}).").status_code == 200
    return _results(stub.sent[1])


def _client(address: str) -> ChatClient:
    client = ChatClient()
    client.http.defaults["REMOTE_ADDR"] = address
    return client


def _guessed_at(stub, number: str, guesses: int) -> None:
    """`guesses` wrong emails for the order, each from a browser and address of its own (the attack of
    issue 50: numbers are sequential, addresses rotate)."""
    for n in range(guesses):
        _turn(stub, _client(f"198.51.100.{n + 1}"), _lookup(number, f"guess{n}@example.com"))


def _code_emailed() -> str:
    """The code of the latest email that holds one, as the outbox keeps it to send."""
    sent = CustomerEmail.objects.filter(subject__contains="code").latest("pk")
    found = re.search(r"^(\d{6})$", sent.body, re.MULTILINE)
    assert found is not None, sent.body
    return found.group(1)


def test_one_response_runs_only_the_first_calls_of_160_guesses(model_api, demo_data, customer, limits):
    limits.BOOKLY_MAX_TOOL_CALLS_PER_RESPONSE = 8
    guesses = [f"reader{n}@example.com" for n in range(160)]
    guesses[100] = RIGHT
    counts = Counts()

    results = _turn(model_api, customer, *[_lookup("BK-10042", email) for email in guesses])

    assert _codes(results) == [NOT_FOUND] * 8 + [ToolError.TOO_MANY_TOOL_CALLS] * 152
    assert "Goldfinch" not in json.dumps(results)  # the order's details never reached the model
    assert not Conversation.objects.get().orders.exists()
    assert counts.moved("bookly_identity_check_limits_total", limit=CheckLimit.CALLS_PER_RESPONSE) == 152
    traced = TurnTrace.objects.get().tool_calls
    assert [call["result"] for call in traced] == [NOT_FOUND] * 8 + [ToolError.TOO_MANY_TOOL_CALLS] * 152


def test_failed_checks_are_capped_per_conversation_across_turns(claude, demo_data, customer, limits):
    limits.BOOKLY_FAILED_CHECKS_PER_CONVERSATION = 3
    counts = Counts()
    # Other order numbers: only the conversation's count can stop the right pair below.
    first = _turn(claude, customer, *[_lookup(f"BK-2000{n}", RIGHT) for n in range(5)])

    later = _turn(claude, customer, _lookup("BK-10042", RIGHT))

    assert _codes(first) == [NOT_FOUND] * 3 + [SPENT] * 2
    assert _codes(later) == [SPENT]  # the right pair, past the limit, finds nothing
    assert not Conversation.objects.get().orders.exists()
    assert counts.moved("bookly_identity_check_limits_total", limit=CheckLimit.CONVERSATION) == 3


def test_an_order_guessed_at_from_many_addresses_asks_its_owner_for_a_code_never_refuses_them(
    claude, demo_data, limits, django_capture_on_commit_callbacks
):
    limits.BOOKLY_FAILED_CHECKS_PER_ORDER = 3
    _guessed_at(claude, "BK-10042", 4)
    owner = _client("203.0.113.50")

    with django_capture_on_commit_callbacks(execute=True):
        [asked] = _turn(claude, owner, _lookup("BK-10042", RIGHT))
    [emailed] = mail.outbox  # sent through Django's mail backend, to the order's address
    assert (emailed.to, _code_emailed() in emailed.body) == ([RIGHT], True)
    [shown] = _turn(claude, owner, _lookup("BK-10042", RIGHT), said=f"The code is {_code_emailed()}")

    assert asked["error"] == CODE and "Goldfinch" not in json.dumps(asked)
    assert "The Goldfinch" in [item["title"] for item in shown["items"]]
    assert Conversation.objects.get(orders__number="BK-10042")  # found, by the owner's conversation
    # Found once, the order goes on without a code in that conversation; another order is not held.
    assert _codes(_turn(claude, owner, _lookup("BK-10042", RIGHT), _lookup("BK-10103", RIGHT))) == ["ok"] * 2


def test_past_the_order_limit_a_wrong_email_reads_and_counts_exactly_as_a_right_one(
    claude, demo_data, limits
):
    """The answer, and the client's count of failures (its delay), are the same for a right and a wrong
    email: a known-wrong email, then the email to test twice, in one response (the review's oracle)."""
    limits.BOOKLY_FAILED_CHECKS_PER_ORDER = 1
    limits.BOOKLY_FAILED_CHECK_DELAY_SECONDS = 60
    _guessed_at(claude, "BK-10042", 1)
    known_wrong = _lookup("BK-10042", "nobody@example.com")

    wrong = _turn(
        claude, _client("198.51.100.77"), known_wrong, *[_lookup("BK-10042", "guess9@example.com")] * 2
    )
    assert not CustomerEmail.objects.exists()
    right = _turn(claude, _client("198.51.100.78"), known_wrong, *[_lookup("BK-10042", RIGHT)] * 2)

    assert wrong == right
    assert _codes(right) == [CODE, CODE, SOON]
    assert CustomerEmail.objects.filter(to=RIGHT).count() == 1  # one code for that conversation


def test_a_wrong_code_counts_as_a_failed_check_of_its_client(claude, demo_data, limits):
    limits.BOOKLY_FAILED_CHECKS_PER_ORDER = 1
    limits.BOOKLY_FAILED_CHECKS_PER_CONVERSATION = 3
    _guessed_at(claude, "BK-10042", 1)
    owner = _client("203.0.113.50")
    _turn(claude, owner, _lookup("BK-10042", RIGHT))  # the ask counts, as a wrong email's would
    code = _code_emailed()
    wrong = [f"{(int(code) + n) % 10**6:06d}" for n in range(1, 4)]  # each its own message

    typed = [_turn(claude, owner, _lookup("BK-10042", RIGHT), said=guess)[0]["error"] for guess in wrong]

    assert typed == [CODE, CODE, SPENT]  # the conversation's three failures, then stopped


def test_ten_wrong_codes_void_a_code_and_another_conversations_cannot_void_the_owners(
    claude, demo_data, limits
):
    limits.BOOKLY_FAILED_CHECKS_PER_ORDER = 1
    _guessed_at(claude, "BK-10042", 1)
    owner, guesser = _client("203.0.113.50"), _client("192.0.2.1")
    _turn(claude, owner, _lookup("BK-10042", RIGHT))
    owners = _code_emailed()
    _turn(claude, guesser, _lookup("BK-10042", RIGHT))
    guessers = _code_emailed()
    wrong = [f"{(int(guessers) + n) % 10**6:06d}" for n in range(1, 12)]
    wrong = [guess for guess in wrong if guess != owners][:10]

    for guess in wrong:  # ten wrong codes in the guesser's conversation
        _turn(claude, guesser, _lookup("BK-10042", RIGHT), said=guess)
    [void] = _turn(claude, guesser, _lookup("BK-10042", RIGHT), said=guessers)
    [shown] = _turn(claude, owner, _lookup("BK-10042", RIGHT), said=f"It is {owners}")

    assert void["error"] == CODE  # the guesser's code was void after ten wrong ones
    assert "items" in shown  # the owner's own code still holds


def test_a_message_holding_many_codes_is_read_for_one(claude, demo_data, limits):
    """One message with 570 codes around the live one (the review's brute force) tries only its last."""
    limits.BOOKLY_FAILED_CHECKS_PER_ORDER = 1
    _guessed_at(claude, "BK-10042", 1)
    owner = _client("203.0.113.50")
    _turn(claude, owner, _lookup("BK-10042", RIGHT))
    code = int(_code_emailed())
    many = " ".join(f"{(code + n) % 10**6:06d}" for n in range(-285, 286) if n != 285) + " 000000"

    [tried] = _turn(claude, owner, _lookup("BK-10042", RIGHT), said=many)

    assert tried["error"] == CODE


def test_an_order_gets_five_code_emails_a_window_then_a_person_is_offered(claude, demo_data, limits):
    limits.BOOKLY_FAILED_CHECKS_PER_ORDER = 1
    _guessed_at(claude, "BK-10042", 1)

    asked = [_turn(claude, _client(f"192.0.2.{n}"), _lookup("BK-10042", RIGHT))[0] for n in range(6)]

    assert _codes(asked) == [CODE] * 5 + [SPENT]
    assert CustomerEmail.objects.filter(to=RIGHT).count() == 5


def test_an_order_in_two_shops_asks_for_the_code_before_which_shop(model_api, customer, limits, in_two_shops):
    """Past the order's limit the shops are not named before the code (they would tell a guesser the
    email was right); with the code, which shop is asked, and once named, that shop's order."""
    limits.BOOKLY_FAILED_CHECKS_PER_ORDER = 1
    _guessed_at(model_api, "BK-20001", 1)

    [asked] = _turn(model_api, customer, _lookup("BK-20001", RIGHT))
    [wrong] = _turn(model_api, _client("192.0.2.7"), _lookup("BK-20001", "nobody@example.com"))
    [which] = _turn(model_api, customer, _lookup("BK-20001", RIGHT), said=_code_emailed())
    [named] = _turn(model_api, customer, _lookup("BK-20001", RIGHT), said=f"The one from {US}.")

    assert asked == wrong and asked["error"] == CODE
    assert which["error"] == ToolError.WHICH_SHOP
    assert [item["title"] for item in named["items"]] == ["Emma"]


def test_the_code_is_kept_as_an_hmac_not_as_typed(claude, demo_data, limits):
    limits.BOOKLY_FAILED_CHECKS_PER_ORDER = 1
    _guessed_at(claude, "BK-10042", 1)
    _turn(claude, _client("203.0.113.50"), _lookup("BK-10042", RIGHT))
    order = Order.objects.get(number="BK-10042")
    conversation = Conversation.objects.latest("pk").pk

    kept = caches["default"].get(f"bookly:check-code:{order.pk}:{conversation}")

    assert _code_emailed() not in kept
    expected = salted_hmac("bookly.check-code", f"{order.pk}:{conversation}:{_code_emailed()}").hexdigest()
    assert hmac.compare_digest(kept, expected)


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("My code is 482-913", "482913"),
        ("the code: 482 913, thanks", "482913"),
        ("123456 no wait, 654321", "654321"),
        ("#104523", None),
        ("BK-104523", None),
        ("call me on 555 123 4567", None),
        ("it cost 1,234,567", None),
    ],
)
def test_a_code_is_the_last_six_digits_that_are_no_other_number(text, code):
    assert code_typed(text) == code


def test_a_customer_the_store_signed_in_is_never_held_back_for_their_own_orders(
    claude, demo_data, limits, settings
):
    settings.BOOKLY_CUSTOMER_SIGNING_SECRET = "a-store-secret-of-thirty-two-characters-or-more"
    limits.BOOKLY_FAILED_CHECKS_PER_ORDER, limits.BOOKLY_FAILED_CHECKS_PER_IP = 2, 1
    _guessed_at(claude, "BK-10042", 2)
    sarah = _client("198.51.100.1")  # the guessers' address: that client is past its limit too
    now = int(time.time())
    secret = settings.BOOKLY_CUSTOMER_SIGNING_SECRET
    signature = customer_signature(secret=secret, email=RIGHT, timestamp=now)
    assert sarah.sign_in({"email": RIGHT, "time": now, "signature": signature}).json()["signed_in"]

    own = _turn(claude, sarah, _lookup("BK-10042", RIGHT), _lookup("BK-10042", "guess5@example.com"))
    # Her own email with an order number that is not hers: held back as anyone's guess would be.
    other = _turn(claude, sarah, _lookup("BK-10089", RIGHT))

    assert _codes(own) == ["ok", SPENT]  # her own order; another email from her address is not
    assert _codes(other) == [SPENT]
    assert not CustomerEmail.objects.exists()


def test_a_signed_in_customers_own_miss_locks_no_order_number(claude, demo_data, limits, settings):
    settings.BOOKLY_CUSTOMER_SIGNING_SECRET = "a-store-secret-of-thirty-two-characters-or-more"
    limits.BOOKLY_FAILED_CHECKS_PER_ORDER = 1
    now = int(time.time())
    signature = customer_signature(secret=settings.BOOKLY_CUSTOMER_SIGNING_SECRET, email=RIGHT, timestamp=now)
    signed_in = _client("198.51.100.5")
    signed_in.sign_in({"email": RIGHT, "time": now, "signature": signature})

    _turn(claude, signed_in, _lookup("BK-10089", RIGHT))  # James's order, with her own email

    assert not order_checks_spent(scope=CheckScope(number="BK-10089", conversation_id=0))


def test_a_clients_failed_checks_wait_longer_after_each(claude, demo_data, limits, monkeypatch):
    limits.BOOKLY_FAILED_CHECK_DELAY_SECONDS = 2
    guesser = _client("198.51.100.9")
    clock = [1_000_000.0]
    monkeypatch.setattr("support.assistant.budget._now", lambda: clock[0])

    burst = _turn(claude, guesser, *[_lookup("BK-10042", f"guess{n}@example.com") for n in range(3)])
    clock[0] += 2.5  # the 2 s wait passed
    after_wait = _turn(claude, guesser, _lookup("BK-10042", "guess3@example.com"), _lookup("BK-10042", RIGHT))
    clock[0] += 3  # 4 s are needed now
    early = _turn(claude, guesser, _lookup("BK-10042", RIGHT))
    clock[0] += 1.5
    in_time = _turn(claude, guesser, _lookup("BK-10042", RIGHT))

    assert _codes(burst) == [NOT_FOUND, NOT_FOUND, SOON]
    assert burst[2]["retry_after_seconds"] == 2
    assert _codes(after_wait) == [NOT_FOUND, SOON]
    assert (_codes(early), early[0]["retry_after_seconds"]) == ([SOON], 1)
    assert _codes(in_time) == ["ok"]
    scope = CheckScope(number="BK-1", conversation_id=0, client_address="198.51.100.9")
    assert client_checks_held(scope=scope) is None  # a right check clears no count, but waits none


def test_failed_checks_are_capped_per_client_address_across_conversations(claude, demo_data, limits):
    limits.BOOKLY_FAILED_CHECKS_PER_IP = 3
    guesser = ChatClient()
    guesser.http.defaults["REMOTE_ADDR"] = "2001:db8:1:2::7"
    _turn(claude, guesser, *[_lookup(f"BK-2000{n}", RIGHT) for n in range(3)])
    # A new conversation, from another address in the same /64 (one customer's IPv6 network).
    again = ChatClient()
    again.http.defaults["REMOTE_ADDR"] = "2001:db8:1:2::99"
    elsewhere = ChatClient()
    elsewhere.http.defaults["REMOTE_ADDR"] = "2001:db8:1:3::7"

    assert _codes(_turn(claude, again, _lookup("BK-10042", RIGHT))) == [SPENT]
    assert _codes(_turn(claude, elsewhere, _lookup("BK-10042", RIGHT))) == ["ok"]
    assert Conversation.objects.filter(orders__isnull=False).count() == 1


def test_an_rma_number_with_the_wrong_email_counts_too(claude, demo_data, customer, limits):
    limits.BOOKLY_FAILED_CHECKS_PER_CONVERSATION = 2
    calls = [
        tool_use("lookup_order", {"rma_number": f"RMA-AAAA000{n}", "customer_email": RIGHT}) for n in range(3)
    ]

    assert _codes(_turn(claude, customer, *calls)) == [NOT_FOUND, NOT_FOUND, SPENT]


def test_the_count_is_read_from_the_shared_cache_not_this_connection(db, limits):
    """What one worker counted, another reads: the count lives in the cache (local memory here, Redis
    with REDIS_URL on CI's PostgreSQL leg), not in a connection or process of its own."""
    limits.BOOKLY_FAILED_CHECKS_PER_ORDER = 2
    scope = CheckScope(number="BK-10042", conversation_id=1, client_address="192.0.2.1")
    for _ in range(2):
        identity_check_failed(scope=scope)
    other_worker = caches.create_connection("default")  # a new client of the same cache
    key = f"bookly:failed-checks:order:{hashlib.sha256(b'BK-10042').hexdigest()[:32]}"

    assert other_worker.get(key) == 2
    assert order_checks_spent(scope=CheckScope(number="bk-10042", conversation_id=2))
    assert not order_checks_spent(scope=CheckScope(number="BK-10089", conversation_id=2))


def test_the_built_in_model_says_it_cannot_check_more_and_offers_a_person(
    offline, demo_data, customer, limits
):
    limits.BOOKLY_FAILED_CHECKS_PER_CONVERSATION = 1
    customer.send("Where is order BK-10042? My email is wrong@example.com")

    reply = customer.send("Where is order BK-10042? My email is sarah.chen@example.com").json()["reply"]

    assert reply == CHECKS_SPENT_REPLY
    assert customer.send("yes please").json()["status"] == "waiting"
    assert OFFER_PERSON in CHECKS_SPENT_REPLY


def test_the_built_in_model_asks_for_the_code_and_reads_it_back(offline, demo_data, customer, limits):
    limits.BOOKLY_FAILED_CHECKS_PER_ORDER = 1
    guesser = _client("198.51.100.1")
    guesser.send("Where is order BK-10042? My email is guess@example.com")

    asked = customer.send("Where is order BK-10042? My email is sarah.chen@example.com").json()["reply"]
    answered = customer.send(f"My code is {_code_emailed()[:3]}-{_code_emailed()[3:]}").json()["reply"]

    assert asked == CODE_NEEDED_REPLY  # as worded: layer 4 let it through
    assert "BK-10042" in answered and "Goldfinch" in answered


def test_a_number_written_in_another_shops_shape_counts_against_the_same_orders(db, limits):
    """With a Shopify shop (#1104) beside the demo's, "1104", "#1104" and "BK-1104" reach the same
    orders: their failed checks are one count, not one per way of writing."""
    shop = shop_of_platform(platform=OrderSource.SHOPIFY, address="books.myshopify.com")
    shop.number_pattern, shop.number_example = "#[0-9]{4,}", "#1001"
    shop.save()
    limits.BOOKLY_FAILED_CHECKS_PER_ORDER = 2
    identity_check_failed(scope=CheckScope(number="1104", conversation_id=1))
    identity_check_failed(scope=CheckScope(number="#1104", conversation_id=2))
    assert order_checks_spent(scope=CheckScope(number="BK-1104", conversation_id=3))


AU, US = "books-au.myshopify.com", "books-us.myshopify.com"


@pytest.fixture
def in_two_shops(db):
    """BK-20001 in two shops, both the same customer's, each delivered three days ago with one book."""
    for address, title in [(AU, "Dune"), (US, "Emma")]:
        order = delivered_order(
            days_ago=3, today=store_today(), number="BK-20001", customer_email=RIGHT,
            source=OrderSource.SHOPIFY, shop=shop_of_platform(platform=OrderSource.SHOPIFY, address=address),
            categories=(),
        )  # fmt: skip
        OrderItemFactory(order=order, title=title)


def test_an_order_of_one_number_in_two_shops_is_asked_about_never_counted_as_a_failed_check(
    model_api, customer, limits, in_two_shops
):
    """The same customer has BK-20001 in two shops: the tool answers which_shop (no order's facts, no
    failed check), and once the customer names the shop, that shop's order."""
    limits.BOOKLY_FAILED_CHECKS_PER_CONVERSATION = 1

    [asked] = _turn(model_api, customer, _lookup("BK-20001", RIGHT))
    model_api.reset(message(_lookup("BK-20001", RIGHT)), message(text("It is on its way.")))
    assert customer.send("The one from books-us.myshopify.com, please.").status_code == 200
    [answered] = _results(model_api.sent[1])

    assert (asked["error"], sorted(asked["shops"])) == (
        ToolError.WHICH_SHOP,
        ["books-au.myshopify.com", "books-us.myshopify.com"],
    )
    assert "items" not in asked and "status" not in asked
    assert [item["title"] for item in answered["items"]] == ["Emma"]


def test_a_return_checked_for_one_shops_order_starts_none_for_the_others_of_its_number(
    model_api, customer, limits, in_two_shops
):
    """The check that passed is the order's, not its number's: the other shop's BK-20001 needs its own."""
    checked = tool_use("check_return_eligibility", {"order_id": "BK-20001", "customer_email": RIGHT})
    model_api.reset(message(checked), message(text("It can be returned. Shall I start the return?")))
    assert customer.send(f"Can I return BK-20001 from {AU}? {RIGHT}").status_code == 200
    [eligible] = _results(model_api.sent[1])
    start = tool_use(
        "initiate_return", {"order_id": "BK-20001", "customer_email": RIGHT, "reason": "Changed my mind"}
    )
    model_api.reset(message(start), message(text("Done.")))
    assert customer.send(f"Yes, but the one from {US}.").status_code == 200
    [started] = _results(model_api.sent[1])

    assert (eligible["eligible"], [item["title"] for item in eligible["items"]]) == (True, ["Dune"])
    assert started["error"] == ToolError.ELIGIBILITY_NOT_VERIFIED
    assert not ReturnRecord.objects.exists()
