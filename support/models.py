"""The app's models, for Django to find: they live in the conversations room."""

from support.conversations.models import (
    Conversation,
    ConversationDeliveryCase,
    ConversationMessage,
    ConversationOrderChange,
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
    "ConversationDeliveryCase",
    "ConversationMessage",
    "ConversationOrderChange",
    "ConversationReturn",
    "ConversationStatus",
    "HandoffReason",
    "MessageRole",
    "ModelCall",
    "StaffAvailability",
    "TurnTrace",
]
