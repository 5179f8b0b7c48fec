"""Words as the built-in model's rules compare them: rough stems, the small words that tell nothing, and
which of the store's FAQ topics a question is about by the words of its title and example questions."""

import functools
import math
import re

from support.llm.protocol import FaqTopic

_WORD_RE = re.compile(r"[a-z]+")
STOP_WORDS = frozenset(
    re.findall(
        r"\w+",
        "a an the i im me my we our you your it its is are was were be been am do does did can could would "
        "should will shall may might must have has had of to in on at for with about from by as or and but "
        "if so that this these those there here what which who how when where why please any some get got "
        "just also not no yes ok hi hello bookly store shop",
    )
)
# A topic answers a question only if words it owns (its key, title and example questions) carry at least
# this share of the question's words, weighted so that words several topics share count for less.
_TOPIC_COVERAGE = 0.6


def stem(word: str) -> str:
    """A rough stem, enough to match "wrapping", "wrapped" and "wraps" with "wrap"."""
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiousl":
                word = word[:-1]  # wrapp -> wrap, shipp -> ship
            break
    return word


def stems(text: str, known: frozenset[str] = frozenset()) -> set[str]:
    """The stems of a text's words; a word run together from two `known` ones ("giftwrapping") counts as
    both."""
    found: set[str] = set()
    for word in _WORD_RE.findall(text.lower()):
        if word in STOP_WORDS or len(word) <= 2:
            continue
        base = stem(word)
        if known and base not in known:
            halves = next(
                (
                    (stem(word[:cut]), stem(word[cut:]))
                    for cut in range(3, len(word) - 2)
                    if stem(word[:cut]) in known and stem(word[cut:]) in known
                ),
                None,
            )
            if halves:
                found.update(halves)
                continue
        found.add(base)
    return found


@functools.lru_cache(maxsize=16)  # the same topics, every message of every call, until staff change one
def _topic_words(topics: tuple[FaqTopic, ...]) -> dict[str, set[str]]:
    """Each topic's words: its key's, its title's and its questions' stems."""
    return {
        topic.key: stems(" ".join([topic.key.replace("_", " "), topic.title, *topic.questions]))
        for topic in topics
    }


def topic_matching(text: str, topics: list[FaqTopic]) -> str | None:
    """The key of the FAQ topic a question is about, from the words of its title and example questions."""
    if not topics:
        return None
    owned = _topic_words(tuple(topics))
    asked = stems(text, frozenset().union(*owned.values()))
    if not asked:
        return None
    sharing = {word: sum(word in words for words in owned.values()) for word in asked}
    weight = {word: 1 / max(1, count) for word, count in sharing.items()}
    # Summed exactly (math.fsum): a plain sum over a set depends on its order, which differs from process
    # to process, and a share of exactly the coverage (3 of 5 words) came out just under it in some.
    total = math.fsum(weight.values())
    best, best_share = None, 0.0
    for key, words in owned.items():
        if len(asked) == 1 and not asked & stems(key.replace("_", " ")):
            continue  # one word alone ("times") names a topic only if it is the topic's own name
        share = math.fsum(weight[word] for word in asked & words) / total
        # At least one word only this topic has: a shared word alone ("order") names no topic.
        if share > best_share and any(sharing[word] == 1 for word in asked & words):
            best, best_share = key, share
    return best if best_share >= _TOPIC_COVERAGE else None
