"""The app's models, for Django to find: they live in the conversations room."""

from support.conversations.models import (
    Conversation,
    ConversationMessage,
    ConversationReturn,
    MessageRole,
    ModelCall,
)

__all__ = ["Conversation", "ConversationMessage", "ConversationReturn", "MessageRole", "ModelCall"]
