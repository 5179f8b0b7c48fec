"""What kind of item a shop's line is when the shop does not say (a real shop's products have no
Bookly category): read from the words of its variant, then its title, by the store's own list
(BOOKLY_ITEM_KINDS, e.g. "ebook=ebook,e-book;audiobook=audiobook"), so that the return policy's
non-returnable kinds hold for what real shops sell ("Dune", variant "eBook"). Read once, when the settings
load: a kind that is none of the store's categories stops the start."""

import re

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from store.categories import ItemCategory


def _kinds(written: str) -> list[tuple[str, re.Pattern[str]]]:
    kinds = []
    for part in filter(None, (part.strip() for part in written.split(";"))):
        kind, _, said = part.partition("=")
        kind, words = kind.strip().lower(), [word.strip() for word in said.split(",") if word.strip()]
        if kind not in ItemCategory.values or not words:
            raise ImproperlyConfigured(
                f"BOOKLY_ITEM_KINDS: {part!r} must be a kind ({', '.join(ItemCategory.values)}), '=', and "
                "the words that say it, separated by commas"
            )
        alternatives = "|".join(re.escape(word).replace(r"\ ", r"\s+") for word in words)
        kinds.append((kind, re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)", re.IGNORECASE)))
    return kinds


KINDS = _kinds(settings.BOOKLY_ITEM_KINDS)


def item_kind_of(*, title: str, variant: str) -> str:
    """The kind the line's words say (its variant first: "Paperback" or "eBook" of one title), or blank."""
    for text in (variant, title):
        for kind, words in KINDS:
            if text and words.search(text):
                return kind
    return ""
