"""Checks of the stored orders against the settings, run by `manage.py migrate` (and by `check
--database default`): a deployment that would leave stored orders unfindable does not go ahead."""

from django.core import checks
from django.db import DatabaseError, connections

from orders.numbers import ORDER_NUMBERS

# How many of the numbers no shape matches the message names.
_NAMED = 3


@checks.register(checks.Tags.database)
def order_numbers_check(app_configs=None, databases=None, **kwargs) -> list[checks.CheckMessage]:
    """Every stored order's number has one of the store's shapes (BOOKLY_ORDER_NUMBER_PATTERN or one of
    BOOKLY_ORDER_NUMBER_FORMER_PATTERNS): else customers, the tools and the store API could not find it."""
    from orders.models import Order

    problems = []
    for alias in databases or ():
        if Order._meta.db_table not in connections[alias].introspection.table_names():
            continue  # not migrated yet: no orders
        unfound, count = [], 0
        try:
            numbers = Order.objects.using(alias).values_list("number", flat=True).iterator(chunk_size=5000)
            for number in numbers:
                if not ORDER_NUMBERS.exact.fullmatch(number):
                    count += 1
                    if len(unfound) < _NAMED:
                        unfound.append(number)
        except DatabaseError:  # a schema older than the check reads: the migration comes first
            continue
        if count:
            problems.append(
                checks.Error(
                    f"{count} stored order{'s have numbers' if count != 1 else ' has a number'} of a shape "
                    f"BOOKLY_ORDER_NUMBER_PATTERN does not match ({', '.join(unfound)}): customers, the "
                    "assistant's tools and the store API would no longer find them.",
                    hint="Keep the shape they have in BOOKLY_ORDER_NUMBER_FORMER_PATTERNS (shapes "
                    "separated by spaces, e.g. BK-[0-9]{4,6}).",
                    id="orders.E001",
                )
            )
    return problems
