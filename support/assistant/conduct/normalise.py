"""The one form every check reads a reply (and what grounds it) in: NFKC, nothing invisible, one kind
of dash and of dot, straight quotes, defanged links and addresses put back together; and tool
results with their text values written out.
"""

import json
import re
import unicodedata

# Characters that show nothing: a zero-width space or joiner, a soft hyphen, bidi marks and overrides.
_INVISIBLE_RE = re.compile("[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")
_DASHES_RE = re.compile("[\u2010-\u2015\u2212\ufe58\ufe63]")
# Full stops of other scripts that browsers and mail clients read as a domain's dot ("bookly\u3002com");
# NFKC already makes U+FF61 and U+FE52 into these or into ".".
_DOTS_RE = re.compile("[\u3002\uff61\ufe52]")
# Curly quotes and apostrophes: "can\u2019t", "I\u2019m" and "[{\u2018type\u2019: \u2026" read as typed.
_QUOTES = str.maketrans(
    {"\u2018": "'", "\u2019": "'", "\u201b": "'", "\u201c": '"', "\u201d": '"', "\u201f": '"'}
)
# A defanged dot: "evil[.]com", "evil(.)com", "evil{dot}com", "evil dot com", "evil . com".
_DEFANGED_DOT_RE = re.compile(
    r"(?<=[A-Za-z0-9])\s*(?:[\[({]\s*(?:\.|dot)\s*[\])}]|\s(?:dot|DOT|Dot)\s|\s+\.\s*(?=[a-z]{2,}))\s*(?=[A-Za-z0-9])"
)
# "[at]", "(at)", " AT " (a bare lowercase " at " is a word: "available at bookly.example").
_DEFANGED_AT_RE = re.compile(r"(?<=[\w.+-])\s*(?:[\[({]\s*(?:@|at|AT)\s*[\])}]|\sAT\s)\s*(?=[\w-]+\.[a-z])")
_HXXP_RE = re.compile(r"\bh(?:xx|\*\*|XX)p(s?)(?:\[:\]|:)?(?=//)|\bhxxp(s?)\b", re.IGNORECASE)


def normalised(text: str) -> str:
    """The text as a reader sees it: NFKC (fullwidth letters, dots and at-signs plain), nothing
    invisible, one kind of dash, one kind of dot, straight quotes, and defanged links and addresses
    put back together."""
    text = _INVISIBLE_RE.sub("", unicodedata.normalize("NFKC", text))
    text = _DOTS_RE.sub(".", _DASHES_RE.sub("-", text)).translate(_QUOTES)
    text = _HXXP_RE.sub(lambda m: "http" + (m.group(1) or m.group(2) or ""), text)
    text = _DEFANGED_DOT_RE.sub(".", text)
    return _DEFANGED_AT_RE.sub("@", text)


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


def _lower(text: str) -> str:
    return text.casefold()


def _alnum(text: str) -> str:
    return re.sub(r"[\W_]", "", _lower(text))


def _with_values(grounding: str) -> str:
    """Tool results (JSON documents, one a line) with their text values written out as well, so that
    a reply quoting a value with a quote mark or an accent in it matches the value, not its escape."""
    values = []

    def collect(node) -> None:
        if isinstance(node, str):
            values.append(node)
        elif isinstance(node, dict):
            for value in node.values():
                collect(value)
        elif isinstance(node, list):
            for value in node:
                collect(value)

    for line in grounding.splitlines():
        try:
            collect(json.loads(line))
        except ValueError:
            continue  # not a JSON document: its text is in the grounding as it is
    return "\n".join([grounding, *values])
