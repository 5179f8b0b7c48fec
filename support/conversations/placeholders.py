"""Placeholders in staff's saved replies, such as `{{first_name}}`, filled from the conversation.

A reply is never sent with a placeholder left in it (handoff.staff_reply_clean): the customer would read
braces where their order number should be.
"""

import re

from django.db import models

from support.conversations.models import Conversation

# Anything that looks like a placeholder: a word between double braces.
PLACEHOLDER = re.compile(r"\{\{\s*(\w+)\s*\}\}")


class Placeholder(models.TextChoices):
    FIRST_NAME = "first_name", "the customer's first name, from the order looked up last"
    EMAIL = "email", "the customer's email"
    ORDER_NUMBER = "order_number", "the order looked up last in this conversation"
    RMA_NUMBER = "rma_number", "the return started last in this conversation"
    AGENT_NAME = "agent_name", "your first name (else your login)"


def placeholders_in(text: str) -> list[str]:
    """The placeholder names in the text, each once, in order."""
    return list(dict.fromkeys(match.group(1) for match in PLACEHOLDER.finditer(text)))


def placeholders_unknown(text: str) -> list[str]:
    return [name for name in placeholders_in(text) if name not in Placeholder.values]


def conversation_placeholder_values(*, conversation: Conversation, user) -> dict[str, str]:
    """What each placeholder stands for in this conversation; one with nothing to stand for is absent."""
    values = {Placeholder.AGENT_NAME: user.first_name or user.get_username()}
    if email := conversation.signed_in_email or conversation.customer_email:
        values[Placeholder.EMAIL] = email
    link = (
        Conversation.orders.through.objects.filter(conversation=conversation)
        .select_related("order")
        .order_by("-pk")
        .first()
    )
    if link is not None:
        values[Placeholder.ORDER_NUMBER] = link.order.number
        if names := link.order.customer_name.split():
            values[Placeholder.FIRST_NAME] = names[0]
    started = conversation.return_links.select_related("return_record").order_by("-created_at", "-pk").first()
    if started is not None:
        values[Placeholder.RMA_NUMBER] = started.return_record.rma_number
    return {str(name): value for name, value in values.items()}


def placeholders_fill(*, text: str, values: dict[str, str]) -> tuple[str, list[str]]:
    """The text with each placeholder that has a value replaced by it, and the names left without one
    (still in the text, as they were)."""
    missing: list[str] = []

    def fill(match: re.Match) -> str:
        name = match.group(1)
        if name in values:
            return values[name]
        missing.append(name)
        return match.group(0)

    return PLACEHOLDER.sub(fill, text), list(dict.fromkeys(missing))
