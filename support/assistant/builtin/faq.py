"""Which of the store's FAQ topics a customer's question is about, read from everything staff wrote for
the topic (its title, its example questions, its answer) and from how customers in general word their
questions.

Staff write five or six example questions; customers word the same question a hundred ways. So each
topic is learned, not only looked up: the built-in model's phrasings (thousands of customer messages
of every kind, support/assistant/builtin/phrasings.json) are the background. A phrasing close in
meaning to what staff wrote for one topic (by a sentence model, support/assistant/understanding/sentences.py,
so that "can I pay with my visa?" is near "which payment methods do you accept?" with no word in
common) is taken as another way of asking it, and where meaning alone cannot tell two topics apart the
words staff wrote do ("I want to order a book" is as near "can I pre-order a book?"); a phrasing close
to none is a question no topic answers, and every request of the model's own (an order's status, a
return, a person) is one too. A linear
classifier over words, word pairs, letter sequences (a misspelled word shares most of its letters with
the word) and the sentence's meaning then tells the topics and "none of them" apart. Its score for a
topic, against "none" and against the next topic, is how sure the reading is.

Trained once per set of published topics, as staff wrote them (a few seconds of CPU, in each process,
at the first message after a change): a topic staff add or change is read at the next message.
"""

import difflib
import functools
import json
import logging
import re
import threading
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from support.assistant.understanding.customer_words import plain
from support.assistant.understanding.sentences import (
    ModelFileError,
    phrasings_encoded,
    sentence_encode,
    sentences_warm,
)
from support.llm.protocol import FaqTopic

if TYPE_CHECKING:  # imported when first used, not with this module (see _hashes)
    import numpy as np
    from numpy.typing import NDArray
    from scipy.sparse import csr_matrix
    from sklearn.svm import LinearSVC

logger = logging.getLogger(__name__)

PHRASINGS = Path(__file__).with_name("phrasings.json")
# The background's route of questions the built-in model has no task for: where a store's topics are
# asked about (payments, accounts, gift cards) among questions no store answers (the weather).
_NOT_A_TASK = "out_of_scope"
# The built-in topics' own routes: their phrasings are ways of asking those topics.
_TOPIC_ROUTES = {
    "policy_shipping": "shipping",
    "policy_returns": "returns_overview",
    "policy_password": "password_reset",
}
_NONE = ""

# A background phrasing this close in meaning (the dot product of sentence vectors) to what staff wrote
# for a topic, and this far ahead of the next topic, is another way of asking it; one closer than
# _UNSURE to some topic is left out of the training altogether (neither the topic's nor "none": it may
# be either). Set on the support-desk routing set (see SURE).
_ASKS_IT = 0.5
_APART = 0.05
_UNSURE = 0.35
# Two topics this close in meaning are told apart by the phrasing's words (see _labels).
_TIE = 0.1
# A word in more than this share of the background's phrasings ("book", "order", "account") tells no topic.
_COMMON = 0.03
# What staff wrote counts this many times against the background's phrasings: it is the topic's own word.
_STAFF_WEIGHT = 3
# A topic is the reading when its score beats "none of them" (SURE, on the classifier's scale shifted so
# that a tie with "none" is 0.5) and leads the next topic by _LEAD; from LIKELY, the topic may be the
# one meant, and the customer is asked which. Set on the support-desk routing set's messages about
# subjects a store's FAQ covers (support/evals/routing/desk.json), never on the held-out FAQ set.
SURE = 0.5
LIKELY = 0.3
_LEAD = 0.1

# A question whether the store sells or has a thing ("do you sell bookmarks?", "is Dune in stock?") is
# answered by a topic only when the thing is the topic's own ("do you sell gift cards?"): its frame alone
# is as near staff's "Do you sell gift cards?" in meaning and in words, whatever the thing. The thing is
# the topic's when it uses a word of the topic's key or title or one both its questions and its answer use
# ("guest" in "Can I order as a guest?" and "continue as a guest"), or means nearly what key or title say
# (_ITS_THING: "gift vouchers" 0.72, "a mailing list" 0.61 to "newsletter"; "kindles" 0.35, "bookmarks"
# 0.26 to "Gift cards").
_HAS_IT_RE = re.compile(
    r"\b(?:do|does|can|will)\s+(?:you|u|ya|yall|y'all|bookly)(?:\s+guys)?\s+"
    r"(?:sell|carry|stock|have|offer|do)\s+(?!to\b|it\b|that\b|this\b)(?P<thing>[^?.!,;]{1,80})"
    r"|\b(?:is|are)\s+(?P<stocked>[^?.!,;]{1,80}?)\s+(?:in|out\s+of|back\s+in)\s+stock\b"
)
_ITS_THING = 0.42
_ASKED_RE = re.compile(r"[.?!;\n]+")

