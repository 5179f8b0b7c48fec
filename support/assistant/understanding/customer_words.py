"""The customer's words as the rules read them (spelling, run-together words) and the details in them
(order numbers, emails, RMA numbers, an address, titles). Not to be confused with `Reading`
(understanding/step.py): a conversation as a step reads it."""

import calendar
import functools
import re

from orders.addresses import country_code, region_named, state_code
from orders.numbers import ORDER_NUMBERS
from orders.patterns import AMOUNT_MENTION_RE, EMAIL_MENTION_RE, RMA_NUMBER_MENTION_RE


@functools.lru_cache(maxsize=1024)  # every call reads the whole history again
def plain(text: str) -> str:
    """The customer's words as the intent rules read them: lower case, straight apostrophes, without
    markup or emoji, text-speak spelled out, words run together split, and misspellings of the words
    the rules look for corrected."""
    text = text.replace("\u2019", "'").replace("\u2018", "'").lower()
    text = _MARKUP_RE.sub(" ", text.replace("#", " number "))
    words = [_respelled(word) for word in _TOKEN_RE.findall(text)]
    text = re.sub(r"\s+([?.!,])", r"\1", " ".join(word for word in words if word)).strip()
    return _WERE_RE.sub(r"where \1", text)


# Reading customers' words: tags and emphasis marks, and anything but letters, digits and punctuation.
_MARKUP_RE = re.compile(r"<[^>]{0,40}>|[*_~`#]+|[^\w\s'@.,?!:/-]+")
_TOKEN_RE = re.compile(r"[\w'@.-]+|[?!,]")
_WERE_RE = re.compile(r"^were (is|are|my|r)\b")  # "were is my order": "were" is a word, so respelled here
_TEXT_SPEAK = {
    "u": "you",
    "ur": "your",
    "r": "are",
    "pls": "please",
    "plz": "please",
    "thx": "thanks",
    "ty": "thanks",
    "thnx": "thanks",
    "tnx": "thanks",
    "im": "i'm",
    "ive": "i've",
    "dont": "don't",
    "cant": "can't",
    "wont": "won't",
    "didnt": "didn't",
    "doesnt": "doesn't",
    "isnt": "isn't",
    "havent": "haven't",
    "hasnt": "hasn't",
    "wasnt": "wasn't",
    "wheres": "where's",
    "whats": "what's",
    "hows": "how's",
    "wanna": "want to",
    "gonna": "going to",
    "gotta": "have to",
    "hv": "have",
    "abt": "about",
    "b4": "before",
    "2day": "today",
    "pw": "password",
    "pwd": "password",
    "acct": "account",
    "info": "information",
    "asap": "soon",
    "rn": "now",
    "smth": "something",
    "sth": "something",
    "ppl": "people",
    "msg": "message",
    "hi!": "hi",
    "thats": "that's",
    "thanx": "thanks",
    "thanq": "thanks",
    "hav": "have",
    "wen": "when",
    "pword": "password",
    "num": "number",
    "eta": "when will it arrive",
    "gm": "good morning",
    "heyo": "hey",
}
# The words the intent rules look for: a word that is one or two letters off one of these (and is not an
# everyday word of its own) is read as it; two of them run together are read apart.
_VOCABULARY = frozenset(
    re.findall(
        r"\S+",
        """
        order orders ordered return returns returning returned refund refunds refunded exchange
        shipping ship shipped shipment delivery deliver delivered package parcel tracking track
        arrive arrived arriving status password passwords login account reset forgot forgotten
        human person agent representative someone somebody customer service support cancel change
        address recommend recommendation books book where when hello thanks thank goodbye policy
        policies damaged broken wrong received receive number email want need please money back help
        talk speak store purchase item items international express free cost costs long days still yet
        send sent hasn't haven't didn't never come came my the a to is it me of and for in on your you
        can how do i what get log sign coming staff invoice receipt payment review newsletter unsubscribe
        subscribe register registration feedback
        """,
    )
)
_EVERYDAY = frozenset(
    re.findall(
        r"\S+",
        """
        were there here their they then than that this these those with went wont worder older border
        bored story short sort sure some same home hope hole whole whose shop stop step tips trip drop
        cold could would should word work world bookstore reader retail refer report record reorder
        sender render wonder stuff rest seat deal care card hold mail talking chance think thing things
        receipt receipts shopping personal personally customs reason reasons
        """,
    )
)


