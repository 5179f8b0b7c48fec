"""The customer's requests, one Django form per shape, read the same way by both ways in: the page binds
its POST (every value a string: turn=3, helpful=yes), the JSON API its parsed body (`from_json`: values
as JSON types them, turn 3, helpful true; a string where a number belongs is a mistake there).

A form says what is wrong in one sentence for the customer (`mistake`); each interface answers in its
own shape: the page shows the sentence over the form and keeps the customer's words, the API sends
{"error": the code of the field that is wrong, "detail": the sentence}.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, Self, cast, overload

from django import forms
from django.core.exceptions import NON_FIELD_ERRORS, ValidationError
from django.core.validators import validate_email
from django.forms.utils import ErrorDict

from store.text import text_has_unseen
from support.assistant.turn import InvalidMessage, message_clean
from support.conversations.feedback import RATING_COMMENT_MAX_CHARS
from support.conversations.models import Conversation

SEND_JSON = 'Send JSON like {"message": "Where is my order?"}.'
HANDOFF_JSON = (
    'Send JSON like {"reason": "My parcel arrived damaged", "email": "you@example.com"}, or no body.'
)
FEEDBACK_JSON = 'Send JSON like {"turn": 3, "helpful": true} or {"rating": 5, "comment": "Quick and clear"}.'
HANDOFF_NOTE_MAX_CHARS = 300
INVALID_EMAIL = "That doesn't look like an email address. Please check it."
INVALID_VOTE = "turn must be a whole number and helpful true or false."
INVALID_RATING = "Choose a rating from 1 (poor) to 5 (excellent)."


@dataclass(frozen=True)
class Mistake:
    """What is wrong with a request: `code` for the API's "error", `detail` a sentence for the customer."""

    code: str
    detail: str


class TextField(forms.Field):
    """Text as sent, or "" when none is. Anything but a string is `invalid` (a CharField would take the
    JSON number 42 as "42"), and so is text longer than `max_length`. A form's line breaks (\\r\\n) count
    as one character, as the browser counted them against the box's maxlength."""

    def __init__(self, *, invalid: str, max_length: int | None = None, **kwargs):
        kwargs.setdefault("required", False)
        super().__init__(**kwargs)
        self.invalid, self.max_length = invalid, max_length

    def to_python(self, value) -> str:
        if value is None:
            return ""
        if not isinstance(value, str):
            raise ValidationError(self.invalid, code="invalid")
        value = value.replace("\r\n", "\n")
        if self.max_length is not None and len(value) > self.max_length:
            raise ValidationError(self.invalid, code="invalid")
        return value


class TypedField(forms.Field):
    """A value whose type the JSON body carries and the page's form spells as text: the form tells its
    fields which way it was bound (`typed`)."""

    typed = False

    def __init__(self, *, invalid: str, **kwargs):
        kwargs.setdefault("error_messages", {"required": invalid})
        super().__init__(**kwargs)
        self.invalid = invalid


class WholeNumberField(TypedField):
    """A whole number: from JSON an integer (true is no number), from the page up to nine digits."""

    def __init__(self, *, min_value: int | None = None, max_value: int | None = None, **kwargs):
        super().__init__(**kwargs)
        self.min_value, self.max_value = min_value, max_value

    def to_python(self, value) -> int | None:
        if value is None or value == "":
            return None
        if self.typed and isinstance(value, int) and not isinstance(value, bool):
            number = value
        elif (
            not self.typed
            and isinstance(value, str)
            and value.isascii()
            and value.isdigit()
            and len(value) < 10
        ):
            number = int(value)
        else:
            raise ValidationError(self.invalid, code="invalid")
        if (self.min_value is not None and number < self.min_value) or (
            self.max_value is not None and number > self.max_value
        ):
            raise ValidationError(self.invalid, code="invalid")
        return number


class YesNoField(TypedField):
    """Yes or no: from JSON true or false, from the page's buttons "yes" or "no"."""

    _WORDS = {"yes": True, "no": False}

    def to_python(self, value) -> bool | None:
        if value is None or value == "":
            return None
        if self.typed and isinstance(value, bool):
            return value
        if not self.typed and value in self._WORDS:
            return self._WORDS[value]
        raise ValidationError(self.invalid, code="invalid")


