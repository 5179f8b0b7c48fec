import re

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator, RegexValidator
from django.db import models

from store.categories import ItemCategory
from store.text import text_has_unseen, text_multi_line, text_single_line

TOPIC_KEY_PATTERN = r"^[a-z_]{1,40}$"
MAX_EXAMPLE_QUESTIONS = 20
MAX_EXAMPLE_QUESTION_CHARS = 200
# What opens or closes a section of the assistant's instructions: <critical_rules>, </faq_topics>.
PROMPT_TAG_RE = re.compile(r"</?\s*[A-Za-z_][\w-]*\s*/?>")


def example_questions_validate(value: str) -> None:
    """One question a line, 1 to 20 of them, each at most 200 characters, plain text, none twice."""
    questions = [line.strip() for line in value.splitlines() if line.strip()]
    if not questions:
        raise ValidationError("Write at least one question a customer might ask, one a line.")
    if len(questions) > MAX_EXAMPLE_QUESTIONS:
        raise ValidationError(f"Write at most {MAX_EXAMPLE_QUESTIONS} questions.")
    for question in questions:
        if len(question) > MAX_EXAMPLE_QUESTION_CHARS:
            raise ValidationError(
                f"Each question can be at most {MAX_EXAMPLE_QUESTION_CHARS} characters: “{question[:40]}…”"
            )
        if any(char in question for char in "<>|") or text_has_unseen(question):
            raise ValidationError(f"Plain text only, without <, > or |: “{question}”")
    if len({question.casefold() for question in questions}) < len(questions):
        raise ValidationError("Each question only once, please.")


class PolicyEntryManager(models.Manager["PolicyEntry"]):
    def get_by_natural_key(self, topic: str) -> "PolicyEntry":
        return self.get(topic=topic)


class PolicyEntry(models.Model):
    """One FAQ answer the assistant may quote word for word."""

    topic = models.CharField(
        max_length=40,
        unique=True,
        validators=[
            RegexValidator(
                TOPIC_KEY_PATTERN,
                "Use only lowercase letters and underscores (for example shipping_times).",
            )
        ],
        help_text=(
            "Lowercase letters and underscores, at most 40 characters. The assistant looks answers up by it."
        ),
    )
    title = models.CharField(max_length=200)
    text = models.TextField(help_text="Quoted to customers exactly as written. Plain text, no markdown.")
    example_questions = models.TextField(
        validators=[example_questions_validate],
        help_text=(
            "How customers ask about this topic, one question a line (1 to 20), in their words, e.g. "
            "“Do you offer gift wrapping?”. The first three, the most typical, are given to the "
            "assistant to match questions to topics."
        ),
    )
    is_published = models.BooleanField(
        "published", default=True, help_text="Only published entries are quoted to customers."
    )
    updated_at = models.DateTimeField("last updated", auto_now=True)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name="last updated by",
    )

    objects = PolicyEntryManager()

    class Meta:
        ordering = ["topic"]
        verbose_name = "FAQ entry"
        verbose_name_plural = "FAQ entries"

    def __str__(self) -> str:
        return self.title

    def clean(self) -> None:
        """Staff's words as the assistant's prompt and tools carry them: the title on one line without
        < > or | (the prompt lists it between its own tags), the answer without anything that reads as
        a tag (<critical_rules>), both without control or bidi characters."""
        self.title = text_single_line(self.title)
        self.text = text_multi_line(self.text)
        errors: dict[str, str] = {}
        if any(char in self.title for char in "<>|"):
            errors["title"] = "Plain text only, without <, > or |."
        if tag := PROMPT_TAG_RE.search(self.text):
            errors["text"] = (
                f"Plain text only: “{tag.group(0)}” reads as a tag of the assistant's instructions."
            )
        if errors:
            raise ValidationError(errors)

    def natural_key(self) -> tuple[str]:
        return (self.topic,)

    @property
    def questions(self) -> list[str]:
        return [line.strip() for line in self.example_questions.splitlines() if line.strip()]


class ReturnPolicy(models.Model):
    """The store's return policy: one row, read by the eligibility check and the assistant's prompt."""

    SINGLETON_ID = 1

    id = models.PositiveSmallIntegerField(primary_key=True, default=SINGLETON_ID, editable=False)
    window_days = models.PositiveSmallIntegerField(
        "return window (days from delivery)", validators=[MinValueValidator(1)]
    )
    condition_requirements = models.TextField(
        help_text="The condition a returned item must be in, in words a customer understands."
    )
    refund_method = models.CharField(max_length=200, help_text='For example "the original payment method".')
    refund_timeline_business_days = models.PositiveSmallIntegerField(
        "refund timeline (business days after we receive the return)", validators=[MinValueValidator(1)]
    )
    non_returnable_categories = models.JSONField(
        default=list, blank=True, help_text="Item categories that can never be returned."
    )

    class Meta:
        verbose_name = "return policy"
        verbose_name_plural = "return policy"
        constraints = [
            models.CheckConstraint(condition=models.Q(id=1), name="return_policy_single_row"),
            models.CheckConstraint(
                condition=models.Q(window_days__gte=1), name="return_policy_window_positive"
            ),
            models.CheckConstraint(
                condition=models.Q(refund_timeline_business_days__gte=1),
                name="return_policy_refund_timeline_positive",
            ),
        ]

    def __str__(self) -> str:
        return "Return policy"

    @property
    def non_returnable_category_labels(self) -> list[str]:
        labels = dict(ItemCategory.choices)
        return [labels.get(value, value) for value in self.non_returnable_categories]
