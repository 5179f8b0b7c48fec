from datetime import datetime

from django.conf import settings
from django.db import models
from django.utils import timezone

from support.insight.traces import ReplySource, TurnOutcome
from support.llm.protocol import HandoffAsk


class ConversationStatus(models.TextChoices):
    """Who answers the customer: the assistant, nobody yet (waiting for a person), a person, or nobody
    any more (staff closed it; the customer's next message starts a new conversation)."""

    ASSISTANT = "assistant", "With the assistant"
    WAITING = "waiting", "Waiting for a person"
    PERSON = "person", "With a person"
    CLOSED = "closed", "Closed"


# The model is called only in this status; in these, a person answers (or is on the way).
MODEL_ANSWERS = ConversationStatus.ASSISTANT
PERSON_ANSWERS = frozenset({ConversationStatus.WAITING, ConversationStatus.PERSON})


class HandoffReason(models.TextChoices):
    CUSTOMER_BUTTON = "customer_button", "Customer pressed “Talk to a person”"
    # The two the model may give (llm.protocol.HandoffAsk), and the assistant's own.
    CUSTOMER_ASKED = HandoffAsk.CUSTOMER_ASKED.value, "Customer asked for a person"
    NEEDS_STAFF = HandoffAsk.NEEDS_STAFF.value, "Needs something only staff can do"
    ASSISTANT_STUCK = "assistant_stuck", "The assistant failed twice in a row"


class ConversationEnd(models.TextChoices):
    """Why a conversation ended (its ended_at): after it, the customer's next message starts another."""

    IDLE = "idle", "Nothing was written for a while"
    NEW_CONVERSATION = "new_conversation", "The customer started a new conversation"
    SESSION_EXPIRED = "session_expired", "The customer's session reached its maximum age"
    AFTER_CLOSE = "after_close", "Staff had closed it; the customer wrote again"
    # The person at the browser may be someone else now: nothing of this conversation may reach them.
    SIGNED_OUT = "signed_out", "The store signed the customer out"
    CUSTOMER_CHANGED = "customer_changed", "The store signed in another customer"


class Conversation(models.Model):
    """One customer's chat with the assistant, found only through their session."""

    # The Django session that owns the conversation, as a keyed hash of its key
    # (session_handle()): a client can never name a conversation, only present its
    # session cookie, and nobody who reads this row (staff, a backup) learns a key
    # that would open the customer's session.
    session_handle = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)
    last_activity_at = models.DateTimeField(auto_now_add=True, db_index=True)
    # When the customer's browser last asked for this conversation (at most a minute behind): their
    # session expires SESSION_COOKIE_AGE after that, and with it their view of any reply.
    customer_seen_at = models.DateTimeField(default=timezone.now)
    ended_at = models.DateTimeField(null=True, blank=True)
    end_reason = models.CharField(max_length=20, choices=ConversationEnd.choices, blank=True)
    turn_count = models.PositiveIntegerField(default=0)
    # Guard state: the orders (their keys, capabilities.base.check_key: not their numbers, which two shops
    # may share) whose return eligibility check passed in this conversation. initiate_return refuses any
    # other order. (Kept before by number: such a check is simply asked for again.)
    eligibility_verified = models.JSONField(default=list, blank=True)
    # Guard state of order changes: {"cancel" | "address": {order's key: {"turn": N, ...}}}, each a
    # check that passed in turn N (with the address it checked). The write needs one from an earlier
    # turn, so the customer has read what they are agreeing to.
    change_checks = models.JSONField(default=dict, blank=True)
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
    # The order changes (cancellations, new addresses) the assistant made here.
    order_changes = models.ManyToManyField(
        "orders.OrderChange", through="ConversationOrderChange", related_name="conversations", blank=True
    )
    # The delivery problems the customer reported here, as cases for staff.
    delivery_cases = models.ManyToManyField(
        "orders.DeliveryCase", through="ConversationDeliveryCase", related_name="conversations", blank=True
    )
    # The orders a tool looked up here with the right email (the chat's link, as for returns).
    orders = models.ManyToManyField("orders.Order", related_name="conversations", blank=True)

    # People in the loop.
    status = models.CharField(
        max_length=10, choices=ConversationStatus.choices, default=ConversationStatus.ASSISTANT
    )
    assigned_to = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="support_conversations",
    )
    # When the conversation last started waiting for a person, why, and a line for staff.
    handoff_at = models.DateTimeField(null=True, blank=True)
    handoff_reason = models.CharField(max_length=20, choices=HandoffReason.choices, blank=True)
    handoff_note = models.CharField(max_length=300, blank=True)
    # Where staff can answer: an order's email a tool verified here, or one the customer gave.
    customer_email = models.EmailField(blank=True)
    # The email the store signed the customer in with (support.conversations.identity), if it did.
    signed_in_email = models.EmailField(blank=True)
    # The customer's rating of the whole conversation (1 to 5) and what they added; a second replaces it.
    rating = models.PositiveSmallIntegerField(null=True, blank=True)
    rating_comment = models.TextField(blank=True)
    rated_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-last_activity_at"]
        indexes = [models.Index(fields=["status", "handoff_at"], name="conversation_inbox")]
        constraints = [
            # Two first messages sent at once (two tabs) must land in one conversation.
            models.UniqueConstraint(
                fields=["session_handle"],
                condition=models.Q(ended_at__isnull=True),
                name="conversation_one_open_per_session",
            ),
            models.CheckConstraint(
                condition=models.Q(status__in=ConversationStatus.values), name="conversation_status_valid"
            ),
            # A person owns a conversation only when one is assigned.
            models.CheckConstraint(
                condition=~models.Q(status=ConversationStatus.PERSON) | models.Q(assigned_to__isnull=False),
                name="conversation_person_assigned",
            ),
            models.CheckConstraint(
                condition=models.Q(rating__isnull=True) | models.Q(rating__gte=1, rating__lte=5),
                name="conversation_rating_1_to_5",
            ),
        ]

    def __str__(self):
        return f"Conversation {self.pk}"

    def lease_held(self, now: datetime) -> bool:
        """Whether a turn holds the conversation at `now`: its lease taken and not lapsed."""
        if self.lease_token is None:
            return False
        # Every write sets and clears the token and its expiry together.
        assert self.lease_expires_at is not None
        return self.lease_expires_at >= now


