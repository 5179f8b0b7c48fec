"""The built-in model's steps several capabilities share: lists in words, an order's returns, and the
answer to the yes-or-no question before an order changes."""

import re
from collections.abc import Callable
from typing import Any

from orders.selectors import OrderChangeCheck
from support.assistant.understanding.customer_words import order_id_in, plain
from support.assistant.understanding.history import ToolCall
from support.assistant.understanding.step import Reading, Step
from support.assistant.understanding.vocabulary import NO_RE
from support.assistant.understanding.wording import Said, Waiting, ask, said, words_of
from support.llm.consent import HESITANT_RE, reads_as_yes
from support.llm.protocol import OFFER_PERSON, OFFERS_PERSON_RE


def joined(values: list[str], last: str = "and") -> str:
    """Values in words: A; A and B; A, B and C; "" for none (or A or B, with last="or")."""
    if len(values) <= 1:
        return "".join(values)
    return ", ".join(values[:-1]) + f" {last} " + values[-1]


def returns_sentences(returns: list) -> list[str]:
    """An order's returns as a tool reported them, one sentence each."""
    sentences = []
    for record in returns:
        status = str(record.get("status", "")).replace("_", " ")
        granted = f" {record['exception']}" if isinstance(record.get("exception"), str) else ""
        if isinstance(record.get("our_reason"), str):
            granted += f" Our team's reason: {record['our_reason']}"
        sentences.append(f"Return {record.get('rma_number')} for this order is {status}.{granted}")
    return sentences


# A change check's result says when the last change of its kind the store was asked to make was not
# made (orders.selectors.OrderChangeCheck.last_attempt_failed, in the store's fixed words): the same
# change is never offered again without saying so. Its rule in the capability's paragraph of the prompt.
LAST_ATTEMPT_FAILED = "last_attempt_failed"
LAST_ATTEMPT_RULE = (
    f"If the result has {LAST_ATTEMPT_FAILED}, say it first, as written, and that a person can help."
)


def last_attempt_of(check: OrderChangeCheck) -> dict[str, str]:
    """What a change check's result says of the last change of its kind the store did not make: its
    sentence, or nothing (`check`: an orders.selectors.OrderChangeCheck)."""
    return {LAST_ATTEMPT_FAILED: check.last_attempt_failed} if check.last_attempt_failed else {}


# After the store's sentence for a change it did not make: who can help, and how to reach them.
NOT_MADE_HELP = "A member of our support team can help with it: just ask for a person."


def with_last_attempt(result: dict[str, Any], reply: Said) -> Said:
    """A reply to a change check's result, with the last attempt that failed said first (unless the
    reply says it already), and a person offered (unless the reply offers one)."""
    failed = result.get(LAST_ATTEMPT_FAILED)
    words = words_of(reply)
    if not isinstance(failed, str) or not failed or failed in words:
        return reply
    person = "" if OFFERS_PERSON_RE.search(words) else f" {NOT_MADE_HELP}"
    return said(f"{failed}{person}", reply)


def cannot_change_reply(result: dict[str, Any]) -> Said:
    """An order that can no longer change: the store's reason, and a person offered when it is on its way
    (staff may still reach the carrier) or the result says one can help (an address abroad)."""
    checked = f"I checked order {result.get('order_id')}. {result.get('reason', '')}"
    if result.get("order_status") == "shipped" or result.get("offer_person"):
        return ask(Waiting.OFFER_PERSON, f"{checked} {OFFER_PERSON}".strip())
    return checked.strip()


def change_answer(
    reading: Reading,
    *,
    check: str,
    write: str,
    declined: str,
    to_cancel: bool = False,
    read_new: Callable[[str, dict[str, str]], Step | None] | None = None,
) -> Step | None:
    """The answer to the question after the order change's check `check` passed ("cancel this order?",
    "send it to this address?"): the change (`write`), `declined`, what `read_new` makes of a new detail
    in the message (another address checked), or None (not an answer)."""
    checks = [use for use, _ in reading.history.calls if use.get("name") == check]
    if not checks:
        return None
    arguments = {key: checks[-1].get("input", {}).get(key, "") for key in ("order_id", "customer_email")}
    words = reading.units[-1]
    latest = plain(words)
    if reading.intents[-1].kind in ("person", "status", "return", "policy", "no_number"):
        return None  # another request: answered as such
    if read_new and (step := read_new(words, arguments)):
        return step
    other_order = order_id_in(words)
    if reads_as_yes(words, to_cancel=to_cancel) and other_order in (None, arguments["order_id"]):
        return ToolCall(write, arguments)
    if NO_RE.match(latest) or HESITANT_RE.search(latest) or re.search(r"\bkeep it\b", latest):
        return declined
    return None