class MessageField(forms.Field):
    """The customer's message as the turn takes it (support.assistant.turn.message_clean), refused in
    the turn's own words: no text, only unseen characters, too long."""

    def __init__(self, **kwargs):
        super().__init__(required=False, **kwargs)

    def to_python(self, value) -> str:
        try:
            return message_clean(text=value)
        except InvalidMessage as invalid:
            raise ValidationError(invalid.detail, code="invalid") from None


class EmailField(TextField):
    """An address we can store and answer at: one Django's validator takes, that fits the field it is
    kept in (the validator allows longer ones), and that shows staff no other one than it is (a bidi
    override: bob@exa\\u202emple.com)."""

    def __init__(self, **kwargs):
        super().__init__(invalid=INVALID_EMAIL, **kwargs)

    def to_python(self, value) -> str:
        return super().to_python(value).strip()

    def validate(self, value: str) -> None:
        super().validate(value)
        if not value:
            return
        max_length = Conversation._meta.get_field("customer_email").max_length
        assert max_length is not None  # an EmailField always has one (254 when the model gives none)
        if len(value) > max_length or text_has_unseen(value):
            raise ValidationError(self.invalid, code="invalid")
        try:
            validate_email(value)
        except ValidationError:
            raise ValidationError(self.invalid, code="invalid") from None


class ChatForm(forms.Form):
    """A request of the chat, bound to the page's POST (`Form(request.POST)`) or to the API's parsed
    JSON body (`Form.from_json(payload)`)."""

    # The API's "detail" for a body that is not JSON, or not of this shape: the shape by example.
    json_example = ""
    # The API's "error" for a JSON body that is not of this shape (json_fields is None).
    shape_code = "invalid_json"
    # The API's "error" for a mistake in each field.
    error_codes: dict[str, str] = {}

    def __init__(self, data: Mapping | None = None, *, typed: bool = False):
        super().__init__(data)
        self.typed = typed
        # The API's "error" when the body is refused whole, not field by field (see from_json).
        self.refused_whole: str | None = None
        for field in self.fields.values():
            if isinstance(field, TypedField):
                field.typed = typed

    @classmethod
    def json_fields(cls, payload: object) -> Mapping | None:
        """The fields of a parsed JSON body, or None when the body is not of this shape. An object, by
        default; a form may read more (or less) as its shape."""
        return payload if isinstance(payload, dict) else None

    @classmethod
    def from_json(cls, payload: object) -> Self:
        """The form bound to a parsed JSON body; refused whole (shape_code) when it is not this shape."""
        fields = cls.json_fields(payload)
        form = cls({} if fields is None else fields, typed=True)
        if fields is None:
            form.refused_whole = cls.shape_code
        return form

    @classmethod
    def not_json(cls) -> Self:
        """The form for a body that is not JSON at all: refused whole ("invalid_json")."""
        form = cls({}, typed=True)
        form.refused_whole = "invalid_json"
        return form

    def full_clean(self) -> None:
        if self.refused_whole is None:
            super().full_clean()
            return
        # A body of another shape has no fields to name: the answer is the shape, by example.
        self._errors, self.cleaned_data = ErrorDict(), {}
        self.add_error(None, ValidationError(self.json_example, code=self.refused_whole))

    def mistake(self) -> Mistake | None:
        """The first thing wrong (in field order), or None when the form is valid."""
        for name, errors in self.errors.as_data().items():
            code = errors[0].code if name == NON_FIELD_ERRORS else self.error_codes[name]
            # The one error not of a field is full_clean's refusal of the whole body, with its code.
            assert code is not None
            return Mistake(code=code, detail=errors[0].messages[0])
        return None

    def first_mistake(self) -> Mistake:
        """The first thing wrong with a form found not valid: bound, as every form here is, it has one."""
        mistake = self.mistake()
        assert mistake is not None, "a valid form has no mistake"
        return mistake


class MessageForm(ChatForm):
    """One message to the assistant: {"message": "Where is my order?"}."""

    message = MessageField()

    json_example = SEND_JSON
    error_codes = {"message": "invalid_message"}

    @classmethod
    def json_fields(cls, payload: object) -> Mapping:
        # Any other JSON is a body without a message, said as such ("Please send your message as text.").
        return payload if isinstance(payload, dict) else {}


class _SuggestionOrTyped(forms.Textarea):
    """The composer's message: a suggested question when one of their buttons sent the form (they are
    submit buttons of the same form), else what is typed in the box ("" when the box was left out)."""

    def value_from_datadict(self, data, files, name):
        return data.get("suggestion") or data.get(name, "")


