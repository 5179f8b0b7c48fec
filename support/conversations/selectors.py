from support.conversations.models import Conversation, ConversationMessage, MessageRole


def conversation_transcript(*, conversation: Conversation | None) -> list[dict[str, str]]:
    """What the customer sees, oldest first: their words and the replies that passed validation."""
    if conversation is None:
        return []
    rows = (
        ConversationMessage.objects.filter(conversation=conversation)
        .exclude(visible_text="")
        .order_by("position")
        .values_list("role", "visible_text")
    )
    return [
        {"role": "customer" if role == MessageRole.USER else "assistant", "text": text} for role, text in rows
    ]