# No customer runs more than a few words together, and no misspelling is this long: a longer "word" is
# read as it is, so the work per word stays bounded (`"whereismyorder" * 280` once recursed past Python's
# limit and broke every later turn of its conversation).
_LONGEST_WORD_READ = 40


@functools.lru_cache(maxsize=8192)
def _respelled(word: str) -> str:
    if word in _TEXT_SPEAK:
        return _TEXT_SPEAK[word]
    if (
        not word.isalpha()
        or word in _VOCABULARY
        or word in _EVERYDAY
        or not 4 <= len(word) <= _LONGEST_WORD_READ
    ):
        return word
    if halves := _split_run_together(word):
        return halves
    # Only the slips that make a misspelling rather than another word: letters left out ("pasword",
    # "oder", "shiping") or two swapped ("retrun", "recieve"), the first letter kept. A changed or an
    # added letter usually makes a word of its own ("think", "chance", "shopping", "personal").
    allowed = 1 if len(word) <= 6 else 2
    slips = {
        known: len(known) - len(word) or 1  # letters left out, or one swap
        for known in _VOCABULARY
        if known[0] == word[0] and (_letters_left_out(word, known, allowed) or _two_swapped(word, known))
    }
    fewest = min(slips.values(), default=0)
    closest = [known for known, count in slips.items() if count == fewest]
    return closest[0] if len(closest) == 1 else word  # "pasword": password, not passwords


def _letters_left_out(word: str, known: str, allowed: int) -> bool:
    """Whether `word` is `known` with one to `allowed` of its letters left out."""
    if not 0 < len(known) - len(word) <= allowed:
        return False
    letters = iter(known)
    return all(char in letters for char in word)


def _two_swapped(word: str, known: str) -> bool:
    """Whether `word` is `known` with two neighbouring letters swapped."""
    if len(word) != len(known):
        return False
    differ = [i for i, (a, b) in enumerate(zip(word, known, strict=True)) if a != b]
    return (
        len(differ) == 2
        and differ[1] == differ[0] + 1
        and word[differ[0]] == known[differ[1]]
        and word[differ[1]] == known[differ[0]]
    )


@functools.lru_cache(maxsize=8192)  # a tail is tried from many heads
def _split_run_together(word: str, *, inner: bool = False) -> str | None:
    """Vocabulary words run together ("myorder", "whereismyorder", "talktoahuman"), read apart; "a"
    starts only an inner part, or "along" would read "a long"."""
    for cut in range(1, len(word) - 1):
        head, tail = word[:cut], _TEXT_SPEAK.get(word[cut:], word[cut:])
        if head == "a" and not inner:
            continue
        if head not in _VOCABULARY or len(head) + len(tail) < 5:
            continue
        if tail in _VOCABULARY:
            return f"{head} {tail}"
        if len(tail) >= 4 and (rest := _split_run_together(tail, inner=True)):
            return f"{head} {rest}"
    return None


def order_id_in(text: str) -> str | None:
    return ORDER_NUMBERS.last_mention(text)


def rma_in(text: str) -> str | None:
    """A return's RMA number as the customer wrote it, in the store's shape (RMA- and 8 characters)."""
    found = [
        mention.upper().replace("RMA", "", 1).lstrip("-") for mention in RMA_NUMBER_MENTION_RE.findall(text)
    ]
    found = [f"RMA-{code}" for code in found if len(code) == 8]
    return found[-1] if found else None


def email_in(text: str) -> str | None:
    found = EMAIL_MENTION_RE.findall(text)
    return found[-1] if found else None


