from django.db import models
from django.utils import timezone


class Conversation(models.Model):
    """One customer's chat with the assistant, found only through their session."""

    # The Django session (server-side, random key) that owns the conversation:
    # a client can never name a conversation, only present its session cookie.
    session_key = models.CharField(max_length=40)
    created_at = models.DateTimeField(auto_now_add=True)
    last_activity_at = models.DateTimeField(auto_now_add=True, db_index=True)
    ended_at = models.DateTimeField(null=True, blank=True)
    turn_count = models.PositiveIntegerField(default=0)
    # Guard state: order numbers whose return eligibility check passed in this
    # conversation. initiate_return refuses any other order.
    eligibility_verified = models.JSONField(default=list, blank=True)
    # A turn holds the lease while it runs, so that a second message of the
    # same conversation waits instead of interleaving; an expired lease (a
    # crashed worker) may be taken over.
    lease_token = models.UUIDField(null=True, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    # The returns the assistant started here. The chat owns this link: the
    # store's returns know nothing of conversations.
    returns = models.ManyToManyField(
        "orders.ReturnRecord", through="ConversationReturn", related_name="conversations", blank=True
    )

    class Meta:
        ordering = ["-last_activity_at"]
        constraints = [
            # Two first messages sent at once (two tabs) must land in one conversation.
            models.UniqueConstraint(
                fields=["session_key"],
                condition=models.Q(ended_at__isnull=True),
                name="conversation_one_open_per_session",
            )
        ]

    def __str__(self):
        return f"Conversation {self.pk}"


class MessageRole(models.TextChoices):
    USER = "user", "User"
    ASSISTANT = "assistant", "Assistant"


class ConversationMessage(models.Model):
    """One Messages API message exactly as sent to or received from the model."""

    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="messages")
    position = models.PositiveIntegerField()
    turn = models.PositiveIntegerField()
    role = models.CharField(max_length=10, choices=MessageRole.choices)
    content = models.JSONField(help_text="The content blocks, as in the Messages API.")
    # What the customer sees in the transcript: their own words, or the reply
    # that passed validation. Empty for tool calls and results.
    visible_text = models.TextField(blank=True)
    # Customer words the model API refused to process: kept for the transcript and
    # staff, never sent to the model again, so the conversation can go on.
    set_aside = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["conversation", "position"]
        constraints = [
            models.UniqueConstraint(fields=["conversation", "position"], name="message_position_unique"),
            models.CheckConstraint(
                condition=models.Q(role__in=MessageRole.values), name="message_role_valid"
            ),
        ]

    def __str__(self):
        return f"{self.conversation_id}#{self.position} {self.role}"


class ModelCall(models.Model):
    """Usage of one model call, for cost and cache accounting."""

    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="model_calls")
    turn = models.PositiveIntegerField()
    model = models.CharField(max_length=100)
    offline = models.BooleanField()
    stop_reason = models.CharField(max_length=30, blank=True)
    request_id = models.CharField(max_length=100, blank=True)
    input_tokens = models.PositiveIntegerField(default=0)
    output_tokens = models.PositiveIntegerField(default=0)
    cache_read_input_tokens = models.PositiveIntegerField(default=0)
    cache_creation_input_tokens = models.PositiveIntegerField(default=0)
    duration_ms = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["conversation", "id"]

    def __str__(self):
        return f"{self.model} call in conversation {self.conversation_id}, turn {self.turn}"


class ConversationReturn(models.Model):
    """A return the assistant started in a conversation (kept when the conversation is purged)."""

    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="return_links")
    # One conversation started a return, never two.
    return_record = models.OneToOneField(
        "orders.ReturnRecord", on_delete=models.CASCADE, related_name="conversation_link"
    )
    # A default, not auto_now_add: links copied from before keep their return's time.
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["conversation", "created_at"]

    def __str__(self):
        return f"{self.return_record_id} from conversation {self.conversation_id}"
