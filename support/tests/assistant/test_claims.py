"""Claim-level grounding, table-driven: correct replies about the demo orders pass, invented ones do not.

The tool results are the real tools' answers on the demo data; each row is a reply a model could
write in that conversation, with the customer's last message.
"""

import json

import pytest

from orders.numbers import ORDER_MENTION, ORDER_NUMBERS
from support.assistant.capabilities import order_status, returns
from support.assistant.capabilities.base import ToolContext
from support.assistant.capabilities.registry import CAPABILITIES, tool_execute
from support.assistant.claims import ToolResult, eligibility_claims, return_claims, status_claims
from support.assistant.claims import wordings as claim_wordings
from support.assistant.prompts import system_prompt
from support.assistant.validator import reply_validate
from support.models import Conversation

EMAILS = {
    "BK-10042": "sarah.chen@example.com",
    "BK-10089": "james.murphy@example.com",
    "BK-10103": "sarah.chen@example.com",
    "BK-9871": "maria.gonzalez@example.com",
    "BK-77777": "sarah.chen@example.com",
}


@pytest.fixture
def tool(demo_data):
    """Runs a real tool in one conversation and returns its result as the model read it."""
    context = ToolContext(conversation=Conversation.objects.create(session_handle="claims"))

    def run(name: str, order: str | None = None, **arguments) -> ToolResult:
        if order is not None:
            arguments |= {"order_id": order, "customer_email": EMAILS[order]}
        outcome = tool_execute(name=name, arguments=arguments, context=context)
        return ToolResult(name, json.dumps(outcome.result))

    return run


@pytest.fixture
def contexts(tool):
    """What the tools returned so far, by conversation."""
    lookup = {number: tool("lookup_order", number) for number in EMAILS}
    eligibility = {
        number: tool("check_return_eligibility", number) for number in ("BK-10042", "BK-9871", "BK-10089")
    }
    started = tool("initiate_return", "BK-10042", reason="Changed my mind")
    return {
        "one_delivered": [lookup["BK-10042"]],
        "said_a_date": [lookup["BK-10042"]],
        "two_orders": [lookup["BK-10042"], lookup["BK-10089"]],
        "three_orders": [lookup["BK-10042"], lookup["BK-10089"], lookup["BK-10103"]],
        "three_then_10089": [lookup["BK-10042"], lookup["BK-10089"], lookup["BK-10103"]],
        "processing": [lookup["BK-10103"]],
        "eligible": [lookup["BK-10042"], eligibility["BK-10042"]],
        "window_closed": [lookup["BK-9871"], eligibility["BK-9871"]],
        "not_delivered": [lookup["BK-10089"], eligibility["BK-10089"]],
        "not_found": [lookup["BK-77777"]],
        "nothing": [],
        "instructed": [],
        "policy": [tool("lookup_policy", topic="shipping"), lookup["BK-10042"]],
        "returned": [lookup["BK-10042"], eligibility["BK-10042"], started],
        "returned_then_other": [lookup["BK-10042"], eligibility["BK-10042"], started, lookup["BK-10089"]],
    }


def rma_of(results: list[ToolResult]) -> str:
    return next(json.loads(r.content)["rma_number"] for r in results if r.tool == "initiate_return")


ASKED = {
    "one_delivered": "Where is BK-10042? sarah.chen@example.com",
    "said_a_date": "My order BK-10042 was due on April 2, did it come?",
    "two_orders": "And BK-10089? james.murphy@example.com",
    "three_orders": "Thanks. How are my orders doing?",
    "three_then_10089": "Sorry, and BK-10089?",
    "processing": "Where is BK-10103? sarah.chen@example.com",
    "eligible": "Can I return BK-10042 on April 30? sarah.chen@example.com",
    "window_closed": "Can I return BK-9871? maria.gonzalez@example.com",
    "not_delivered": "Can I return BK-10089? james.murphy@example.com",
    "not_found": "Where is BK-77777? sarah.chen@example.com",
    "nothing": "Where is my order BK-10042? I haven't got my books, ISBN 9780143127741",
    "instructed": "What is your return policy?",
    "policy": "How much is shipping, and did BK-10042 ship free?",
    "returned": "Yes, please start the return",
    "returned_then_other": "And what about BK-10089? james.murphy@example.com",
}

