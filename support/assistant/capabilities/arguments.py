"""A tool's arguments: a pydantic model per tool, strict (a number is not an order number, an unknown name
is refused). The same model gives the JSON schema both providers read (ToolArguments.json_schema) and
checks what the model sends: a bad argument is named field by field, in our words, never echoed."""

import unicodedata
from collections.abc import Callable
from typing import Annotated, Any, ClassVar, Protocol

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    WithJsonSchema,
)
from pydantic_core import PydanticCustomError

from orders.inbound_rules import email_canonical
from orders.numbers import MAX_LENGTH as ORDER_NUMBER_MAX_LENGTH
from orders.numbers import ORDER_NUMBERS
from store.text import text_secrets_masked

MAX_EMAIL_LENGTH = 254
MAX_REASON_LENGTH = 500
MAX_TITLE_LENGTH = 300
MAX_ITEM_TITLES = 20
MAX_SUMMARY_LENGTH = 300


# --- Arguments: pydantic models, one per tool ---


def clean_text(value: Any) -> Any:
    """Turn line breaks and tabs into spaces, drop other control and format characters, trim."""
    if not isinstance(value, str):
        return value  # the type check that follows names it
    kept = []
    for char in value:
        if char in "\t\n\r":
            kept.append(" ")
        elif unicodedata.category(char) not in ("Cc", "Cf"):
            kept.append(char)
    return "".join(kept).strip()


# One line of the customer's words, cleaned, not empty, at most so many characters, with card data and
# passwords masked (store.text.text_secrets_masked): what it becomes (a return's reason, a case's details,
# a note for staff) is stored, sent in events and emailed. A field gives its description beside it:
# Annotated[ReasonArgument, Field(description=...)].
ReasonArgument = Annotated[
    str,
    Field(min_length=1, max_length=MAX_REASON_LENGTH),
    BeforeValidator(clean_text),  # after Field: cleaned, then measured as a string
    AfterValidator(text_secrets_masked),
]
SummaryArgument = Annotated[
    str,
    Field(min_length=1, max_length=MAX_SUMMARY_LENGTH),
    BeforeValidator(clean_text),  # after Field: cleaned, then measured as a string
    AfterValidator(text_secrets_masked),
]


def shaped(check: Callable[[str], str | None], shape: str) -> AfterValidator:
    def validate(value: str) -> str:
        canonical = check(value)
        if canonical is None:
            raise PydanticCustomError("shape", "must look like {shape}", {"shape": shape})
        return canonical

    return AfterValidator(validate)


def _order_number(value: str) -> str:
    """The number as the store writes it, of any of its shops' shapes now (read when the tool is called:
    the shapes are the shops', kept in the database)."""
    if (canonical := ORDER_NUMBERS.canonical(value)) is None:
        raise PydanticCustomError("shape", "must look like {shape}", {"shape": ORDER_NUMBERS.example})
    return canonical


OrderNumberArgument = Annotated[
    str,
    # Room for the spaces people type inside a number ("BK 10042").
    Field(min_length=1, max_length=ORDER_NUMBER_MAX_LENGTH + 8),
    BeforeValidator(clean_text),  # after Field: cleaned, then measured as a string
    AfterValidator(_order_number),
    # No shape here: the schema is made once, the shops' shapes may change; the system prompt says it.
    WithJsonSchema({"type": "string", "description": "The order number as the customer gave it."}),
]
EmailArgument = Annotated[
    str,
    Field(min_length=1, max_length=MAX_EMAIL_LENGTH),
    BeforeValidator(clean_text),  # after Field: cleaned, then measured as a string
    shaped(email_canonical, "name@example.com"),
    WithJsonSchema({"type": "string", "description": "The email the customer gave for the order."}),
]


def _titles(value: list[str]) -> list[str] | None:
    titles = [clean_text(title)[:MAX_TITLE_LENGTH] for title in value]
    return [title for title in titles if title] or None


# Book titles as the customer or a tool result named them: at most MAX_ITEM_TITLES, each cut to
# MAX_TITLE_LENGTH, empty ones dropped (None when none is left). A field gives its description beside it.
TitlesArgument = Annotated[list[str], Field(max_length=MAX_ITEM_TITLES), AfterValidator(_titles)]


