"""Amounts as a customer reads them: in their order's currency, with its sign, as the store's language
writes it ("$24.99", "R$189.90", "₹1,499.00"), from Babel's CLDR data rather than a table of our own."""

from decimal import Decimal
from functools import cache

from babel.numbers import format_currency, get_currency_name, get_currency_symbol, list_currencies
from django.conf import settings

# The signs written for more than one currency: "$" for the dollars and pesos, "¥" for the yen and yuan.
_SHARED_SIGNS = {"$": ("Dollar", "Peso"), "¥": ("Yen", "Yuan")}


def _locale() -> str:
    return settings.LANGUAGE_CODE.replace("-", "_")


def money_text(*, amount: Decimal, currency: str) -> str:
    return format_currency(amount, currency, locale=_locale())


@cache
def currencies_written(sign: str) -> frozenset[str]:
    """The currencies an amount's sign or code may be in ("R$": BRL; "$", "AU$": the dollars' and
    pesos'; "EUR": EUR); empty when the sign is none Babel knows in English ("₽" is written "RUB"): the
    currency is then not said."""
    sign = sign.strip()
    if sign.upper() in list_currencies():
        return frozenset({sign.upper()})
    if sign == "US$":
        return frozenset({"USD"})
    codes = {code for code in list_currencies() if get_currency_symbol(code, locale="en_US") == sign}
    if not codes and sign.endswith("$"):
        sign = "$"  # "AU$", "C$", "S$": a dollar, as each country writes its own
    if words := _SHARED_SIGNS.get(sign):
        codes |= {
            code
            for code in list_currencies()
            if any(word in get_currency_name(code, locale="en") for word in words)
        }
    return frozenset(codes)
