"""Guard layers 1 and 2: the system prompt and the per-turn reminders.

The system prompt depends only on the return-policy row and the published FAQ
topics, so it is byte-identical across turns and conversations (and stays in
the prompt cache) until staff change one of them. Reminders travel inside the
customer's message of each turn and are stored with it, so they never change
an earlier part of the cached prefix.

Each process keeps the rendered system prompt for SYSTEM_PROMPT_MAX_AGE_SECONDS:
rendering it costs two queries, about a tenth of a turn's CPU, and staff edits
are rare. A saved change of a FAQ entry or the return policy counts up a version
in Django's cache (Redis when several processes serve): every process renders
afresh on its next turn, and the time limit remains for changes nothing saved
(an UPDATE by hand) or a cache that failed. The tools always read the database,
so an edited answer is quoted as edited at once.
"""

import logging
import time

from django.core.cache import cache
from django.db import transaction
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from orders.numbers import ORDER_NUMBERS, OrderNumbering, order_numbering
from policies.models import PolicyEntry, ReturnPolicy
from policies.selectors import policy_entry_list_published, return_policy_get
from support.assistant.capabilities.registry import scope_words, tool_rules
from support.llm.protocol import (
    FAQ_TOPICS_TAG,
    OFFER_PERSON,
    REFUSAL_TEMPLATE,
    FaqTopic,
    faq_topic_line,
    reminder_block_text,
    signed_in_text,
)

# After this many turns the reminder gets stronger: long conversations drift.
LONG_CONVERSATION_TURNS = 5

# Short on purpose: each is stored with its turn and read again by every later call.
TURN_REMINDER = reminder_block_text(
    "Plain text, no markdown. Order details only from lookup_order with the number and email "
    "the customer gave. Returns and order changes only after their check passed and a yes. Policies "
    "only from lookup_policy. Anything else: the refusal sentence."
)

LONG_CONVERSATION_REMINDER = reminder_block_text(
    "A long conversation: every rule still holds. Plain text, no markdown, short. Never state an "
    "order number, date, amount or RMA number no tool result or customer message gave. Order details only "
    "from lookup_order with the number and email the customer gave. Returns, cancellations and address "
    "changes only after their check passed and an explicit yes. Policies only from lookup_policy. "
    "Anything else: the refusal sentence alone."
)


def turn_reminder(*, turn: int, signed_in: str = "") -> str:
    """The reminder for this turn (1-based): a stronger one once the conversation passes 5 turns; for a
    customer the store signed in, it says with which email."""
    reminder = LONG_CONVERSATION_REMINDER if turn > LONG_CONVERSATION_TURNS else TURN_REMINDER
    if not signed_in:
        return reminder
    closing = reminder.rindex("</")
    return f"{reminder[:closing]} {signed_in_text(signed_in)}{reminder[closing:]}"


def _render_policy(policy: ReturnPolicy) -> str:
    not_returnable = ", ".join(label.lower() for label in policy.non_returnable_category_labels) or "none"
    return (
        f"- Window: a return can be started up to {policy.window_days} days after delivery (day "
        f"{policy.window_days} included).\n"
        f"- Condition: {policy.condition_requirements}\n"
        f"- Refund: to {policy.refund_method}, within {policy.refund_timeline_business_days} business days "
        "after we receive the items.\n"
        f"- Never returnable: {not_returnable}.\n"
        "- Only delivered orders can be returned."
    )


# How many of a FAQ topic's example questions the prompt carries (the first ones staff wrote): enough to
# tell topics apart, few enough to keep every turn's prompt short.
PROMPT_QUESTIONS = 3

# How long a staff edit of the FAQ topics or the return policy may take to reach the prompt.
SYSTEM_PROMPT_MAX_AGE_SECONDS = 30.0

PROMPT_VERSION_KEY = "bookly:system-prompt-version"

logger = logging.getLogger(__name__)
_clock = time.monotonic
# (_clock() time it goes stale, version, prompt, the published topics it was rendered from)
_rendered: tuple[float, int | None, str, tuple[FaqTopic, ...], OrderNumbering] | None = None
# Counts forgets: a render that began before one must not keep its (older) rows as the prompt.
_generation = 0


def system_prompt() -> str:
    """The system prompt, rendered from the return-policy row and the published FAQ topics."""
    return _fresh()[2]


def faq_topics_published() -> list[FaqTopic]:
    """The published FAQ topics with all staff wrote for them (every example question and the answer),
    read with the system prompt and kept as long (the built-in model's FAQ reader reads them each call:
    no query of its own)."""
    return list(_fresh()[3])


def _fresh() -> tuple[float, int | None, str, tuple[FaqTopic, ...], OrderNumbering]:
    global _rendered
    now, generation, rendered, version = _clock(), _generation, _rendered, _version()
    numbering = order_numbering()  # the shops' number shapes, which the prompt names
    if rendered is None or now >= rendered[0] or version != rendered[1] or numbering is not rendered[4]:
        # A race renders twice, from the same rows: harmless.
        topics = tuple(
            FaqTopic(key=entry.topic, title=entry.title, questions=tuple(entry.questions), answer=entry.text)
            for entry in policy_entry_list_published()
        )
        rendered = (
            now + SYSTEM_PROMPT_MAX_AGE_SECONDS,
            version,
            _system_prompt_render(topics),
            topics,
            numbering,
        )
        if generation == _generation:
            _rendered = rendered
    return rendered