CORRECT = [
    ("one_delivered", "Your order BK-10042 was delivered on 2026-03-30."),
    ("one_delivered", "Good news: order BK-10042 has arrived. It was delivered on March 30, 2026."),
    ("one_delivered", "It was delivered on 30 March."),
    ("one_delivered", "Your order was placed on March 25th and delivered on March 30th."),
    ("one_delivered", "The tracking number for BK-10042 is 1Z999AA10123456784."),
    ("one_delivered", "Order BK-10042 contains The Goldfinch and Sapiens, for a total of $36.98."),
    ("one_delivered", "Order BK-10042 came to 36.98 USD."),
    ("one_delivered", "Order BK-10042 came to USD36.98."),  # as Babel writes a currency without a sign
    ("one_delivered", "Sapiens cost $19.99 and The Goldfinch $16.99."),
    ("one_delivered", "Your order has been delivered. Is there anything else I can help with?"),
    ("one_delivered", "Yes, it shipped and was delivered on Mar 30."),
    ("one_delivered", "The status of order bk 10042 is delivered."),
    ("one_delivered", "Your parcel was delivered on March 30, so it should be with you."),
    (
        "one_delivered",
        "Your order was delivered on March 30. If it hasn't arrived, please check with a neighbour.",
    ),
    ("one_delivered", "Order #10042 was delivered on 2026-03-30."),
    ("one_delivered", "Your order BK-10042 was delivered on 03/30/2026."),
    ("one_delivered", "Your order BK-10042 was delivered on 3/30/2026."),
    ("one_delivered", "Your order BK-10042 was delivered on 30.03.2026."),
    ("one_delivered", "Your order BK-10042 was delivered on 2026/03/30."),
    ("one_delivered", "It arrived on 2026-03-30."),
    ("one_delivered", "Your package was delivered on March 30 2026."),
    ("one_delivered", "Your order BK-10042 has been delivered, and its total was $36.98."),
    ("one_delivered", "Your order was placed on 2026-03-25 and delivered five days later."),
    ("one_delivered", "Sure! Order BK-10042 was delivered on Monday, March 30."),
    ("one_delivered", "The Goldfinch is by Donna Tartt, and it was delivered with Sapiens on March 30."),
    (
        "two_orders",
        "Order BK-10089 has shipped and is on its way. Its tracking number is 1Z999AA10987654321.",
    ),
    ("two_orders", "BK-10089 was ordered on April 10 and is in transit."),
    ("two_orders", "Order BK-10042 was delivered on March 30, and BK-10089 is on its way."),
    (
        "two_orders",
        "Your first order, BK-10042, arrived on March 30; BK-10089 has shipped, tracking 1Z999AA10987654321.",
    ),
    ("two_orders", "Project Hail Mary from order BK-10089 is on its way."),
    ("two_orders", "BK-10089 contains Project Hail Mary ($18.99)."),
    ("two_orders", "It is on its way."),
    ("two_orders", "The Goldfinch and Sapiens (order BK-10042) were delivered on March 30."),
    ("two_orders", "BK-10042 was delivered on March 30. BK-10089 was ordered on April 10 and is in transit."),
    ("two_orders", "Your order BK-10089 was placed on April 10 and hasn't been delivered yet."),
    ("three_orders", "Order BK-10042 was delivered on March 30."),
    (
        "three_orders",
        "Order BK-10103 has not shipped yet; BK-10042 was delivered and BK-10089 is on its way.",
    ),
    ("three_orders", "BK-10103 is still being prepared, BK-10089 is in transit and BK-10042 has arrived."),
    ("processing", "Order BK-10103 is still being processed and hasn't shipped yet."),
    ("processing", "Your order BK-10103 has not been shipped yet; it was ordered on April 13."),
    (
        "processing",
        "The status of order BK-10103 is processing. It contains Tomorrow, and Tomorrow, and Tomorrow.",
    ),
    ("processing", "There is no tracking number yet because order BK-10103 has not shipped."),
    ("processing", "Once it has shipped, you'll get a tracking number by email."),
    ("processing", "Your order BK-10103 is being prepared and will ship soon."),
    ("processing", "Your order of Tomorrow, and Tomorrow, and Tomorrow came to $17.99."),
    ("eligible", "Order BK-10042 can be returned until April 29, 2026."),
    ("eligible", "Both The Goldfinch and Sapiens can be returned."),
    (
        "eligible",
        "Yes, your order is eligible for a return: it was delivered on 2026-03-30, within the return window.",
    ),
    ("eligible", "You can return it until 2026-04-29. Would you like me to start the return?"),
    ("eligible", "The last day to start a return for BK-10042 is April 29."),
    (
        "eligible",
        "The refund goes to the original payment method within 7 business days after we receive the items.",
    ),
    ("eligible", "Good news, Sapiens is returnable, and so is The Goldfinch."),
    ("window_closed", "I'm sorry, order BK-9871 can't be returned: the 30-day window ended on 2026-03-20."),
    (
        "window_closed",
        "Order BK-9871 was delivered on February 18, so it is no longer eligible for a return.",
    ),
    ("window_closed", "The Midnight Library can't be returned because the return window has closed."),
    ("window_closed", "I checked order BK-9871, and it can't be returned."),
    ("window_closed", "Order BK-9871 was delivered on 2026-02-18 and contains The Midnight Library."),
    ("not_delivered", "Order BK-10089 can't be returned yet because it has not been delivered."),
    ("not_delivered", "BK-10089 is still on its way, so it isn't eligible for a return yet."),
    ("not_found", "I couldn't find an order BK-77777 with that email address. Could you check both?"),
    (
        "not_found",
        "No order matches BK-77777 together with that email. Please check the number and the email.",
    ),
    ("nothing", "I can look up order BK-10042. What email address did you use for it?"),
    ("nothing", "To check the status of BK-10042, I need the email address on the order."),
    ("nothing", "Hello! I can help with orders, returns and store policies."),
    ("policy", "Standard shipping is free on orders over $25 and takes 3 to 5 business days."),
    ("policy", "Your order BK-10042 came to $36.98, over $25, so its shipping was free."),
    ("policy", "Expedited shipping costs $9.99 and takes 1 to 2 business days."),
    ("returned", "Your return for order BK-10042 has started: RMA number {rma}."),
    (
        "returned",
        "Your RMA number is {rma}. We will email a prepaid return label to the address on the order.",
    ),
    ("returned", "Return {rma} covers The Goldfinch and Sapiens."),
    ("returned_then_other", "Order BK-10089 is on its way; your return {rma} is for order BK-10042."),
    ("one_delivered", "It's not in transit anymore: BK-10042 was delivered on March 30."),
    ("processing", "It isn't on its way just yet; order BK-10103 is still being prepared."),
    ("nothing", "I'm sorry your books haven't arrived. What email did you use for order BK-10042?"),
    ("eligible", "April 30 would be too late: the last day to start a return for BK-10042 is April 29."),
    ("eligible", "The refund goes to the original payment method within 7 business days."),
    ("window_closed", "The 30-day return window for BK-9871 ended on March 20, so it can't be returned."),
    ("two_orders", "Both BK-10042 and BK-10089 have shipped."),
    (
        "two_orders",
        "Your Goldfinch and Sapiens order was delivered on March 30, and Project Hail Mary is in transit.",
    ),
    ("three_then_10089", "It is on its way."),
    ("nothing", "Is it still on its way?"),
    ("returned", "Your return label is on its way to your inbox."),
    ("one_delivered", "Ebooks and audiobooks cannot be returned."),
    ("two_orders", "Here it is again: 1Z999AA10987654321."),
    (
        "one_delivered",
        "I'm sorry to hear your order hasn't arrived. Our records show it was delivered on March 30.",
    ),
    ("one_delivered", "It's no longer in transit: it was delivered on March 30."),
    ("instructed", "A return can be started up to 30 days after delivery; refunds take 7 business days."),
    ("nothing", "Thanks, I see the ISBN 9780143127741 you sent. What is the email on order BK-10042?"),
    ("returned", "Your return {rma} has been started, and we will email you a prepaid label."),
]

