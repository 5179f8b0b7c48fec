"""Checks of the stored orders against the settings, run by `manage.py migrate` (and by `check
--database default`): a deployment that would leave stored orders unfindable does not go ahead."""

from collections.abc import Sequence
from typing import Any

from django.apps import AppConfig
from django.core import checks
from django.db import DatabaseError, connections

# How many of the numbers no shape matches the message names.
_NAMED = 3


@checks.register(checks.Tags.database)
def order_numbers_check(
    app_configs: Sequence[AppConfig] | None = None, databases: Sequence[str] | None = None, **kwargs: Any
) -> list[checks.CheckMessage]:
    """Every stored order's number has its shop's shape (orders.Shop, or one of
    BOOKLY_ORDER_NUMBER_FORMER_PATTERNS): else customers, the tools and the store API could not find it.
    A new shape for new shops (BOOKLY_ORDER_NUMBER_PATTERN) changes no stored shop's."""
    from orders.models import Order, Shop

    problems: list[checks.CheckMessage] = []
    for alias in databases or ():
        if Shop._meta.db_table not in connections[alias].introspection.table_names():
            continue  # not migrated yet: no shops
        unfound: list[str] = []
        count = 0
        try:
            shapes = {shop.pk: shop.numbering.exact for shop in Shop.objects.using(alias)}
            numbers = Order.objects.using(alias).values_list("shop_id", "number").iterator(chunk_size=5000)
            for shop_id, number in numbers:
                if not shapes[shop_id].fullmatch(number):
                    count += 1
                    if len(unfound) < _NAMED:
                        unfound.append(number)
        except DatabaseError:  # a schema older than the check reads: the migration comes first
            continue
        if count:
            problems.append(
                checks.Error(
                    f"{count} stored order{'s have numbers' if count != 1 else ' has a number'} of a shape "
                    f"their shop's does not match ({', '.join(unfound)}): customers, the assistant's tools "
                    "and the store API would no longer find them.",
                    hint="Give the shop the shape its numbers have (admin: Shops), or keep the shape they "
                    "had in BOOKLY_ORDER_NUMBER_FORMER_PATTERNS (shapes separated by spaces, e.g. "
                    "BK-[0-9]{4,6}).",
                    id="orders.E001",
                )
            )
    return problems
