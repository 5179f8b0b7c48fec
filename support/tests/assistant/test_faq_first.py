"""The store's FAQ comes first (issue 37): a topic staff wrote answers whatever it is about, before any
built-in refusal, read from everything staff wrote for it (title, every example question, the answer)."""

import dataclasses
import time

import pytest

from support.assistant.builtin.faq import _words
from support.assistant.builtin.flow import _named, _place, _which_topic
from support.assistant.builtin.model import OfflineModel
from support.assistant.capabilities.registry import TOOLS
from support.assistant.prompts import TURN_REMINDER
from support.assistant.understanding.history import History
from support.assistant.understanding.wording import (
    NO_POLICY_REPLY,
    WHICH_TOPIC_LEAD,
    WHICH_TOPIC_ONE,
    Asked,
    Waiting,
)
from support.evals.faq import faq_topics
from support.llm.protocol import FAQ_TOPICS_TAG, OFFER_PERSON, REFUSAL_TEMPLATE, FaqTopic, faq_topic_line

DEMO = (
    FaqTopic(
        "returns_overview",
        "Returns and refunds",
        ("What is your return policy?", "Can I return a book?", "How long do refunds take?"),
        "Books can be returned within 30 days of delivery for a refund to the original payment method.",
    ),
    FaqTopic(
        "shipping",
        "Shipping options and times",
        ("How long does shipping take?", "Do you ship internationally?", "How much is shipping?"),
        "Standard shipping takes 3 to 5 business days; express takes 1 to 2.",
    ),
    FaqTopic(
        "password_reset",
        "Resetting your password",
        ("How do I reset my password?", "I forgot my password", "The reset email never came"),
        "Use the link on the sign-in page; the email arrives within minutes.",
    ),
)
PAYMENTS = FaqTopic(
    "payment_methods",
    "Payment methods",
    (
        "What payment methods do you accept?",
        "Which cards can I use?",
        "Do you take American Express?",
        "When is my card charged?",
        "Why was my card declined?",
    ),
    "We accept Visa, Mastercard, American Express, PayPal, Klarna and Bookly gift cards. Your card is "
    "charged when the order ships. If a payment is declined, check the billing address or try another card.",
)
NEWSLETTER = FaqTopic(
    "newsletter",
    "Our newsletter",
    (
        "How do I sign up for the newsletter?",
        "How do I unsubscribe?",
        "How often do you send the newsletter?",
        "Can I stop the marketing emails?",
    ),
    "The newsletter comes once a week with new releases. Subscribe at the foot of any page; every issue "
    "has an unsubscribe link.",
)


def ask(*texts: str, topics: tuple[FaqTopic, ...] = ()):
    """The built-in model's answer to the customer's `texts` (a conversation: between them, what it said
    with what it recorded), the prompt listing `topics` (as the prompt does, without their answers), the
    model given what staff wrote for them."""
    lines = "\n".join(faq_topic_line(topic) for topic in topics)
    system = [{"type": "text", "text": f"Rules.\n<{FAQ_TOPICS_TAG}>\n{lines}\n</{FAQ_TOPICS_TAG}>"}]
    model = OfflineModel(faq=lambda: list(topics))
    messages: list[dict] = []
    for text in texts:
        customer = [{"type": "text", "text": text}, {"type": "text", "text": TURN_REMINDER}]
        messages.append({"role": "user", "content": customer})
        reply = model.create(system=system, tools=TOOLS, messages=messages, deadline=time.monotonic() + 30)
        messages.append({"role": "assistant", "content": reply.content, "state": reply.state})
    return reply


def looked_up(reply) -> str | None:
    blocks = [block for block in reply.content if block["type"] == "tool_use"]
    return blocks[0]["input"]["topic"] if blocks and blocks[0]["name"] == "lookup_policy" else None


def said(reply) -> str:
    return " ".join(block["text"] for block in reply.content if block["type"] == "text")


