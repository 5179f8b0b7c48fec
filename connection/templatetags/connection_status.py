from django import template

from connection.selectors import OutboxState, outbox_state

register = template.Library()


@register.simple_tag
def webhook_outbox() -> OutboxState:
    """Failed and waiting webhook deliveries and the endpoints failing (for the admin index)."""
    return outbox_state()