WRONG = [
    # A status or detail for an order no tool returned.
    ("nothing", "Your order BK-10042 has shipped and is on its way.", "claim_without_lookup"),
    ("nothing", "Order BK-10042 was delivered on March 30.", "claim_without_lookup"),
    ("nothing", "Good news, it's on its way!", "claim_without_lookup"),
    ("nothing", "BK-10042 is still being processed.", "claim_without_lookup"),
    ("nothing", "Your order BK-10042 has been cancelled.", "claim_without_lookup"),
    ("nothing", "BK-10042 can be returned until April 29.", "eligibility_not_checked"),
    ("nothing", "The tracking number for BK-10042 is 1Z999AA10123456784.", "claim_without_lookup"),
    ("not_found", "Order BK-77777 was delivered yesterday.", "claim_without_lookup"),
    (
        "not_found",
        "Order BK-77777 is on its way, but I couldn't match it to that email.",
        "claim_without_lookup",
    ),
    ("one_delivered", "Your order BK-10042 is eligible for a return.", "eligibility_not_checked"),
    # A status the lookup did not return.
    ("one_delivered", "Your order BK-10042 is still processing and has not shipped.", "status_not_in_result"),
    ("one_delivered", "Your order is on its way and should arrive soon.", "status_not_in_result"),
    ("one_delivered", "Order BK-10042 hasn't arrived yet.", "status_not_in_result"),
    ("one_delivered", "Your order BK-10042 was cancelled.", "status_not_in_result"),
    ("processing", "Order BK-10103 has shipped.", "status_not_in_result"),
    ("processing", "Your order BK-10103 was delivered on April 13.", "status_not_in_result"),
    ("two_orders", "BK-10089 was delivered on April 10.", "status_not_in_result"),
    ("two_orders", "The status of order BK-10089 is delivered.", "status_not_in_result"),
    ("two_orders", "Order BK-10042 is on its way, and BK-10089 was delivered.", "status_not_in_result"),
    ("processing", "BK-10103 is on its way with tracking number 1Z999AA10123456784.", "status_not_in_result"),
    ("two_orders", "It was delivered on March 30.", "status_not_in_result"),
    # One order's facts given to another.
    ("two_orders", "Order BK-10042 was delivered on April 10.", "date_not_for_order"),
    ("two_orders", "BK-10089 was ordered on March 25.", "date_not_for_order"),
    ("two_orders", "The total for BK-10089 is $36.98.", "amount_not_for_order"),
    ("two_orders", "BK-10042's tracking number is 1Z999AA10987654321.", "tracking_not_for_order"),
    ("two_orders", "Order BK-10089 contains The Goldfinch.", "title_not_in_order"),
    ("two_orders", "Project Hail Mary from BK-10042 was delivered.", "title_not_in_order"),
    ("three_orders", "BK-10042 arrived on March 30 and BK-10089 shipped on April 11.", "date_not_for_order"),
    ("returned_then_other", "Return {rma} is for order BK-10089.", "rma_not_for_order"),
    # Eligibility and the last return day.
    ("eligible", "Order BK-10042 can't be returned.", "eligibility_not_in_result"),
    ("window_closed", "Order BK-9871 can still be returned until March 20.", "eligibility_not_in_result"),
    ("not_delivered", "Order BK-10089 is eligible for a return.", "eligibility_not_in_result"),
    ("eligible", "The last day to return BK-10042 is May 15.", "date_not_for_order"),
    ("one_delivered", "Your order BK-10042 was delivered on March 31.", "date_not_for_order"),
    ("one_delivered", "Your order BK-10042 was delivered on 03/31/2026.", "date_not_for_order"),
    ("one_delivered", "Your order BK-10042 was delivered on 31.03.2026.", "date_not_for_order"),
    ("one_delivered", "Your order BK-10042 was delivered on 2026/03/31.", "date_not_for_order"),
    ("one_delivered", "Your total was $39.98.", "amount_not_for_order"),
    ("one_delivered", "Your order BK-10042 came to R$36.98.", "amount_currency_not_for_order"),
    ("one_delivered", "Your order BK-10042 came to 36.98 EUR.", "amount_currency_not_for_order"),
    # Refund terms, return progress, and wordings first seen on the held-out sets.
    (
        "eligible",
        "Your refund reaches the original payment method within 14 business days.",
        "ungrounded_day_count",
    ),
    ("eligible", "You have 45 days from delivery to start a return.", "ungrounded_day_count"),
    (
        "not_delivered",
        "BK-10089 isn't eligible because the return window has closed.",
        "eligibility_not_in_result",
    ),
    ("one_delivered", "It's not in transit anymore: it is still being processed.", "status_not_in_result"),
    (
        "nothing",
        "BK-10042 is still processing; could you share your email so I can check?",
        "claim_without_lookup",
    ),
    ("two_orders", "Yes, both BK-10042 and BK-10089 are in transit.", "status_not_in_result"),
    ("one_delivered", "It was delivered on March 25.", "date_not_for_order"),
    ("eligible", "Your refund will be issued as store credit.", "ungrounded_refund_method"),
    ("said_a_date", "Yes, it was delivered on April 2.", "date_not_for_order"),
    ("one_delivered", "Order BK-10042 was delivered on March 30, 2025.", "date_not_for_order"),
    ("returned", "Your return {rma} has been approved.", "return_status_not_in_result"),
    (
        "returned",
        "We have received your return, and the refund has been issued.",
        "return_status_not_in_result",
    ),
    ("one_delivered", "Your return has been received.", "claim_without_lookup"),
    (
        "returned",
        "The refund reaches your card within 3 to 5 business days.",
        "refund_timeline_not_in_result",
    ),
    ("processing", "BK-10103 shipped yesterday.", "status_not_in_result"),
    ("processing", "Good news, your parcel arrived!", "status_not_in_result"),
    ("processing", "It is in the mail.", "status_not_in_result"),
    ("one_delivered", "Returns can be started up to 45 days after delivery.", "ungrounded_day_count"),
]