class MessageRole(models.TextChoices):
    USER = "user", "User"
    ASSISTANT = "assistant", "Assistant"
    # A member of staff writing to the customer; sent to the model as a tagged note (see llm.protocol).
    STAFF = "staff", "Staff"


class ConversationMessage(models.Model):
    """One Messages API message exactly as sent to or received from the model, or a staff reply."""

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
    # The validator's codes when it replaced the model's reply with the fallback (staff see them).
    violations = models.JSONField(default=list, blank=True)
    # What the built-in model recorded with this reply (what it waits for next), sent back only to it.
    model_state = models.JSONField(null=True, blank=True)
    # The member of staff who wrote a staff message.
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
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


class TurnTrace(models.Model):
    """What one assistant turn did, for staff: its outcome, whose words the customer read, the
    validator's verdict, each tool call (the shape of its arguments, never their text), and times.
    The model calls are the turn's ModelCall rows. Written with the turn; deleted with the conversation.
    The customer's vote on the reply is kept here too."""

    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="traces")
    turn = models.PositiveIntegerField()
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    outcome = models.CharField(max_length=12, choices=TurnOutcome.choices)
    reply_source = models.CharField(max_length=10, choices=ReplySource.choices, blank=True)
    violations = models.JSONField(default=list, blank=True)
    # [{"tool", "arguments" (their shape), "result" ("ok" or the error code), "ms"}], in call order.
    tool_calls = models.JSONField(default=list, blank=True)
    handoff_reason = models.CharField(max_length=20, choices=HandoffReason.choices, blank=True)
    # The reply left the customer nowhere to go (traces.TurnRecord.dead_end).
    dead_end = models.BooleanField(default=False)
    error = models.CharField(max_length=60, blank=True, help_text="What failed the turn, when it failed.")
    total_ms = models.PositiveIntegerField(help_text="From the customer's message to the reply.")
    model_ms = models.PositiveIntegerField(help_text="Of which waiting for the model.")
    # The customer's thumbs up (True) or down (False) on the reply; a second vote replaces the first.
    helpful = models.BooleanField(null=True, blank=True)
    voted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["conversation", "turn"]
        constraints = [
            models.UniqueConstraint(fields=["conversation", "turn"], name="trace_one_per_turn"),
            models.CheckConstraint(
                condition=models.Q(outcome__in=TurnOutcome.values), name="trace_outcome_valid"
            ),
        ]
        indexes = [models.Index(fields=["helpful", "voted_at"], name="trace_votes")]

    def __str__(self):
        return f"Turn {self.turn} of conversation {self.conversation_id}: {self.outcome}"

    @property
    def server_ms(self) -> int:
        return max(0, self.total_ms - self.model_ms)


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


class ConversationOrderChange(models.Model):
    """An order change the assistant made in a conversation, at the customer's request."""

    conversation = models.ForeignKey(
        Conversation, on_delete=models.CASCADE, related_name="order_change_links"
    )
    order_change = models.OneToOneField(
        "orders.OrderChange", on_delete=models.CASCADE, related_name="conversation_link"
    )
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    # When the chat told the customer that the store did not make the change (the shop that keeps the
    # order refused it, or failed for good: support.conversations.not_made): told once, in this
    # conversation or the next that looks the order up. Empty while not told.
    customer_told_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["conversation", "created_at"]

    def __str__(self):
        return f"{self.order_change_id} from conversation {self.conversation_id}"


class ConversationDeliveryCase(models.Model):
    """A delivery problem the customer reported in a conversation; reported again in another
    conversation, the case links to both."""

    conversation = models.ForeignKey(
        Conversation, on_delete=models.CASCADE, related_name="delivery_case_links"
    )
    delivery_case = models.ForeignKey(
        "orders.DeliveryCase", on_delete=models.CASCADE, related_name="conversation_links"
    )
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["conversation", "created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["conversation", "delivery_case"], name="conversation_delivery_case_once"
            )
        ]

    def __str__(self):
        return f"Case {self.delivery_case_id} from conversation {self.conversation_id}"


class StaffAvailability(models.Model):
    """A member of staff who said they can answer chats now, until they go idle."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    # Moved on while they use the inbox; past it, they count as away.
    available_until = models.DateTimeField(db_index=True)

    class Meta:
        verbose_name_plural = "staff availability"

    def __str__(self):
        return f"{self.user} available until {self.available_until:%H:%M}"


class ConversationNote(models.Model):
    """A note between colleagues on a conversation. Staff only: never in the customer's transcript, never
    in what the model is sent (those read ConversationMessage, and nothing else)."""

    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="notes")
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    text = models.TextField()
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["conversation", "created_at", "pk"]

    def __str__(self):
        return f"Note {self.pk} on conversation {self.conversation_id}"


class ConversationAssignment(models.Model):
    """Who had the conversation from when: each change of `Conversation.assigned_to`, by whom (None: the
    system, as when a deleted colleague's conversations wait again)."""

    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="assignments")
    # None: nobody (handed back to the assistant, or waiting again).
    assigned_to = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    assigned_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["conversation", "at", "pk"]

    def __str__(self):
        return f"Conversation {self.conversation_id} to {self.assigned_to_id or 'nobody'}"