def latest_found(finder, texts: list[str]) -> str | None:
    for text in reversed(texts):
        if value := finder(text):
            return value
    return None


# An address as people type it: "Ana Diaz, 12 Elm St, Apt 3, Springfield, IL 62701", on one line or
# several; the ZIP code ends it. What the store needs of each field is the tool's to say.
_ZIP_RE = re.compile(r"(?:^|[\s,])(\d{5}(?:-\d{4})?)(?![\w-])")
# Words that lead into an address ("change the address of BK-10103 to …", "the new one is …").
_ADDRESS_LEAD_RE = re.compile(r"\b(?:to|is|at|address)\b|:", re.IGNORECASE)


def _state_at_end(text: str) -> tuple[str, str] | None:
    """(what comes before, the state's code) when the text ends with a state's code or name."""
    words = text.strip(" ,.").split()
    for size in (3, 2, 1):
        if len(words) < size:
            continue
        said = " ".join(words[-size:]).strip(" ,.")
        code = state_code(said)
        if code:
            return " ".join(words[:-size]).strip(" ,"), code
    return None


def _address_parts(text: str) -> list[str]:
    """An address's parts as typed (by commas, lines or semicolons), without the words leading into it."""
    lines = [part.strip() for part in re.split(r"[\n;]+", text) if part.strip()]
    parts = [part.strip(" .") for line in lines for part in line.split(",") if part.strip(" .")]
    if parts and (leads := list(_ADDRESS_LEAD_RE.finditer(parts[0]))):
        parts[0] = parts[0][leads[-1].end() :].strip(" .!?")
        if not parts[0]:
            parts.pop(0)
    return parts


def _address_fields(parts: list[str], *, city: str, state: str, zip_code: str) -> dict:
    """The fields from the parts before the city: a name first when it has no digit (a street has its
    number, before or after: "12 Elm St", "Rua Augusta 500"), the street, then the unit."""
    name = parts.pop(0) if len(parts) > 1 and not re.search(r"\d", parts[0]) else ""
    # No name given: the recipient on the order stays (the tool keeps what is left out).
    address = {"line1": parts[0], "city": city, "state": state, "zip": zip_code}
    if name:
        address["to"] = name
    if len(parts) > 1:
        address["line2"] = ", ".join(parts[1:])
    return address


def address_in(text: str) -> dict | None:
    """The address fields in a message that ends with a ZIP code, or None."""
    text = EMAIL_MENTION_RE.sub(" ", ORDER_NUMBERS.replace(" ", text)).strip()
    zip_codes = list(_ZIP_RE.finditer(text))
    if not zip_codes:
        return None
    zip_code = zip_codes[-1]  # what follows it ("my email is …") is no part of the address
    text = text[: zip_code.start()]
    parts = _address_parts(text)
    if not parts:
        return None
    found = _state_at_end(parts[-1])
    if found is None and len(parts) >= 3 and parts[-1].replace(" ", "").isalpha():
        found = ("", parts[-1])  # a state we do not ship to, or misspelt: the tool says which field
    if found is None:
        return None
    before, state = found
    if before:
        parts[-1] = before
    else:
        parts.pop()
    if len(parts) < 2:
        return None
    city = parts.pop()
    return _address_fields(parts, city=city, state=state, zip_code=zip_code.group(1))


# A postal code as other countries write it ("01305-000", "SW1A 1AA", "110001", "75001"): letters and
# digits, perhaps in two groups, at least three characters and two digits.
_POSTAL_CODE_RE = re.compile(r"(?<![\w-])([A-Z0-9]{2,8}(?:[ -][A-Z0-9]{2,4})?)(?![\w-])", re.IGNORECASE)


# A postal code ending a part: in two groups ("NW1 6XE", "01305-000"), else in one ("110001").
_POSTAL_CODE_ENDS = (r"([A-Z0-9]{2,8}[ -][A-Z0-9]{2,4})", r"([A-Z0-9]{3,10})")


_MONTHS = frozenset(calendar.month_name[1:]) | frozenset(calendar.month_abbr[1:])