def verdict(contexts, name: str, reply: str):
    results = contexts[name]
    if "{rma}" in reply:
        reply = reply.format(rma=rma_of(results))
    said = ASKED[name]
    return reply_validate(
        reply=reply,
        customer_message=said,
        customer_words=[said],
        tool_results=results,
        instructions=system_prompt(),
    )


@pytest.mark.parametrize(("name", "reply"), CORRECT)
def test_a_correct_reply_passes(contexts, name, reply):
    assert verdict(contexts, name, reply).violations == ()


@pytest.mark.parametrize(("name", "reply", "code"), WRONG)
def test_an_invented_claim_is_caught_for_what_it_is(contexts, name, reply, code):
    assert code in verdict(contexts, name, reply).violations


@pytest.mark.parametrize(
    "content",
    ["not json", "[1, 2]", '{"order_id": 42}', '{"order_id": "BK-10042", "items": 7}', "", '{"error": null}'],
)
def test_a_result_it_cannot_read_gives_a_verdict_not_an_exception(content):
    assert (
        "claim_without_lookup"
        in reply_validate(
            reply="Your order BK-10042 has shipped.",
            customer_message="Where is BK-10042?",
            customer_words=["Where is BK-10042?"],
            tool_results=[ToolResult("lookup_order", content)],
        ).violations
    )


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("...", ("off_topic",)),
        ("\n\n", ("empty_reply",)),
        ("BK-10042", ("ungrounded_order_number",)),
        ("order #10042 was delivered", ("claim_without_lookup",)),
        ("Order bk 10042 is on its way.", ("ungrounded_order_number", "claim_without_lookup")),
    ],
)
def test_odd_replies_and_order_numbers_get_a_clear_verdict(reply, expected):
    verdict = reply_validate(reply=reply, customer_message="hi", customer_words=["hi"], tool_results=[])
    assert verdict.violations == expected


