from django import template
from django.conf import settings

from orders.selectors import delivery_cases_open_count
from support.assistant.configured import configured_model, get_model
from support.conversations.selectors import conversations_waiting_count, replies_unhelpful_count

register = template.Library()


@register.simple_tag
def waiting_conversations() -> int:
    """How many customers are waiting for a person (for the admin index)."""
    return conversations_waiting_count()


@register.simple_tag
def unhelpful_replies() -> int:
    """How many replies customers voted not helpful (for the admin index)."""
    return replies_unhelpful_count()


@register.simple_tag
def delivery_cases_open() -> int:
    """How many delivery problems customers reported are still open (for the admin index)."""
    return delivery_cases_open_count()


@register.filter
def percent(value) -> str:
    """A share (0 to 1) as a percentage with one decimal; "no data" when there is nothing to divide."""
    return "no data" if value is None else f"{value * 100:.1f}%"


@register.simple_tag
def assistant_standing() -> dict:
    """Who answers customers, for admin's notice: the built-in model because no provider is configured
    (say how to connect one), or because the configured provider is down (its circuit is open)."""
    configured = configured_model()
    return {
        "unconfigured": configured.offline,
        "provider_down": not configured.offline and get_model().offline,
        "provider": configured.provider,
        "model": configured.name,
        "retry_seconds": settings.BOOKLY_MODEL_CIRCUIT_SECONDS,
    }
