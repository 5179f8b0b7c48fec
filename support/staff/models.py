"""What support staff keep for their work: saved replies (the desk's macros)."""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models

from support.conversations.placeholders import Placeholder, placeholders_unknown


def placeholders_help() -> str:
    """The placeholders a saved reply may use, each with what it stands for."""
    return "; ".join(f"{{{{{choice.value}}}}}: {choice.label}" for choice in Placeholder)


class SavedReply(models.Model):
    """A reply staff insert again and again (type / in the reply box). Shared with all staff when it has
    no owner (superusers manage those), else its owner's own."""

    title = models.CharField(max_length=80)
    text = models.TextField(
        help_text=f"Placeholders are filled from the conversation: {placeholders_help()}."
    )
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="saved_replies",
        help_text="Empty: shared with all staff.",
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["title", "pk"]
        verbose_name_plural = "saved replies"
        constraints = [
            models.UniqueConstraint(fields=["owner", "title"], name="saved_reply_title_per_owner"),
            models.UniqueConstraint(
                fields=["title"], condition=models.Q(owner__isnull=True), name="saved_reply_shared_title"
            ),
        ]

    def __str__(self):
        return self.title

    def clean(self):
        unknown = placeholders_unknown(self.text)
        if unknown:
            names = ", ".join("{{" + name + "}}" for name in unknown)
            raise ValidationError(
                {"text": f"There is no placeholder {names}. You may use: {placeholders_help()}."}
            )
        limit = settings.BOOKLY_MAX_MESSAGE_CHARS
        if len(self.text) > limit:
            raise ValidationError(
                {"text": f"A reply can be at most {limit} characters; this one has {len(self.text)}."}
            )
