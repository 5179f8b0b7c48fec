"""Reading what a shop platform sent, whatever kind each value turns out to be: a list where the
platform documents one is read as a list only when it is one. The order intake (orders.inbound) checks
what is read and names each field it refuses; nothing here raises."""

import json
from collections.abc import Callable, Mapping


def _as_word(constant: str) -> str:
    return constant


def platform_json_loads(body: bytes | str) -> object:
    """A platform's JSON, with NaN, Infinity and -Infinity (which JSON does not have but Python's parser
    takes) kept as the words they are: a field holding one is then refused by its own check ("total
    must be an amount"), never a float the database cannot store as JSON. ValueError when not JSON."""
    return json.loads(body, parse_constant=_as_word)


def objects_in(value: object) -> list[Mapping]:
    """The objects of a list the platform sent (a fulfilment's lines, a refund's transactions), none
    when it sent no list: a part of an order's history that cannot be read is left out."""
    return [item for item in value if isinstance(item, Mapping)] if isinstance(value, list) else []


def as_list_or_sent(value: object, read: Callable[[list[Mapping]], object]) -> object:
    """`read` of a list the platform sent (an order's lines, its refunds), or what it sent instead for
    the intake to refuse by its field ("items must be a list"); nothing sent is an empty list."""
    if value is None:
        return read([])
    return read(objects_in(value)) if isinstance(value, list) else value


def text_of(value: object) -> str:
    """A name's part as text: "" for nothing, else what was sent, as text."""
    return "" if value is None or value == "" else str(value)
