"""What the customer is told about who answers them: the assistant, a person on the way, a person."""

from django.core.exceptions import ValidationError
from django.core.validators import validate_email

from store.text import text_has_unseen
from support.conversations.models import Conversation, ConversationStatus
from support.conversations.selectors import conversation_status, staff_available_now
from support.conversations.waiting import waiting_notice


def who_answers(*, conversation: Conversation | None) -> dict:
    """The API's and the page's view of it: {"status", "notice" (a sentence or two, "" while the
    assistant answers), "email_needed" (ask for an address to answer at)}."""
    status = conversation_status(conversation=conversation)
    notice, email_needed = "", False
    if status == ConversationStatus.CLOSED:
        notice = "Our team closed this conversation. Send a message to start a new one with the assistant."
    elif status == ConversationStatus.PERSON:
        notice = "A member of our team is answering you here. The assistant is not replying meanwhile."
    elif status == ConversationStatus.WAITING:
        available = staff_available_now()
        email_needed = not available and not conversation.customer_email
        notice = waiting_notice(staff_available=available, email=conversation.customer_email)
    return {"status": str(status), "notice": notice, "email_needed": email_needed}


INVALID_EMAIL = "That doesn't look like an email address. Please check it."


def email_is_valid(text: str) -> bool:
    """An address we can store and answer at (Django's validator allows longer ones than the field)."""
    if len(text) > Conversation._meta.get_field("customer_email").max_length or text_has_unseen(text):
        return False  # a bidi override in an address shows staff another one (bob@exa\u202emple.com)
    try:
        validate_email(text)
    except ValidationError:
        return False
    return True