def test_the_validator_reads_each_capability_s_claims_from_its_module():
    """The wordings the claims are read with are the ones each capability owns (`Capability.claims`), in
    the registry's order: order_status.py an order's status, returns.py a return's progress and
    eligibility. A wording added to a capability is read with nothing else to change."""
    assert order_status.CAPABILITY.claims.statuses
    assert returns.CAPABILITY.claims.return_progress and returns.CAPABILITY.claims.eligibility
    read = {
        "statuses": claim_wordings._STATUS_RES(),  # made with the store's order numbers now
        "return_progress": claim_wordings._RETURN_RES,
        "eligibility": claim_wordings._ELIGIBLE_RES,
    }
    mention = ORDER_NUMBERS.mention_pattern
    for kind, compiled in read.items():
        owned = [wording for capability in CAPABILITIES for wording in getattr(capability.claims, kind)]
        assert [(pattern.pattern, value) for pattern, value in compiled] == [
            (pattern.replace(ORDER_MENTION, mention), value) for pattern, value in owned
        ], kind
        # The capabilities' very values, not a copy of their lists kept somewhere else.
        assert all(value is wording[1] for (_, value), wording in zip(compiled, owned, strict=True)), kind
    # As claims: the first of a module's wordings that matches says what is claimed.
    assert status_claims("It has not been shipped yet.") == [order_status.CAPABILITY.claims.statuses[0][1]]
    assert return_claims("Your return was rejected.") == [returns.CAPABILITY.claims.return_progress[0][1]]
    assert eligibility_claims("The window has closed for it.", set()) == [
        (returns.CAPABILITY.claims.eligibility[0][1], None)
    ]
