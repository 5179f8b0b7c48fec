"""Amounts as customers read them, and the currencies a written sign may be."""

from decimal import Decimal

import pytest

from orders.money import currencies_written, money_text


def test_an_amount_is_written_in_its_currency():
    assert [money_text(amount=Decimal("1499.5"), currency=code) for code in ("USD", "BRL", "INR")] == [
        "$1,499.50",
        "R$1,499.50",
        "₹1,499.50",
    ]


@pytest.mark.parametrize(
    ("sign", "includes", "excludes"),
    [
        ("$", {"USD", "CAD", "AUD", "MXN"}, {"BRL", "EUR"}),
        ("AU$", {"AUD", "USD"}, {"BRL"}),  # any dollar: "AU$", "C$", "S$" are how each country writes its own
        ("R$", {"BRL"}, {"USD"}),
        ("€", {"EUR"}, {"USD"}),
        ("EUR", {"EUR"}, {"USD"}),
        ("¥", {"JPY", "CNY"}, {"USD"}),
    ],
)
def test_a_sign_names_the_currencies_it_may_be(sign, includes, excludes):
    written = currencies_written(sign)
    assert includes <= written and not excludes & written


def test_a_sign_babel_does_not_write_in_english_names_no_currency():
    assert currencies_written("₽") == frozenset()  # the check then leaves the currency unsaid
