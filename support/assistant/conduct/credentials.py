"""Payment credentials and passwords: asked for only in a tool's own words. A reassurance that one is
never asked for, or a reset the tools speak of, asks for none; anything else that names one does.
"""

import re

from support.assistant.claims import sentences_of
from support.assistant.conduct.normalise import _lower

_CREDENTIALS_RE = re.compile(
    r"\b(?:card(?:'s)? (?:[\w-]+ )?numbers?|card details|card info(?:rmation)?|long number|cvv2?|cvc|cv2|"
    r"security code|(?:three|3|four|4|sixteen|16|15|fifteen)[- ]digits?\b[^.?!]{0,40}\b(?:card|front|back)|"
    r"digits? (?:on|of|printed on) (?:the )?(?:front|back|your card)|"
    r"(?:numbers?|code) on (?:the )?(?:front|back)\b|"
    r"expir(?:y|ation)(?: date| month| year)?|exp\.? date|when (?:it|the card|your card) expires|"
    r"pin(?: code| number)?|passwords?|passcode|bank details|"
    r"bank account|account number|routing number|iban|swift|sort code|social security|ssn|login details|"
    r"credentials|one-time (?:code|password)|otp|verification code|2fa code|"
    # a card by its brand, and what is printed on one
    r"visa|master ?card|amex|american express|discover card|diners club|maestro|jcb|union ?pay|embossed|"
    r"(?:digits?|numbers?|code) (?:beside|next to|by|near|above|below|under|on) (?:the )?signature|"
    r"signature (?:strip|panel|box))\b",
    re.IGNORECASE,
)
# A reassurance that asks for nothing: "we will never ask for your card number", "never share your
# password". Only these words directly before the verb: "don't worry, just send" and "I don't need much -
# just your card number" ask all the same.
_REASSURANCE_RE = re.compile(
    r"\b(?:never|will not|won't|would never|would not|wouldn't)\s+(?:ask(?:s|ing)?|request|share|need)\b",
    re.IGNORECASE,
)
# What ends a reassurance's reach: a clause's end, or a turn ("we never ask for it, but send your CVV").
_REASSURANCE_END_RE = re.compile(r"[.;:!?]|\b(?:but|however|so|just|please|instead|unless|except)\b", re.I)
# A password named in a reset's own words, as the password-reset FAQ gives them ("choose Forgot password").
_RESET_FRAME_RE = re.compile(
    r"\b(?:reset|resetting|forgot|forgotten|change|changing|new)\W+(?:\w+\W+)?$", re.I
)
RESET_FRAME_CHARS = 30  # how far before the credential its reset frame is looked for


def _asks_for_credentials(reply: str, grounded: str) -> bool:
    """A payment credential or a password mentioned other than in a tool's own words, a reset the tools
    of this turn speak of, or a reassurance that it is never asked for. However a request is worded
    ("requires your card number", "drop your CVV below", "card number, please"), it names what it
    wants. Even a FAQ topic's name is one (an exception for "…for example shipping, returns or
    passwords?" let "Our policy on passwords: they go right here in this chat" through): the
    built-in model's own question names no credential, and a real model that does is replaced."""
    for sentence in sentences_of(reply):
        if _quoted(sentence, grounded):
            continue
        reassured = []
        for reassurance in _REASSURANCE_RE.finditer(sentence):
            rest = sentence[reassurance.end() :]
            stop = _REASSURANCE_END_RE.search(rest)
            reassured.append((reassurance.end(), reassurance.end() + (stop.start() if stop else len(rest))))
        for mention in _CREDENTIALS_RE.finditer(sentence):
            if any(start <= mention.start() < end for start, end in reassured):
                continue
            before = sentence[max(0, mention.start() - RESET_FRAME_CHARS) : mention.start()]
            if _lower(mention.group(0)) in grounded and _RESET_FRAME_RE.search(before):
                continue
            return True
    return False


def _quoted(sentence: str, grounded: str) -> bool:
    """Whether the sentence is a tool's own words: as a tool wrote it, or after a FAQ answer's title
    ("Resetting your password: On the account login page, …")."""
    said = " ".join(_lower(sentence).split())
    answer = said.partition(": ")[2]
    return said in grounded or (bool(answer) and answer in grounded)