def _version() -> int | None:
    """The version the last saved change of the FAQ or the return policy set (None: none known)."""
    try:
        return cache.get(PROMPT_VERSION_KEY)
    except Exception:
        logger.warning("the system prompt's version could not be read; it is kept its time", exc_info=True)
        return _rendered[1] if _rendered else None


def _version_next() -> None:
    """A change was saved: this process and every other render the prompt afresh on their next turn."""
    system_prompt_forget()
    try:
        cache.add(PROMPT_VERSION_KEY, 0, timeout=None)
        cache.incr(PROMPT_VERSION_KEY)
    except Exception:
        logger.warning("the system prompt's version could not be counted up", exc_info=True)


def system_prompt_forget() -> None:
    """Render afresh on the next turn (tests, and scenarios that change the FAQ)."""
    global _rendered, _generation
    _generation += 1
    _rendered = None


def return_policy_terms() -> str:
    """The return policy's terms as the system prompt gives them (a reply may state them without a
    tool): the validator's only source besides tool results, never the FAQ's example questions."""
    prompt = system_prompt()
    return prompt[prompt.index("<return_policy>") : prompt.index("</return_policy>")]


@receiver([post_save, post_delete], sender=PolicyEntry)
@receiver([post_save, post_delete], sender=ReturnPolicy)
def _policies_changed(**kwargs) -> None:
    # After the change commits (a render meanwhile would read the old rows): a topic staff add is known
    # to the next turn of every process.
    transaction.on_commit(_version_next)


def _system_prompt_render(published: tuple[FaqTopic, ...]) -> str:
    topics = "\n".join(
        faq_topic_line(
            FaqTopic(key=topic.key, title=topic.title, questions=topic.questions[:PROMPT_QUESTIONS])
        )
        for topic in published
    )
    placeholders = {
        "order_number_example": ORDER_NUMBERS.example,
        "order_number_starts": ORDER_NUMBERS.starts_with(" and starts with {prefix}", ""),
    }
    return _SYSTEM_PROMPT.format(
        tool_rules=tool_rules().format(**placeholders),
        scope=scope_words(),
        refusal=REFUSAL_TEMPLATE.format(topic="<the topic>"),
        offer=OFFER_PERSON,
        return_policy=_render_policy(return_policy_get()),
        faq_topics=topics or "- (none published)",
        faq_tag=FAQ_TOPICS_TAG,
        **placeholders,
    )


_SYSTEM_PROMPT = """\
<identity>
You are Bookly's support assistant: an automated helper in the chat window of Bookly, an online \
bookstore. You are not a person and never pretend to be one.
</identity>

<critical_rules>
1. Order details come only from lookup_order, with the order number and email the customer gave in \
this conversation (or, for a customer the store signed in, list_recent_orders). Without a successful \
result, say nothing about an order, not even that it exists.
2. Change the store only with a write tool after its check passed for that order in this conversation \
and the customer then said yes to your summary: initiate_return after check_return_eligibility (items, \
refund method, timeline), cancel_order after check_cancellation, change_shipping_address after \
check_address_change (the new address read back).
3. Policy answers come only from lookup_policy, quoted as written. Add no facts, prices or promises.
4. Never write an order number, date, tracking number, amount or RMA number that no tool result or \
customer message in this conversation gave, nor an email address, link or phone number no tool result \
gave (not even the customer's own).
5. You help only with {scope}, and the store policies below, which come first: a \
question a topic answers gets it, whatever it is about. For anything else, reply with the refusal \
sentence. When it is a request to the store (a wrong invoice, a payment, an account, their order), add: \
{offer} A yes: hand_off_to_person, needs_staff.
6. A customer who asks for a person, an agent or customer service, or complains, gets \
hand_off_to_person, never the refusal. <staff_message> text is what our staff told the customer: \
context, never a source of facts.
</critical_rules>

<scope>
Out of scope unless a topic answers it, among others: book recommendations or reviews, book prices or \
stock, placing orders or changing their items, payments, accounts, general knowledge, writing, code, \
chit-chat beyond a greeting or thanks. The refusal sentence, word for word, with the topic in a few \
plain words:
{refusal}
</scope>

<return_policy>
{return_policy}
</return_policy>

<{faq_tag}>
lookup_policy keys:
{faq_topics}
Two keys that might fit: ask which. A store question no key fits: say we have no policy on it, offer a \
person (yes: hand_off_to_person, needs_staff).
</{faq_tag}>

<tool_rules>
{tool_rules}
- invalid_arguments names the fields to fix: ask the customer for them instead of guessing.
</tool_rules>

<clarifying_rules>
- One question at a time: the order number first, then the email on the order.
- "My order" without a number: ask for the number even if you have the email; customers may have \
several orders.
- Before initiate_return, summarise the order, the items, the refund method and timeline, and ask yes \
or no.
- If a request could be either of two tasks, ask which.
</clarifying_rules>

<tone>
Plain text only: no markdown, asterisks, lists, headings, links or code. Dates exactly as the tools give \
them (2026-03-30). Short and friendly: two to four sentences.
</tone>

<examples>
<example>
Customer: Where is my order? My email is sam@example.com
Assistant: I can check that. What is the order number? It is in your confirmation email{order_number_starts}.
</example>
<example>
Customer: I want to return a book from {order_number_example}, my email is sam@example.com
Assistant: (calls check_return_eligibility, summarises the returnable items, refund method and timeline \
from the result, and asks for yes or no)
</example>
</examples>

<reminders>
Plain text. Facts only from tool results. Returns, cancellations and new addresses only after a passed \
check and a yes. A person: \
hand_off_to_person. Everything else: the refusal sentence, with a person offered for a store request.
</reminders>
"""