class ToolArguments(BaseModel):
    """A tool's arguments. Strict: a number is not an order number, an unknown name is refused."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    # Names of which at least one must be given (the first is named when none is).
    one_of_required: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def json_schema(cls) -> dict[str, Any]:
        """The input schema both providers read: nested models inlined (with what is said beside them),
        optional fields as fields the model may leave out; without pydantic's titles, defaults and
        lengths (checked here, not worth the model's tokens) or the classes' docstrings (for
        developers)."""
        schema = cls.model_json_schema()
        definitions = schema.pop("$defs", {})
        schema.pop("description", None)
        return _schema_node(schema, definitions)

    @classmethod
    def parsed(cls, raw: Any) -> "ToolArguments":
        """The arguments, or InvalidArguments naming each problem by field, never echoing a value."""
        problems = []
        if (
            isinstance(raw, dict)
            and cls.one_of_required
            and all(raw.get(name) is None for name in cls.one_of_required)
        ):
            problems.append({"field": cls.one_of_required[0], "problem": "is required"})
        try:
            arguments = cls.model_validate(raw)
        except ValidationError as invalid:
            raise InvalidArguments(problems + _problems(invalid, cls)) from None
        if problems:
            raise InvalidArguments(problems)
        return arguments


_NOT_SENT = frozenset({"title", "default", "minLength", "maxLength", "maxItems"})


def _schema_node(node: dict[str, Any], definitions: dict[str, dict]) -> dict[str, Any]:
    """One schema node as sent: its keywords, never a property's name, are what is left out."""
    if "$ref" in node:
        definition = {
            key: value
            for key, value in definitions[node["$ref"].rsplit("/", 1)[1]].items()
            if key != "description"  # a nested model's docstring; a description beside the $ref stays
        }
        node = {**definition, **{key: value for key, value in node.items() if key != "$ref"}}
    options = node.get("anyOf")
    if options and {"type": "null"} in options and len(options) == 2:
        # An optional field is written X | None for Python; the model sends it or leaves it out.
        [kept] = [option for option in options if option != {"type": "null"}]
        node = {**{key: value for key, value in node.items() if key != "anyOf"}, **kept}
        return _schema_node(node, definitions)
    sent: dict[str, Any] = {}
    for key, value in node.items():
        if key in _NOT_SENT:
            continue
        if key == "properties":
            sent[key] = {name: _schema_node(prop, definitions) for name, prop in value.items()}
        elif isinstance(value, dict):
            sent[key] = _schema_node(value, definitions)
        elif isinstance(value, list):
            sent[key] = [
                _schema_node(item, definitions) if isinstance(item, dict) else item for item in value
            ]
        else:
            sent[key] = value
    if sent.get("type") == "object":
        sent.setdefault("properties", {})
        sent["additionalProperties"] = False
    return sent


class InvalidArguments(Exception):
    def __init__(self, problems: list[dict[str, str]]):
        self.problems = problems


def _problems(invalid: ValidationError, model: type[BaseModel]) -> list[dict[str, str]]:
    """Each error in our words: the field's name (dotted inside an object) and what to fix."""
    problems: list[dict[str, str]] = []
    other = False
    for error in invalid.errors(include_url=False, include_input=False):
        kind, loc, context = error["type"], error["loc"], error.get("ctx") or {}
        if kind in ("model_type", "model_attributes_type", "dict_type") and not loc:
            return [{"field": "(arguments)", "problem": "must be a JSON object"}]
        name = ".".join(str(part) for part in loc if not isinstance(part, int))
        if any(isinstance(part, int) for part in loc):
            kind = "list_type"  # an item of a list that is not text
        if kind == "extra_forbidden":
            # The unknown names are the model's input: name only what is accepted.
            if len(loc) == 1:
                other = True
            elif not any(existing["field"] == name.rpartition(".")[0] for existing in problems):
                inner = _model_at(model, loc[:-1])
                problems.append(
                    {
                        "field": name.rpartition(".")[0],
                        "problem": "only these fields exist: " + ", ".join(inner.model_fields),
                    }
                )
            continue
        problem = {
            "missing": "is required",
            "string_type": "must be a string",
            "string_too_short": "must not be empty",
            "string_too_long": f"must be at most {context.get('max_length')} characters",
            "list_type": "must be a list of strings",
            "model_type": "must be an object",
            "too_long": f"must list at most {context.get('max_length')} titles",
            "enum": f"must be one of {context.get('expected', '').replace(' or ', ', ')}",
            "literal_error": f"must be one of {context.get('expected', '').replace(' or ', ', ')}",
        }.get(kind, error["msg"])
        if not any(existing["field"] == name for existing in problems):
            problems.append({"field": name, "problem": problem})
    if other:
        accepted = ", ".join(sorted(model.model_fields))
        problems.append({"field": "(other)", "problem": "only these parameters exist: " + accepted})
    return problems


def _model_at(model: type[BaseModel], loc: tuple[int | str, ...]) -> type[BaseModel]:
    for part in loc:
        inner = model.model_fields[str(part)].annotation
        assert isinstance(inner, type) and issubclass(inner, BaseModel), inner  # a nested model's field
        model = inner
    return model


class OrderArguments(ToolArguments):
    """An order, named by the customer with the email on it."""

    order_id: OrderNumberArgument
    customer_email: EmailArgument


class NamesAnOrder(Protocol):
    """Arguments that name an order with the email on it: OrderArguments, or a tool's own with both."""

    @property
    def order_id(self) -> str: ...

    @property
    def customer_email(self) -> str: ...