@pytest.mark.parametrize(
    "question",
    [
        "do you guys take paypal",  # a word only the answer has
        "can i pay wiht a mastercrd?",  # typed in a hurry
        "I don't know how to pay for my books",
    ],
)
def test_a_topic_staff_wrote_answers_before_the_built_in_refusal(question):
    """Payments are out of scope for the built-in model: the refusal, with a person offered. Once staff
    publish a payments topic, it answers them, however worded."""
    refused = said(ask(question, topics=DEMO))
    assert refused.startswith(REFUSAL_TEMPLATE.format(topic="payments").split("{")[0][:40])
    assert OFFER_PERSON in refused

    assert looked_up(ask(question, topics=(*DEMO, PAYMENTS, NEWSLETTER))) == "payment_methods"


def test_what_staff_wrote_beyond_the_prompt_is_read():
    """The prompt lists a topic's first three questions and no answer; the FAQ reader reads the rest: a
    question about what only the later questions and the answer say is read as the topic's only with
    them."""
    question = "does the billing address matter"
    as_prompted = dataclasses.replace(PAYMENTS, questions=PAYMENTS.questions[:3], answer="")
    assert looked_up(ask(question, topics=(*DEMO, PAYMENTS))) == "payment_methods"
    assert looked_up(ask(question, topics=(*DEMO, as_prompted))) != "payment_methods"


def test_a_topic_staff_add_is_read_at_the_next_message_of_the_same_process():
    question = "unsubscribe me from the weekly emails"
    assert looked_up(ask(question, topics=(*DEMO, PAYMENTS))) is None
    assert looked_up(ask(question, topics=(*DEMO, PAYMENTS, NEWSLETTER))) == "newsletter"


def test_a_request_about_one_order_no_task_serves_is_not_answered_from_the_faq():
    """ "Change the card on BK-10042" is a request to staff about that order, not a payments question."""
    reply = ask("Please change the card I paid with on order BK-10042", topics=(*DEMO, PAYMENTS))
    assert looked_up(reply) is None
    assert OFFER_PERSON in said(reply)


def test_words_nobody_uses_pick_no_topic():
    reply = ask("pasxvs qwrtz", topics=(*DEMO, PAYMENTS, NEWSLETTER))
    assert looked_up(reply) is None


def test_the_built_in_topics_stay_read_as_before():
    assert (
        looked_up(ask("how long will delivery take to Canada?", topics=(*DEMO, PAYMENTS, NEWSLETTER)))
        == "shipping"
    )
    assert looked_up(ask("I forgot my password", topics=(*DEMO, PAYMENTS, NEWSLETTER))) == "password_reset"


UNSURE = "bank transfer?"  # payments, the reader finds, but not surely


def test_a_topic_the_reader_finds_only_likely_is_asked_about_with_a_person_offered():
    """Below the reader's certainty the customer is asked, never refused; what the question waits for is
    recorded (data, not words)."""
    reply = ask(UNSURE, topics=(*DEMO, PAYMENTS))
    assert said(reply) == f"{WHICH_TOPIC_LEAD} “Payment methods”? {WHICH_TOPIC_ONE}"
    assert reply.state == {"waiting_for": Waiting.WHICH_TOPIC.value}


@pytest.mark.parametrize("answer", ["yes", "yes, that one", "Yep, payment methods", "the first"])
def test_a_yes_or_the_topic_named_answers_the_question_with_the_topic(answer):
    assert looked_up(ask(UNSURE, answer, topics=(*DEMO, PAYMENTS))) == "payment_methods"


def test_something_else_has_a_person_offered_for_the_question_asked():
    reply = ask(UNSURE, "no, something else", topics=(*DEMO, PAYMENTS))
    assert said(reply) == NO_POLICY_REPLY
    handed = ask(UNSURE, "no, something else", "yes please", topics=(*DEMO, PAYMENTS))
    assert [block["input"] for block in handed.content] == [{"reason": "needs_staff", "summary": UNSURE}]


