"""What a reply's sentence claims, read by meaning rather than by wording (issue 50).

Lists of wordings lose to the next wording ("it is void now", "has been called off", "foi entregue
ontem"): each round of probes stopped the last round's words and the next words passed. So each
sentence is read by classifiers trained on labelled sentences (sentences/*.jsonl: written by hand in
English, Spanish, Brazilian Portuguese, French and German, each file by another writer, see
sentences/README.md), one per kind of claim:
- order_state: the state it says the order is in (delivered, shipped, processing, cancelled) or none;
- change: a change it speaks of as a fact (a cancellation or an address change, made or only asked);
- refund: money given back already, or promised;
- address, parcel, promise, person, credentials, offtopic: whether it states or does that at all.
What a sentence claims is then checked against the turn's facts elsewhere (support.assistant.claims.checking);
what it claims is this module's only answer, whatever is true.

Each sentence is read with three kinds of features, each of unit length: its words and word pairs, its
letter sequences (both hashed: any language, and words no sentence had), and its meaning
(all-MiniLM-L6-v2, support.assistant.understanding.sentences). A linear classifier per kind (scikit-learn's
LinearSVC, as the FAQ reader) learns from them in about a second, once per process; the labelled
sentences' meanings are stored encoded beside them (sentences/vectors.npz, `manage.py claims_encode`).
"""

import functools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from support.assistant.understanding.sentences import phrasings_encoded, sentences_encode

if TYPE_CHECKING:
    from scipy.sparse import csr_matrix

SENTENCES = Path(__file__).with_name("sentences")
VECTORS = SENTENCES / "vectors.npz"

NONE = "none"
# Each kind of claim and the values a sentence may have for it; the first is "claims nothing of it".
KINDS: dict[str, tuple[str, ...]] = {
    "order_state": (NONE, "delivered", "shipped", "processing", "cancelled"),
    "change": (NONE, "cancel_made", "cancel_asked", "address_made", "address_asked"),
    "refund": (NONE, "made", "promised"),
    "address": ("false", "true"),
    "parcel": ("false", "true"),
    "promise": ("false", "true"),
    "person": ("false", "true"),
    "credentials": ("false", "true"),
    "offtopic": ("false", "true"),
}
LANGUAGES = ("en", "es", "pt", "fr", "de")
_HASHED_FEATURES = 2**18


@dataclass(frozen=True)
class Labelled:
    """One labelled sentence: its words, language, writer (the file it comes from) and its value per kind."""

    text: str
    lang: str
    writer: str
    values: dict[str, str]


def _value(raw: Any) -> str:
    return ("true" if raw else "false") if isinstance(raw, bool) else str(raw)


def labelled_sentences(folder: Path = SENTENCES) -> list[Labelled]:
    """Every labelled sentence of the folder's files (each line a JSON object), in file order. A line
    with a kind's value not among KINDS', or another language, is refused by name (data is input too)."""
    found: list[Labelled] = []
    for path in sorted(folder.glob("*.jsonl")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            row = json.loads(line)
            values = {kind: _value(row.get(kind, choices[0])) for kind, choices in KINDS.items()}
            wrong = [kind for kind, value in values.items() if value not in KINDS[kind]]
            if wrong or row.get("lang") not in LANGUAGES or not str(row.get("text", "")).strip():
                raise ValueError(
                    f"{path.name}:{number}: not a labelled sentence ({', '.join(wrong) or 'text'})"
                )
            found.append(
                Labelled(text=row["text"].strip(), lang=row["lang"], writer=path.stem, values=values)
            )
    return found


@functools.cache
def _hashes():
    from sklearn.feature_extraction.text import HashingVectorizer

    common = {"n_features": _HASHED_FEATURES, "alternate_sign": False, "norm": "l2", "lowercase": True}
    return (
        HashingVectorizer(ngram_range=(1, 2), **common),
        HashingVectorizer(analyzer="char_wb", ngram_range=(2, 5), **common),
    )


def _features(texts: Sequence[str], meanings) -> "csr_matrix":
    from scipy.sparse import csr_matrix, hstack

    words, letters = _hashes()
    return hstack([words.transform(texts), letters.transform(texts), csr_matrix(meanings)]).tocsr()


@dataclass(frozen=True)
class SentenceClaims:
    """What one sentence claims: its value per kind ("none" / "false" when it claims nothing of it)."""

    values: dict[str, str]

    def claims(self, kind: str) -> bool:
        return self.values[kind] != KINDS[kind][0]

    @property
    def anything(self) -> bool:
        return any(self.claims(kind) for kind in KINDS)


class ClaimReader:
    """A classifier per kind of claim, trained on labelled sentences."""

    def __init__(self, rows: Sequence[Labelled], meanings):
        from sklearn.svm import LinearSVC

        matrix = _features([row.text for row in rows], meanings)
        self.classifiers: dict[str, Any] = {}
        for kind in KINDS:
            labels = [row.values[kind] for row in rows]
            if len(set(labels)) < 2:
                continue  # nothing to tell apart: every sentence claims nothing of it
            self.classifiers[kind] = LinearSVC(C=1.0, class_weight="balanced").fit(matrix, labels)

    def read(self, sentences: Sequence[str], meanings=None) -> list[SentenceClaims]:
        """What each sentence claims (`meanings`: their vectors, when the caller has them)."""
        if not sentences:
            return []
        matrix = _features(sentences, sentences_encode(list(sentences)) if meanings is None else meanings)
        by_kind = {kind: classifier.predict(matrix) for kind, classifier in self.classifiers.items()}
        return [
            SentenceClaims(
                {kind: str(by_kind[kind][index]) if kind in by_kind else KINDS[kind][0] for kind in KINDS}
            )
            for index in range(len(sentences))
        ]


def labelled_meanings(rows: Sequence[Labelled]):
    """The labelled sentences' vectors, as stored in sentences/vectors.npz (encoded here if not)."""
    return phrasings_encoded(tuple(row.text for row in rows), path=VECTORS)


@functools.cache
def claim_reader() -> ClaimReader:
    """The reader trained on every labelled sentence: about a second, once per process."""
    rows = labelled_sentences()
    return ClaimReader(rows, labelled_meanings(rows))