_WORD_RE = re.compile(r"[a-z]+")
_SENTENCE_RE = re.compile(r"(?<=[.!?])\s+|\n+")
_STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "i",
        "im",
        "me",
        "my",
        "we",
        "our",
        "us",
        "you",
        "your",
        "it",
        "its",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "am",
        "do",
        "does",
        "did",
        "can",
        "could",
        "would",
        "should",
        "will",
        "shall",
        "may",
        "might",
        "must",
        "have",
        "has",
        "had",
        "of",
        "to",
        "in",
        "on",
        "at",
        "for",
        "with",
        "about",
        "from",
        "by",
        "as",
        "or",
        "and",
        "but",
        "if",
        "so",
        "that",
        "this",
        "these",
        "those",
        "there",
        "here",
        "what",
        "which",
        "who",
        "how",
        "when",
        "where",
        "why",
        "please",
        "any",
        "some",
        "get",
        "got",
        "just",
        "also",
        "not",
        "no",
        "yes",
        "ok",
        "hi",
        "hello",
        "hey",
        "thanks",
        "thank",
        "bookly",
        "store",
        "shop",
        "want",
        "need",
        "like",
        "know",
        "tell",
        "u",
        "ur",
        "pls",
        "plz",
        "dont",
        "don",
        "t",
        "s",
        "ve",
        "ll",
        "d",
        "m",
        "re",
    ]
)
_SUFFIXES = ("ations", "ation", "ments", "ment", "ings", "ing", "ers", "er", "ed", "es", "s", "ly")


def _stem(word: str) -> str:
    """A rough stem: "payments", "paying" and "pay" alike, "registration" and "register" alike."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiousl":
                word = word[:-1]  # shipp -> ship
            break
    return word


# A prefix written apart or hyphenated is one word with it: "pre-order", "pre order" and "preorder" alike,
# and not "order" (another topic's word). Not after an apostrophe ("they're"); other hyphenated words stay
# two ("gift-wrap" is gift wrapping's "gift" and "wrap").
_JOINED_RE = re.compile(r"(?<![\w'])(pre|e|non)[- ](?=[a-z])")


def _words(text: str) -> list[str]:
    """A text's telling words, stemmed, in order."""
    joined = _JOINED_RE.sub(r"\1", plain(text))
    return [_stem(word) for word in _WORD_RE.findall(joined) if word not in _STOP_WORDS and len(word) > 1]


# Per part (words, letters): as many as 2**20 read the held-out FAQ set no better, and train with four
# times the memory.
_HASHED_FEATURES = 2**18


@dataclass(frozen=True)
class _Background:
    """What is read once per process: the phrasings and their routes, each phrasing in meaning (a
    sentence vector) and in the classifier's features, and the weights of those features."""

    texts: tuple[str, ...]
    routes: "NDArray[np.str_]"  # the phrasings' routes
    meanings: "NDArray[np.float32]"  # each phrasing's sentence vector (texts x 384, unit rows)
    known: frozenset[str]  # the words customers use (as `_words` gives them)
    words: tuple[str, ...]  # each phrasing's words (as `_words` gives them, joined)
    common_words: frozenset[str]  # the words in more than _COMMON of the phrasings
    word_weights: "NDArray[np.float64]"
    letter_weights: "NDArray[np.float64]"
    # Each phrasing in the classifier's features (None only while _background makes them).
    features: "csr_matrix | None"

    def featured(self, words: list[str], meanings):
        """Texts (as `_words` gives them, joined, and their sentence vectors) in the classifier's
        features: words and word pairs, and letter sequences, each part of unit length, weighted as rare
        in the background; and the text's meaning. Hashed, so that a topic's own words ("paypal") are
        read though no phrasing has them; those weigh most."""
        from scipy.sparse import csr_matrix, hstack
        from sklearn.preprocessing import normalize

        word_hashes, letter_hashes = _hashes()
        by_words = normalize(word_hashes.transform(words).log1p().multiply(self.word_weights).tocsr())
        by_letters = normalize(letter_hashes.transform(words).log1p().multiply(self.letter_weights).tocsr())
        return hstack([by_words, by_letters, csr_matrix(meanings)]).tocsr()