def test_a_message_answering_the_question_for_an_order_number_is_not_read_as_a_topic():
    reply = ask("where is my order", "it was a preorder, paid with paypal", topics=(*DEMO, PAYMENTS))
    assert looked_up(reply) is None


@pytest.mark.parametrize(
    "title",
    ["Paying by card or PIN", "Payments: see help.bookly.example", "Paying for orders over $35"],
)
def test_a_title_the_validator_would_replace_is_not_named(title):
    """A credential word, a link or an amount in staff's title: the question would be replaced by the
    fallback (a dead end), so it is not named; with no title left, "no policy" and a person offered."""
    unsafe = FaqTopic(PAYMENTS.key, title, PAYMENTS.questions, PAYMENTS.answer)
    history = History(units=[UNSURE], topics=[*DEMO, unsafe])
    assert _which_topic(history, [PAYMENTS.key]) == Asked(NO_POLICY_REPLY, Waiting.PASS_ON)
    safe = _which_topic(History(units=[UNSURE], topics=[*DEMO, PAYMENTS]), [PAYMENTS.key])
    assert safe.waiting == Waiting.WHICH_TOPIC
    assert safe.text.startswith(f"{WHICH_TOPIC_LEAD} “Payment methods”?")


RECEIPTS = FaqTopic(
    "receipts_invoices",
    "Receipts and invoices",
    ("How do I get an invoice?", "Can you put my company name on the invoice?", "I need a VAT invoice"),
    "We email a receipt to the address on your order as soon as it ships. Add a company name or VAT number "
    "in the Billing details box at checkout; an invoice cannot be changed after the order has shipped.",
)


@pytest.mark.parametrize(
    ("question", "answered_from_the_faq"),
    [
        ("does your invoice show the tax separately?", True),
        ("can the invoice be in my company's name", True),
        ("Is the receipt emailed to me once my books ship?", True),  # "my books": no one order's receipt
        ("i never get receipts from u, is that normal", True),
        ("can you send me my receipt?", False),
        ("where is my receipt?", False),
        ("I need a receipt for my records", False),
        ("I never received my receipt", False),
        ("please email my receipt", False),
        ("I'd like my invoice", False),
        ("my receipt hasn't arrived", False),
        ("can I get a receipt for my order?", False),  # one order's: the capability sends it
        ("invoice for my last purchase?", False),
        ("can you send a receipt for BK-10042?", False),
    ],
)
def test_receipts_asked_about_are_the_faqs_and_receipts_asked_for_are_sent(question, answered_from_the_faq):
    """How receipts work is the topic's to say; a receipt asked for is the receipt capability's (it asks
    for the order and sends it)."""
    reply = ask(question, topics=(*DEMO, RECEIPTS))
    assert (looked_up(reply) == "receipts_invoices") is answered_from_the_faq


@pytest.mark.parametrize(
    ("answer", "place"),
    [
        ("2", 1),
        ("number 1", 0),
        ("the second one", 1),
        ("the last", 1),
        ("I have 2 questions", None),
        ("3", None),
    ],
)
def test_a_topic_is_chosen_by_its_place_only_when_the_answer_names_one(answer, place):
    assert _place(answer, 2) == place


def test_places_count_only_the_topics_the_question_named():
    """A title the validator would replace is not named, so "the first" is the first named."""
    unsafe = FaqTopic(PAYMENTS.key, "Payments: see help.bookly.example", PAYMENTS.questions, PAYMENTS.answer)
    history = History(units=[UNSURE, "the first"], topics=[*DEMO, unsafe, NEWSLETTER])
    assert _named(history, [PAYMENTS.key, NEWSLETTER.key], asked=UNSURE) == [NEWSLETTER.key]


def _eval_topics() -> tuple[FaqTopic, ...]:
    """The ten topics of the FAQ eval (support/evals/faq/topics.json), as the model is given them."""
    return tuple(
        FaqTopic(
            written["topic"],
            written["title"],
            tuple(written["example_questions"].splitlines()),
            written["text"],
        )
        for written in faq_topics()
    )


