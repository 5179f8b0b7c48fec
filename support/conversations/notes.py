"""Notes between colleagues on a conversation: staff only, never shown to the customer or sent to the
model (the transcript and the model's history read ConversationMessage alone)."""

from django.db import transaction

from store.text import text_multi_line
from support.conversations.handoff import ConversationActionRefused
from support.conversations.models import Conversation, ConversationNote

NOTE_MAX_CHARS = 5000


def conversation_note_add(*, conversation: Conversation, user, text: str) -> ConversationNote:
    text = text_multi_line(text or "")
    if not text:
        raise ConversationActionRefused("Write the note first.")
    if len(text) > NOTE_MAX_CHARS:
        raise ConversationActionRefused(
            f"A note can be at most {NOTE_MAX_CHARS:,} characters; this one has {len(text):,}. It was not "
            "saved: shorten it, or split it in two."
        )
    with transaction.atomic():
        return ConversationNote.objects.create(conversation=conversation, author=user, text=text)
