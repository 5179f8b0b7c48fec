"""A shop's order however malformed: every field of the platforms' documented orders, at every depth,
replaced with values of the wrong kind (what a plugin, a proxy or an attacker with the secret can send)
is read and refused by its field, never an error of ours (a task that fails, then `failed`)."""

import copy
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from connection.payloads import platform_json_loads
from connection.platform_http import platform_id
from connection.shopify.orders import shopify_order
from connection.woocommerce.orders import woocommerce_order
from orders.intake import OrderRefused, incoming_order_clean

PLATFORMS = Path(__file__).with_name("platforms")
SHOPIFY = json.loads((PLATFORMS / "shopify_order.json").read_text())["order"]
WOOCOMMERCE = json.loads((PLATFORMS / "woocommerce_order_us.json").read_text())
# Values of every JSON kind, and the words the webhook receiver keeps NaN and Infinity as.
ODD: tuple[object, ...]
ODD = (5, -1, 10**30, 2.5, True, None, "", "x", "NaN", "-Infinity", [], [5], {}, {"a": [1]})


def _paths(value: object, path: tuple = (), depth: int = 3) -> Iterator[tuple]:
    """Every place in a payload, to `depth`: a key of an object, the first item of a list."""
    if depth == 0:
        return
    if isinstance(value, dict):
        for key, inner in value.items():
            yield (*path, key)
            yield from _paths(inner, (*path, key), depth - 1)
    elif isinstance(value, list) and value:
        yield (*path, 0)
        yield from _paths(value[0], (*path, 0), depth - 1)


def _with(payload: dict, path: tuple, odd: object) -> dict:
    changed = copy.deepcopy(payload)
    place = changed
    for step in path[:-1]:
        place = place[step]
    place[path[-1]] = odd
    return changed


@pytest.mark.parametrize(("read", "payload"), [(shopify_order, SHOPIFY), (woocommerce_order, WOOCOMMERCE)])
def test_any_field_of_any_kind_is_read_and_taken_or_refused_never_an_error(read, payload):
    tried = 0
    for path in _paths(payload):
        for odd in ODD:
            try:
                number, data = read(_with(payload, path, odd))
                incoming_order_clean(number=number, data=data)
            except OrderRefused as refused:
                assert refused.problems and all(problem["field"] for problem in refused.problems)
            except Exception as error:
                pytest.fail(f"{'.'.join(map(str, path))} = {odd!r}: {type(error).__name__}: {error}")
            tried += 1
    assert tried > 1000


def test_a_platform_id_is_a_64_bit_whole_number_or_none_so_it_fits_its_column():
    assert platform_id(2**63 - 1) == "9223372036854775807"
    assert [platform_id(odd) for odd in (10**4000, 2**63, 0, -5, True, "12", 1.0)] == [""] * 7


def test_nan_in_a_platforms_listing_is_kept_as_a_word_for_its_field_to_refuse():
    assert platform_json_loads(b'{"total": NaN, "n": -Infinity}') == {"total": "NaN", "n": "-Infinity"}