def _postal_code(text: str) -> str | None:
    """The text when it can be a postal code: three characters or more, two digits or more, and neither
    an amount ("10 USD") nor a month ("March 2024")."""
    if len(text) < 3 or sum(char.isdigit() for char in text) < 2 or AMOUNT_MENTION_RE.fullmatch(text):
        return None
    return None if text.split()[0].capitalize() in _MONTHS else text


def address_abroad_in(text: str) -> dict | None:
    """The address fields in a message written as addresses are outside the United States, or None:
    "Rua Augusta 500, São Paulo, SP 01305-000" (the region and postal code last), "12 Rue de Rivoli,
    75001 Paris" (the postal code before the city), "221B Baker Street, London NW1 6XE", "12 Marcus Clarke
    Street, Canberra, ACT, 2601" (each in a part of its own), the country last when written ("…, Brazil":
    kept as written; whether the order may go there is the tool's to say). Read only where an address
    was asked for: what each field must be is its country's, and the tool's to say."""
    text = EMAIL_MENTION_RE.sub(" ", ORDER_NUMBERS.replace(" ", text)).strip(" .!?")
    parts = _address_parts(text)
    country = ""
    if parts and len(parts[-1]) > 1 and country_code(parts[-1]):
        country = parts.pop()
    if len(parts) < 2:
        return None
    region = ""
    if len(parts) >= 3 and region_named(parts[-1]) and re.search(r"\d", parts[-2]):
        region = parts.pop()  # "…, 06600 Ciudad de México, CDMX": the region after the postal code
    last = parts.pop()
    whole = _POSTAL_CODE_RE.fullmatch(last)
    if len(parts) >= 2 and _postal_code(last) and whole and not _place_before_code(whole):
        postal, last = last, parts.pop()  # "Canberra, ACT, 2601": the code in a part of its own
        if _british_county_after_town(last, parts, postal):
            last = parts.pop()  # "Bristol, Avon, BS1 4DJ": the town before the county
        elif len(parts) >= 2 and region_named(last):
            region, last = last, parts.pop()
        city = last
    elif (
        (first := _POSTAL_CODE_RE.match(last))
        and _postal_code(first.group(1))
        and last[first.end() :].strip()
    ):
        postal, city = first.group(1), last[first.end() :].strip()  # "75001 Paris"
    else:
        ends = [re.search(rf"(?<![\w-]){pattern}$", last, re.IGNORECASE) for pattern in _POSTAL_CODE_ENDS]
        # The longest that ends it, or nothing: "March 2024" is a month, not "March" and a code "2024";
        # but "Canberra ACT 2601" and "Auckland 1010" end with a code after a word of the place.
        found = ends[1] if _place_before_code(ends[0]) else (ends[0] or ends[1])
        if found is None or not _postal_code(found.group(1)):
            return None
        postal, before = found.group(1), last[: found.start()].strip(" ,")
        if not region and _british_county_after_town(before, parts, postal):
            city = parts.pop()  # "Bristol, Avon BS1 4DJ"
        elif len(parts) >= 2 and before and not region and region_named(before):
            # "São Paulo, SP 01305-000": the city came before
            city, region = parts.pop(), before
        elif before and not region:  # "London NW1 6XE", "Canberra ACT 2601"
            city, region = _region_at_end(before)
        elif before:
            city = before
        else:
            return None
    if not parts or not city:
        return None
    fields = _address_fields(parts, city=city, state=region, zip_code=postal)
    return {**fields, "country": country} if country else fields


