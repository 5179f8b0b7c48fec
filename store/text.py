"""Text a person wrote (a customer or staff), cleaned the same way wherever it is stored or shown.

Control characters and Unicode format characters go: among them the bidi
overrides and isolates (U+202A to U+202E, U+2066 to U+2069) that make
`bob@exa\\u202emple.com` display as "bob@examoc.elpm" on a staff page, and the
zero-width characters that hide text. A single-line field keeps no line
break either: a reason with newlines once forged lines of the support email.
"""

import re
import unicodedata

# Format characters that join letters in scripts and emoji: harmless, and needed to write them.
_JOINERS = frozenset("\u200c\u200d")
_LINE_BREAKS_RE = re.compile(r"\r\n?|[\u0085\u2028\u2029\x0b\x0c]")
_SPACES_RE = re.compile(r"\s+")


def _is_unseen(char: str) -> bool:
    return unicodedata.category(char) in ("Cc", "Cf", "Cs") and char not in _JOINERS


def text_has_unseen(value: str) -> bool:
    """Whether the text holds a control or format character (a line break or tab counts)."""
    return any(_is_unseen(char) for char in value)


def text_multi_line(value: str) -> str:
    """Lines of text: NFC, line breaks as \\n, tabs kept, no other control or format character,
    trimmed."""
    value = _LINE_BREAKS_RE.sub("\n", unicodedata.normalize("NFC", value))
    return "".join(char for char in value if char in "\n\t" or not _is_unseen(char)).strip()


def text_single_line(value: str) -> str:
    """One line of text: as text_multi_line, with every run of white space (line breaks included)
    made one space."""
    return _SPACES_RE.sub(" ", text_multi_line(value)).strip()