class ComposerForm(MessageForm):
    """The page's message form: the same message, or one of the suggested questions."""

    message = MessageField(widget=_SuggestionOrTyped)

    def _text(self, name: str) -> str:
        value = self.data.get(name, "")
        return value if isinstance(value, str) else ""

    @property
    def typed_text(self) -> str:
        """What is in the box, whichever button sent the form."""
        return self._text("message")

    @property
    def suggestion(self) -> str:
        """The suggested question whose button sent the form, or ""."""
        return self._text("suggestion")

    @property
    def unsent(self) -> str:
        """The words to give back in the box when the message is not sent: what was typed, or else the
        suggestion that was."""
        return self.typed_text if self.typed_text.strip() else (self.suggestion or self.typed_text)


class HandoffForm(ChatForm):
    """The customer asks for a person: optionally why ({"reason"}) and where to answer them
    ({"email"}, also given alone while they wait)."""

    reason = TextField(
        max_length=HANDOFF_NOTE_MAX_CHARS,
        invalid=f"The reason must be text of at most {HANDOFF_NOTE_MAX_CHARS} characters.",
    )
    email = EmailField()

    json_example = HANDOFF_JSON
    error_codes = {"reason": "invalid_reason", "email": "invalid_email"}

    @classmethod
    def json_fields(cls, payload: object) -> Mapping | None:
        # No body asks for a person with nothing more to say.
        return {} if payload is None else super().json_fields(payload)

    def clean_reason(self) -> str:
        return self.cleaned_data["reason"].strip()


class FeedbackForm(ChatForm):
    """Feedback on the conversation the page shows, which it may name ({"conversation": the reference
    the chat gave}): a vote on a reply or a rating of the whole (the two forms below). A JSON body is
    one of the two exactly, or refused whole: a vote with a rating in it is neither."""

    conversation = TextField(invalid="conversation must be the reference the chat gave.")

    json_example = FEEDBACK_JSON
    shape_code = "invalid_feedback"

    @classmethod
    def json_fields(cls, payload: object) -> Mapping | None:
        if not isinstance(payload, dict):
            return None
        required = {name for name, field in cls.base_fields.items() if field.required}
        if not required <= set(payload) <= set(cls.base_fields):
            return None
        return payload

    def clean_conversation(self) -> str | None:
        return self.cleaned_data["conversation"] or None


class VoteForm(FeedbackForm):
    """A vote on one of the assistant's replies: {"turn": 3, "helpful": true} (the page's buttons:
    turn=3, helpful=yes|no)."""

    turn = WholeNumberField(invalid=INVALID_VOTE)
    helpful = YesNoField(invalid=INVALID_VOTE)

    error_codes = dict.fromkeys(("conversation", "turn", "helpful"), "invalid_feedback")


class RatingForm(FeedbackForm):
    """A rating of the conversation, 1 to 5, and what the customer adds: {"rating": 5, "comment": ...}."""

    rating = WholeNumberField(min_value=1, max_value=5, invalid=INVALID_RATING)
    comment = TextField(
        max_length=RATING_COMMENT_MAX_CHARS,
        invalid=f"The comment can be at most {RATING_COMMENT_MAX_CHARS} characters.",
    )

    error_codes = {
        "conversation": "invalid_feedback",
        "rating": "invalid_rating",
        "comment": "invalid_comment",
    }


@overload
def feedback_form(data: Mapping | None, *, typed: Literal[False] = False) -> VoteForm | RatingForm: ...
@overload
def feedback_form(data: object, *, typed: Literal[True]) -> VoteForm | RatingForm: ...
def feedback_form(data: object, *, typed: bool = False) -> VoteForm | RatingForm:
    """The feedback form for what was sent: a vote when it speaks of a reply ("turn" or "helpful"), else
    a rating. `typed`: bound to a JSON body (from_json), not to the page's POST."""
    speaks_of_a_reply = isinstance(data, Mapping) and not {"turn", "helpful"}.isdisjoint(data)
    form_class = VoteForm if speaks_of_a_reply else RatingForm
    # Not typed, the overloads take only a mapping (the page's POST): any JSON value is for from_json.
    return form_class.from_json(data) if typed else form_class(cast(Mapping | None, data))
