"""The rule of each field of what shops send in (orders.inbound's models): a line of text that fits its
column, an email address, a choice, a date, the shop's time, an amount, a currency, a flag, a whole
number, a web address. Each is a plain pydantic validator: it converts nothing ("5" is no quantity, 12.5
no amount) and names its problem itself (raised as order_problem, of the error type PROBLEM) in words a
person can act on, never echoing the value sent; its `json_schema_input_type` is what the published
schema says it takes.
"""

import re
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal, InvalidOperation
from typing import Annotated, Literal

from babel.numbers import get_currency_precision, list_currencies
from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.validators import URLValidator, validate_email
from django.db import models
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from pydantic import Field, PlainValidator, StringConstraints, ValidationInfo
from pydantic_core import PydanticCustomError

from orders.models import Order, Shipment, column_length
from orders.patterns import ISO_DATE_PATTERN
from store.text import text_has_unseen, text_single_line

# How far ahead of our clock the shop's `updated_at` may be: two clocks a little apart, not a time zone
# read wrong (an hour or more) or a year mistyped. A time far ahead would make every later real version
# of the order stale (orders.intake's rule).
SHOP_CLOCK_AHEAD = timedelta(minutes=10)
# The error type of every problem the validators below name in their own words.
PROBLEM = "order_problem"
_ISO_DATE_RE = re.compile(ISO_DATE_PATTERN)


def order_problem(message: str) -> PydanticCustomError:
    return PydanticCustomError(PROBLEM, message)


def value_required(value: object) -> None:
    # A required field sent as null is as missing as one not sent.
    if value is None:
        raise order_problem("is required")


def text_clean(value: object, *, max_length: int, required: bool) -> str:
    if required:
        value_required(value)
    if value is None or value == "":
        if required:
            raise order_problem("must not be empty")
        return ""
    if not isinstance(value, str):
        raise order_problem("must be a string")
    if len(value) > max_length:  # as sent, as the schema says: never cut down to fit
        raise order_problem(f"must be at most {max_length} characters")
    if text_has_unseen(value.replace("\t", " ")):
        raise order_problem("must not contain control or invisible characters")
    value = text_single_line(value)
    if len(value) > max_length:
        raise order_problem(f"must be at most {max_length} characters")
    if required and not value:
        raise order_problem("must not be empty")
    return value


def text_rule(model: type[models.Model], field: str, *, required: bool = False) -> PlainValidator:
    """One line of text, at most as long as the column it is stored in."""
    max_length = column_length(model, field)
    sent = Annotated[str, StringConstraints(min_length=1 if required else 0, max_length=max_length)]
    return PlainValidator(
        lambda value: text_clean(value, max_length=max_length, required=required),
        json_schema_input_type=sent if required else sent | None,
    )


def email_canonical(value: str) -> str | None:
    """The email as the store keeps it (lower case), or None when Django's own check, the order's
    EmailField's, refuses it: the one owner of what an email is, for the intake and the assistant."""
    value = value.lower()
    try:
        validate_email(value)
    except DjangoValidationError:
        return None
    return value


_EMAIL_SENT = Annotated[str, StringConstraints(max_length=column_length(Order, "customer_email"))] | None


def _email(value: object) -> str:
    """The customer's email address, as the column keeps it; blank when the shop has none."""
    max_length = column_length(Order, "customer_email")
    email = text_clean(value, max_length=max_length, required=False)
    if not email:
        return ""
    if len(email.lower()) > max_length:  # "İ" lowercases to two: the column holds the lowered email
        raise order_problem(f"must be at most {max_length} characters")
    canonical = email_canonical(email)
    if canonical is None:
        raise order_problem("must be an email address")
    return canonical


def email_rule() -> PlainValidator:
    return PlainValidator(_email, json_schema_input_type=_EMAIL_SENT)


def choice_rule(choices: type[models.TextChoices], *, required: bool = True) -> PlainValidator:
    sent = Literal[tuple(choices.values)] if required else Literal[(*choices.values, "")] | None

    def clean(value: object) -> str:
        if required:
            value_required(value)
        elif value is None or value == "":
            return ""
        if not isinstance(value, str) or value not in choices.values:
            raise order_problem("must be one of " + ", ".join(choices.values))
        return value

    return PlainValidator(clean, json_schema_input_type=sent)


def date_rule(*, required: bool) -> PlainValidator:
    def clean(value: object) -> date | None:
        if required:
            value_required(value)
        if value is None:
            return None
        try:
            if not isinstance(value, str) or not _ISO_DATE_RE.fullmatch(value):
                raise ValueError
            return date.fromisoformat(value)
        except ValueError:
            raise order_problem("must be a date like 2026-04-01") from None

    return PlainValidator(clean, json_schema_input_type=date if required else date | None)