@functools.cache
def _hashes():
    """The classifier's two feature hashers (made when first used: scikit-learn takes about a second
    to import, which a process that never reads the FAQ this way should not pay)."""
    from sklearn.feature_extraction.text import HashingVectorizer

    common = {"n_features": _HASHED_FEATURES, "alternate_sign": False, "norm": None}
    return (
        HashingVectorizer(token_pattern=r"\S+", ngram_range=(1, 2), **common),  # noqa: S106
        HashingVectorizer(analyzer="char_wb", ngram_range=(3, 5), **common),
    )


@functools.cache
def _background() -> _Background:
    """About 2 s of CPU, once per process, with the built-in model's classifier (the phrasings' sentence
    vectors are stored encoded)."""
    import numpy as np

    phrasings = json.loads(PHRASINGS.read_text())
    texts = tuple(text for route in phrasings for text in phrasings[route])
    words = [" ".join(_words(text)) for text in texts]

    def weights(hashes):
        seen = (hashes.transform(words) > 0).sum(axis=0).A1
        return np.log((1 + len(words)) / (1 + seen)) + 1

    background = _Background(
        texts=texts,
        routes=np.array([route for route in phrasings for _ in phrasings[route]]),
        meanings=phrasings_encoded(texts),
        known=frozenset(word for text in words for word in text.split()),
        words=tuple(words),
        common_words=frozenset(
            word
            for word, count in Counter(w for text in words for w in set(text.split())).items()
            if count > _COMMON * len(words)
        ),
        word_weights=weights(_hashes()[0]),
        letter_weights=weights(_hashes()[1]),
        features=None,
    )
    return replace(background, features=background.featured(words, background.meanings))


# A topic as staff wrote it: key, title, answer, example questions (hashable, to key the training).
_Written = tuple[str, str, str, tuple[str, ...]]


@dataclass(frozen=True)
class _Reader:
    classifier: "LinearSVC"
    vocabulary: tuple[str, ...]  # the topics' own words, to which a misspelled word is read
    # What each topic is about: the words of its key and title ("returns", "shipping"), those its
    # questions and answer both use (of those customers seldom use), and the meanings of its key and title.
    names: dict[str, tuple[frozenset[str], "NDArray[np.float32]"]]

    def words(self, text: str) -> str:
        return " ".join(_corrected(word, self.vocabulary) for word in _words(text))

    def about(self, thing: str, meaning, key: str) -> bool:
        """Whether `thing` (what a customer asks the store to have; `meaning`, its sentence vector) is what
        the topic is about."""
        words, meanings = self.names[key]
        return bool(words & set(self.words(thing).split())) or float((meanings @ meaning).max()) >= _ITS_THING


@functools.lru_cache(maxsize=4096)
def _corrected(word: str, vocabulary: tuple[str, ...]) -> str:
    """A word as one of the topics' own when it is that word misspelled ("payement", "recipt")."""
    if len(word) < 4 or word in vocabulary:
        return word
    close = difflib.get_close_matches(word, vocabulary, n=1, cutoff=0.8)
    return close[0] if close else word


def _documents(topics: tuple[_Written, ...]) -> tuple[list[str], list[str]]:
    """What staff wrote, one short text each (the key, the title, each question, each sentence of the
    answer), and the topic of each."""
    texts, keys = [], []
    for key, title, answer, questions in topics:
        for text in [key.replace("_", " "), title, *questions, *_SENTENCE_RE.split(answer)]:
            if _words(text):
                texts.append(text)
                keys.append(key)
    return texts, keys