def test_a_word_of_a_topics_title_does_not_outvote_the_reader():
    """ "card" is a word of the gift cards' title only, and the word rule picks that topic; the reader, sure
    the question is about payment methods, is the one that decides."""
    reply = ask("can i use my discover card", topics=(*DEMO, *_eval_topics()))
    assert looked_up(reply) == "payment_methods"


@pytest.mark.parametrize(
    ("question", "topic"),
    [
        ("how do i order a book", "placing_order"),  # as near "can I pre-order a book?" in meaning
        ("Can I pre-order a book?", "preorders"),
        ("i wanna give a book 5 stars how", "reviews_feedback"),  # "stars": the reviews' answer only
    ],
)
def test_where_meaning_is_unsure_the_words_staff_wrote_decide(question, topic):
    assert looked_up(ask(question, topics=(*DEMO, *_eval_topics()))) == topic


@pytest.mark.parametrize(
    ("question", "topic"),
    [
        ("do you sell bookmarks?", None),  # as near "Do you sell gift cards?" as "do you sell gift cards"
        ("do u sell kindles", None),
        ("Is Dune in stock?", None),  # near "Can I pre-order a book?"
        ("do you have signed copies?", None),
        ("do you sell gift cards?", "gift_cards"),
        ("do you stock gift vouchers", "gift_cards"),  # not a word of the title: its meaning
        ("do you guys have an email list", "newsletter"),
        ("do you offer guest checkout?", "placing_order"),  # "guest": its question and its answer
    ],
)
def test_whether_the_store_has_a_thing_is_a_topics_only_when_the_thing_is(question, topic):
    """A topic answers whether the store sells or has a thing only when the thing is what the topic is
    about, whatever the frame's nearness to staff's question."""
    assert looked_up(ask(question, topics=(*DEMO, *_eval_topics()))) == topic


CANCELLATION_FEE = FaqTopic(
    "cancellation_fee",
    "Cancellation fee",
    ("Is there a fee to cancel an order?", "Do you charge for cancellations?"),
    "Cancelling an order that has not shipped yet is free. We never charge a cancellation fee.",
)


@pytest.mark.parametrize(
    ("question", "answered_from_the_faq"),
    [
        ("Do you penalise customers who cancel?", True),
        ("how much do you keep if I cancel", True),
        ("Can I cancel without paying anything?", True),
        ("please cancel my order", False),
        ("cancel it, how much will I get back?", False),
        ("please cancel, I'm not paying for a book that never shipped", False),
        ("you keep charging my card, cancel the order", False),
    ],
)
def test_what_cancelling_costs_is_the_faqs_and_a_cancellation_is_the_task(question, answered_from_the_faq):
    reply = ask(question, topics=(*DEMO, CANCELLATION_FEE))
    assert (looked_up(reply) == "cancellation_fee") is answered_from_the_faq
    if not answered_from_the_faq:
        assert "order number" in said(reply)  # the cancellation begun: the task asks which order


def test_a_prefix_written_apart_is_one_word_with_it():
    """ "pre-order" is not "order" (the word of placing an order), however it is written."""
    assert _words("Can I pre-order it?") == _words("can i preorder it") == _words("can i pre order it")
    assert "order" not in _words("Can I pre-order it?")
    assert _words("an e-gift card") == _words("an egift card")
    assert _words("they're gift-wrapped") == _words("they are gift wrapped")  # no prefix there


@pytest.mark.parametrize(
    ("message", "topic"),
    [
        (
            "Good morning. Kindly explain the procedure for purchasing books on your website, as I have not "
            "done so before.",
            "placing_order",
        ),
        ("Good morning!", None),
        ("hey, how are you?", None),
    ],
)
def test_a_greeting_with_a_question_after_it_is_the_question(message, topic):
    reply = ask(message, topics=(*DEMO, *_eval_topics()))
    assert looked_up(reply) == topic
    if topic is None:
        assert said(reply).startswith("Hello!")  # the greeting, not a question back about a topic