def _shop_time(value: object) -> datetime | None:
    if value is None:
        return None
    try:
        moment = parse_datetime(value) if isinstance(value, str) and len(value) <= 40 else None
        # In UTC, so that a time at the calendar's edge (9999-12-31T23:59:59-23:59) is refused here
        # rather than overflowing in the database.
        moment = moment.astimezone(UTC) if moment and moment.tzinfo else None
    except (ValueError, OverflowError):
        moment = None
    if moment is None:
        raise order_problem("must be a time like 2026-04-01T09:30:00Z, with its time zone")
    if moment > timezone.now() + SHOP_CLOCK_AHEAD:
        minutes = int(SHOP_CLOCK_AHEAD.total_seconds() // 60)
        raise order_problem(
            f"must not be more than {minutes} minutes ahead of the time now: check the shop's clock and "
            "time zone"
        )
    return moment


def shop_time_rule() -> PlainValidator:
    return PlainValidator(_shop_time, json_schema_input_type=datetime | None)


# An amount as written: digits and perhaps decimals (more than two are refused in words of their own);
# no plus sign, space or exponent ("1e3" is no price). The schema says the same of two decimals at most.
_AMOUNT_RE = re.compile(r"-?[0-9]+(?:\.[0-9]+)?")  # a minus sign: refused in words of its own
AMOUNT_PATTERN = r"^[0-9]+(\.[0-9]{1,2})?$"


def money_rule(model: type[models.Model], field: str, *, required: bool = True) -> PlainValidator:
    """An amount in the order's currency, as a string ("24.99"; a whole number is taken too), with at most
    two decimals, that fits its column; None when not required and not sent."""
    column = model._meta.get_field(field)
    if not isinstance(column, models.DecimalField) or column.max_digits is None:
        raise TypeError(f"{model.__name__}.{field} is no column of amounts")
    limit = Decimal(10) ** (column.max_digits - 2)

    def clean(value: object) -> Decimal | None:
        if value is None and not required:
            return None
        value_required(value)
        try:
            if isinstance(value, bool) or not isinstance(value, str | int):
                raise InvalidOperation
            if isinstance(value, str) and not _AMOUNT_RE.fullmatch(value):
                raise InvalidOperation
            amount = Decimal(str(value))
        except (InvalidOperation, ValueError):  # ValueError: an integer of more digits than str() writes
            raise order_problem('must be an amount like "24.99" (a string)') from None
        exponent = amount.as_tuple().exponent  # a letter for what is not finite ("n", "F")
        if not amount.is_finite() or amount.is_signed() or (isinstance(exponent, int) and exponent < -2):
            raise order_problem("must be zero or more, with at most two decimals")
        if amount >= limit:
            raise order_problem(f"must be less than {limit:,}")
        return amount.quantize(Decimal("0.01"))

    sent = (
        Annotated[
            str,
            Field(
                pattern=AMOUNT_PATTERN,
                description=f'An amount like "24.99" (a whole number is taken too), less than {limit:,}.',
            ),
        ]
        | Annotated[int, Field(ge=0, lt=int(limit))]
    )
    return PlainValidator(clean, json_schema_input_type=sent if required else sent | None)


_CURRENCY_SENT = Annotated[
    str, Field(pattern=r"^[A-Za-z]{3}$", description="ISO 4217 code; its shop's currency when left out.")
]


def _currency(value: object) -> str:
    value_required(value)
    code = value.upper() if isinstance(value, str) else None
    if code not in list_currencies():
        raise order_problem('must be a currency by its ISO 4217 code, like "USD", "EUR" or "BRL"')
    if get_currency_precision(code) > 2:
        raise order_problem("is not supported yet: amounts are kept with at most two decimals")
    return code


def currency_rule() -> PlainValidator:
    return PlainValidator(_currency, json_schema_input_type=_CURRENCY_SENT)


def _shop_currency(value: object, info: ValidationInfo) -> str | None:
    if value is None:
        return None
    code = _currency(value)
    if code == info.data.get("currency"):  # not sent: checked once the shop's is known (intake)
        raise order_problem("must be another currency than the order's, or left out")
    return code


def shop_currency_rule() -> PlainValidator:
    """Another currency than the order's (read before it), or None."""
    return PlainValidator(_shop_currency, json_schema_input_type=_CURRENCY_SENT | None)


def _flag(value: object) -> bool:
    if not isinstance(value, bool):
        raise order_problem("must be true or false")
    return value


def flag_rule() -> PlainValidator:
    return PlainValidator(_flag, json_schema_input_type=bool)


def whole_number_rule(*, low: int, high: int) -> PlainValidator:
    def clean(value: object) -> int:
        value_required(value)
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise order_problem(f"must be a whole number from {low} to {high}")
        return value

    return PlainValidator(clean, json_schema_input_type=Annotated[int, Field(ge=low, le=high)])


_URL_SENT = Annotated[str, StringConstraints(max_length=column_length(Shipment, "tracking_url"))] | None


def _url(value: object) -> str:
    """A web address (http or https) a customer may open, or nothing."""
    value = text_clean(value, max_length=column_length(Shipment, "tracking_url"), required=False)
    if value:
        try:
            URLValidator(schemes=["http", "https"])(value)
        except DjangoValidationError:
            raise order_problem("must be a web address (https://…)") from None
    return value


def url_rule() -> PlainValidator:
    return PlainValidator(_url, json_schema_input_type=_URL_SENT)
