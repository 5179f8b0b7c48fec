"""The app's models, for Django to find: they live in the conversations room."""

from support.conversations.models import (
    Conversation,
    ConversationMessage,
    ConversationReturn,
    ConversationStatus,
    HandoffReason,
    MessageRole,
    ModelCall,
    StaffAvailability,
    TurnTrace,
)

__all__ = [
    "Conversation",
    "ConversationMessage",
    "ConversationReturn",
    "ConversationStatus",
    "HandoffReason",
    "MessageRole",
    "ModelCall",
    "StaffAvailability",
    "TurnTrace",
]