# A British postcode ("BS1 4DJ", "SW1A 1AA", "M1 1AE"), by its shape.
_BRITISH_POSTCODE_RE = re.compile(r"[A-Z]{1,2}\d[A-Z\d]? ?\d[A-Z]{2}", re.IGNORECASE)
# A county as the British still write one between the town and the postcode: "County Durham", "Co. Antrim",
# "Gloucestershire", "North Yorkshire", "Inverness-shire", or one of the names below (the counties, former
# counties and Scottish regions that are neither "-shire" nor a post town of their own: "Durham", "Bristol",
# "Armagh" and "Antrim" are towns too, so only "County Durham" is the county).
_COUNTY_WORDS_RE = re.compile(r"(?:county|co\.?)\s+[^\W\d_][\w' -]*|[\w' -]*\w-?shire", re.IGNORECASE)
_BRITISH_COUNTIES = frozenset(
    {"avon", "cleveland", "cornwall", "cumberland", "cumbria", "devon", "dorset", "essex", "east sussex",
     "greater london", "greater manchester", "hereford and worcester", "humberside", "north humberside",
     "south humberside", "isle of wight", "kent", "merseyside", "middlesex", "norfolk", "northumberland",
     "rutland", "somerset", "north somerset", "suffolk", "surrey", "sussex", "west sussex", "tyne and wear",
     "west midlands", "westmorland",
     "anglesey", "isle of anglesey", "blaenau gwent", "ceredigion", "clwyd", "dyfed", "glamorgan",
     "mid glamorgan", "south glamorgan", "west glamorgan", "vale of glamorgan", "gwent", "gwynedd", "powys",
     "torfaen", "rhondda cynon taf", "neath port talbot",
     "angus", "argyll", "argyll and bute", "borders", "scottish borders", "caithness",
     "dumfries and galloway", "fife", "grampian", "highland", "lothian", "east lothian", "midlothian",
     "west lothian", "moray", "orkney", "perth and kinross", "ross and cromarty", "shetland", "strathclyde",
     "sutherland", "tayside", "western isles",
     "down", "fermanagh", "tyrone"}
)  # fmt: skip


def _british_county_after_town(text: str, parts: list[str], postal: str) -> bool:
    """Whether the text, just before a British postcode, is a county after the town it names ("Bristol,
    Avon, BS1 4DJ"): no field of the address (Royal Mail's addresses have had no county since 1996, nor
    has Google's data a region of Britain), the town before it being the city. Only where that town can
    be one (a part after the street, without digits): "12 Corn Street, Kent, …" keeps Kent, "…, Clifton,
    Bristol, BS8 1AA" has Bristol, a town after its district, as the city."""
    if len(parts) < 2 or re.search(r"\d", parts[-1]) or not _BRITISH_POSTCODE_RE.fullmatch(postal):
        return False
    text = " ".join(text.split())
    return text.casefold() in _BRITISH_COUNTIES or _COUNTY_WORDS_RE.fullmatch(text) is not None


def _place_before_code(found: re.Match | None) -> bool:
    """Whether a postal code in two halves found is a word of the place and a code: "ACT 2601" (a
    region), "Auckland 1010" (a city: a first half without digits is at most three letters, as Malta's
    "VLT 1117"), not "NW1 6XE" or "1012 LG"; nor a month ("March 2024"), which is no code at all."""
    if found is None:
        return False
    head = found.group(1).split()[0] if " " in found.group(1) else ""
    if not head or re.search(r"\d", head) or head.capitalize() in _MONTHS:
        return False
    return len(head) > 3 or region_named(head)


def _region_at_end(text: str) -> tuple[str, str]:
    """(city, region) of "Canberra ACT" or "Sydney New South Wales"; (the text, "") when no region of
    any country ends it ("London", "Rio de Janeiro")."""
    words = text.split()
    for size in (3, 2, 1):
        if len(words) > size and region_named(" ".join(words[-size:])):
            return " ".join(words[:-size]), " ".join(words[-size:])
    return text, ""


def _title_named(title: str, text: str) -> bool:
    key = re.sub(r"^(?:the|a|an) ", "", title.casefold())
    return bool(key) and re.search(r"\b" + re.escape(key) + r"\b", text.casefold()) is not None


def named_titles(texts: list[str], titles: list[str]) -> list[str] | None:
    """The titles named in the latest message that names any of them, in the order's order."""
    for text in reversed(texts):
        named = [title for title in titles if _title_named(title, text)]
        if named:
            return named
    return None