def _labels(keys: list[str], meanings, texts: list[str]):
    """Each background phrasing's label for this set of topics: a topic, "none", or None (left out).
    `keys`, `meanings` and `texts` are what staff wrote, text by text: its topic, its sentence vector and
    its words."""
    import numpy as np

    background = _background()
    published = sorted(set(keys))
    labels = np.array([_TOPIC_ROUTES.get(route, _NONE) for route in background.routes], dtype=object)
    labels[~np.isin(labels, [*published, _NONE])] = _NONE  # a built-in topic staff took down
    # Which phrasings of no task ask a topic: the nearest in meaning of what staff wrote.
    nearness = background.meanings @ meanings.T
    by_topic = np.column_stack(
        [
            nearness[:, [index for index, own in enumerate(keys) if own == key]].max(axis=1)
            for key in published
        ]
    )
    rows = np.arange(len(by_topic))
    ranked = np.argsort(by_topic, axis=1)
    first, runner = ranked[:, -1], ranked[:, -2 if len(published) > 1 else -1]
    best = by_topic[rows, first]
    second = by_topic[rows, runner] if len(published) > 1 else np.zeros(len(rows))
    no_task = background.routes == _NOT_A_TASK
    chosen, decided = first.copy(), np.zeros(len(rows), dtype=bool)
    # Where meaning alone is unsure, the words decide. The sentence model reads "I'd like to order 5
    # copies" as near "can I pre-order a book?" as "how do I place an order?", and "how do I leave a star
    # rating?" as near no topic. Near two topics, a phrasing is the one whose own words (those the other's
    # staff did not write) it uses more, when the two are within _TIE or it uses none of the nearer one's;
    # fairly near one topic, it is that topic when it uses a word no other topic's staff wrote.
    owned: dict[str, set[str]] = {key: set() for key in published}
    for text, key in zip(texts, keys, strict=True):
        owned[key].update(_words(text))
    # A word only one topic's staff wrote tells only if customers seldom use it ("stars", not "book").
    common = background.common_words
    only = {
        key: owned[key] - common - set().union(*(owned[other] for other in owned if other != key))
        for key in owned
    }
    for row in np.flatnonzero(no_task & (best >= _UNSURE)):
        words = set(background.words[row].split())
        top, next_ = published[first[row]], published[runner[row]]
        if second[row] >= _ASKS_IT:
            mine, theirs = len(words & (owned[top] - owned[next_])), len(words & (owned[next_] - owned[top]))
            near = best[row] - second[row] < _TIE
            if theirs > mine and (near or (not mine and best[row] - second[row] < 2 * _TIE)):
                chosen[row], decided[row] = runner[row], True
            elif mine > theirs and near:
                decided[row] = True
        elif best[row] < _ASKS_IT and words & only[top]:
            decided[row] = True
    asks_it = no_task & (decided | ((best >= _ASKS_IT) & (best - second >= _APART)))
    labels[asks_it] = np.array(published, dtype=object)[chosen][asks_it]
    labels[no_task & ~asks_it & (best >= _UNSURE)] = None
    return labels


_TRAINING = threading.Lock()


def _reader(topics: tuple[_Written, ...]) -> _Reader | None:
    """The reader of these topics, trained once per process however many threads ask for it first (each
    training is seconds of CPU: a worker's threads would otherwise all train it at once)."""
    with _TRAINING:
        return _reader_trained(topics)


@functools.lru_cache(maxsize=2)  # keyed by the topics as written: a change trains a new reader
def _reader_trained(topics: tuple[_Written, ...]) -> _Reader | None:
    """A few seconds of CPU (most of it encoding what staff wrote), at the first message after staff
    change a topic."""
    import numpy as np
    from scipy.sparse import vstack
    from sklearn.svm import LinearSVC

    documents, keys = _documents(topics)
    if not documents:
        return None
    background = _background()
    meanings = np.vstack([sentence_encode(text) for text in documents])
    labels = _labels(keys, meanings, documents)
    kept = np.flatnonzero(labels != None)  # noqa: E711 (an array, compared element-wise)
    reader = _Reader(
        # Balanced: a topic's few dozen examples weigh as much as the thousands of "none".
        classifier=LinearSVC(random_state=0, C=0.5, class_weight="balanced"),
        vocabulary=tuple(sorted({word for text in documents for word in _words(text)})),
        names={
            key: (
                frozenset(
                    set(_words(f"{key.replace('_', ' ')} {title}"))
                    | (set(_words(" ".join(questions))) & set(_words(answer))) - background.common_words
                ),
                np.vstack([sentence_encode(key.replace("_", " ")), sentence_encode(title)]),
            )
            for key, title, answer, questions in topics
        },
    )
    staff = background.featured([reader.words(text) for text in documents], meanings)
    assert background.features is not None  # _background made them
    matrix = vstack([background.features[kept], *[staff] * _STAFF_WEIGHT]).tocsr()
    reader.classifier.fit(matrix, [*labels[kept], *keys * _STAFF_WEIGHT])
    # Dense, the weights are classes x half a million floats (46 MB for ten topics), of which under 5%
    # are not zero: kept sparse, a reader is under 2 MB.
    reader.classifier.sparsify()
    return reader


