"""What the customer is told about who answers them: the assistant, a person on the way, a person."""

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
        assert conversation is not None  # no conversation is the assistant's (conversation_status)
        available = staff_available_now()
        email_needed = not available and not conversation.customer_email
        notice = waiting_notice(staff_available=available, email=conversation.customer_email)
    return {"status": str(status), "notice": notice, "email_needed": email_needed}
