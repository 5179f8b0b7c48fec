"""The app's models, for Django to find: they live in the conversations room, saved replies in staff's."""

from support.conversations.models import (
    Conversation,
    ConversationAssignment,
    ConversationDeliveryCase,
    ConversationMessage,
    ConversationNote,
    ConversationOrderChange,
    ConversationReturn,
    ConversationStatus,
    HandoffReason,
    MessageRole,
    ModelCall,
    StaffAvailability,
    TurnTrace,
)
from support.staff.models import SavedReply

__all__ = [
    "Conversation",
    "ConversationAssignment",
    "ConversationDeliveryCase",
    "ConversationMessage",
    "ConversationNote",
    "ConversationOrderChange",
    "ConversationReturn",
    "ConversationStatus",
    "HandoffReason",
    "MessageRole",
    "ModelCall",
    "SavedReply",
    "StaffAvailability",
    "TurnTrace",
]
