"""Adds finished conversations for the benchmark, as a store's history: each closed, with a question and
an answer.

    .venv/bin/python -m bench.seed_conversations 10000

Run by bench/waiting.py (--history) after `loaddata demo`, with the site's environment: the inbox reads
over every conversation the store ever had, so its cost is measured against a history, not an empty
table.
"""

import os
import sys

BATCH = 1000


def main() -> None:
    count = int(sys.argv[1])
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bookly.settings")
    import django

    django.setup()
    from django.db import transaction

    from support.conversations.models import (
        Conversation,
        ConversationMessage,
        ConversationStatus,
        MessageRole,
    )

    for start in range(0, count, BATCH):
        with transaction.atomic():
            conversations = Conversation.objects.bulk_create(
                Conversation(
                    session_handle=f"bench-history-{i}",
                    status=ConversationStatus.CLOSED,
                    turn_count=1,
                    customer_email=f"reader{i}@example.com",
                )
                for i in range(start, min(start + BATCH, count))
            )
            ConversationMessage.objects.bulk_create(
                message
                for conversation in conversations
                for message in (
                    ConversationMessage(
                        conversation=conversation,
                        position=0,
                        turn=1,
                        role=MessageRole.USER,
                        content=[{"type": "text", "text": "How long does shipping take?"}],
                        visible_text="How long does shipping take?",
                    ),
                    ConversationMessage(
                        conversation=conversation,
                        position=1,
                        turn=1,
                        role=MessageRole.ASSISTANT,
                        content=[{"type": "text", "text": "Standard shipping takes 3-5 business days."}],
                        visible_text="Standard shipping takes 3-5 business days.",
                    ),
                )
            )


if __name__ == "__main__":
    main()