def _written(topics: list[FaqTopic]) -> tuple[_Written, ...]:
    return tuple(sorted((topic.key, topic.title, topic.answer, tuple(topic.questions)) for topic in topics))


@dataclass(frozen=True)
class Match:
    """The topics a question may be about, best first, with their scores (0.5: as likely as none)."""

    scores: tuple[tuple[str, float], ...]

    @property
    def sure(self) -> str | None:
        """The topic the question is about, when the reading is clear."""
        if not self.scores or self.scores[0][1] < SURE:
            return None
        if len(self.scores) > 1 and self.scores[0][1] - self.scores[1][1] < _LEAD:
            return None
        return self.scores[0][0]

    def without(self, keys) -> "Match":
        """The reading among the other topics only."""
        return Match(tuple((key, score) for key, score in self.scores if key not in keys))

    def score(self, key: str) -> float:
        return dict(self.scores).get(key, 0.0)

    @property
    def likely(self) -> tuple[str, ...]:
        """The topics it may be about (at most three, best first), when none is clear."""
        return () if self.sure else tuple(key for key, score in self.scores[:3] if score >= LIKELY)


def faq_match(text: str, topics: list[FaqTopic]) -> Match:
    """How likely a customer's question is about each published topic the prompt lists."""
    if not topics or not _words(text):
        return Match(())
    try:
        return _match(text, _written(topics))
    except ModelFileError as error:
        # The sentence model is not installed or not the published one: the reading stays the built-in
        # model's own (a topic named plainly, else the refusal or "no policy" with a person offered).
        _meaning_unavailable(str(error))
        return Match(())


@functools.cache  # said once per process
def _meaning_unavailable(reason: str) -> None:
    logger.error("FAQ reader: %s; the store's FAQ topics are read only when named plainly", reason)


@functools.lru_cache(maxsize=4096)  # each call reads the whole conversation again
def _match(text: str, topics: tuple[_Written, ...]) -> Match:
    reader = _reader(topics)
    if reader is None:
        return Match(())
    words = reader.words(text)
    known = _background().known
    if not any(word in reader.vocabulary or word in known for word in words.split()):
        return Match(())  # no word any customer or topic uses ("pasxvs"): letters alone tell nothing
    features = _background().featured([words], sentence_encode(text)[None, :])
    scores = reader.classifier.decision_function(features)[0]
    classes = list(reader.classifier.classes_)
    if len(classes) == 2:  # one topic: the classifier gives one score, for the second class
        scores = [-scores, scores]
    none = scores[classes.index(_NONE)]
    ranked = sorted(
        (
            (str(key), float(score - none) + 0.5)
            for key, score in zip(classes, scores, strict=True)
            if key != _NONE
        ),
        key=lambda item: -item[1],
    )
    asked = plain(text)
    # One question only: "What's your return policy? Do you have a phone number too?" asks the policy too.
    if len([part for part in _ASKED_RE.split(asked) if _words(part)]) == 1 and (
        had := _HAS_IT_RE.search(asked)
    ):
        # Not even likely: a topic about another thing is not offered ("Is your question about gift cards?").
        thing = had.group("thing") or had.group("stocked")
        meaning = sentence_encode(thing)
        ranked = sorted(
            (
                (key, score if reader.about(thing, meaning, key) else min(score, LIKELY / 2))
                for key, score in ranked
            ),
            key=lambda item: -item[1],
        )
    return Match(tuple(ranked))


def faq_reader_warm() -> None:
    """Read the background and the sentence model now (a second or two, once per process), so that no
    customer waits for them."""
    try:
        sentences_warm()
        _background()
    except ModelFileError as error:
        _meaning_unavailable(str(error))
