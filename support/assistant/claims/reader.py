"""What a reply's sentence claims, read by meaning rather than by wording (issue 50).

Lists of wordings lose to the next wording ("it is void now", "has been called off", "foi entregue
ontem"): each round of probes stopped the last round's words and the next words passed. So each
sentence is read by classifiers trained on labelled sentences (sentences/*.jsonl: written by hand in
English, Spanish, Brazilian Portuguese, French and German, each file by another writer, see
sentences/README.md), one per kind of claim:
- order_state: the state it says the order is in (delivered, shipped, processing, cancelled, or only not
  delivered yet) or none;
- change: a change it speaks of as a fact (a cancellation or an address change, made or only asked);
- refund: money given back already, or promised;
- address, parcel, promise, person, credentials, offtopic: whether it states or does that at all.
What a sentence claims is then checked against the turn's facts elsewhere (support.assistant.claims.checking);
what it claims is this module's only answer, whatever is true.

Each sentence is read with three kinds of features, each of unit length: its words and word pairs, its
letter sequences (both hashed: any language, and words no sentence had), and its meaning
(all-MiniLM-L6-v2, support.assistant.understanding.sentences). A linear classifier per kind (scikit-learn's
LinearSVC, as the FAQ reader) learns from them in several seconds; the labelled sentences' meanings and
the trained weights are kept beside them (sentences/vectors.npz and reader.npz, `manage.py
claims_encode`), so that a process reads the reader in a fraction of a second.
"""

import functools
import hashlib
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from support.assistant.understanding.sentences import (
    ModelFileError,
    phrasings_encoded,
    phrasings_encoder,
    sentences_encode,
)

if TYPE_CHECKING:
    from scipy.sparse import csr_matrix

logger = logging.getLogger(__name__)

SENTENCES = Path(__file__).with_name("sentences")
VECTORS = SENTENCES / "vectors.npz"
READER = SENTENCES / "reader.npz"

NONE = "none"
# Each kind of claim and the values a sentence may have for it; the first is "claims nothing of it".
KINDS: dict[str, tuple[str, ...]] = {
    # not_delivered: "it hasn't arrived yet", true of an order shipped and of one still processing.
    "order_state": (NONE, "delivered", "shipped", "processing", "cancelled", "not_delivered"),
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


@dataclass(frozen=True)
class _Linear:
    """One kind's classifier, as its weights: a score per class is `features @ coef.T + intercept` (one
    score, for the second class, when there are two)."""

    classes: list[str]
    coef: Any  # a scipy sparse matrix: classes (or 1) x features
    intercept: Any


class ClaimReader:
    """A classifier per kind of claim, trained on labelled sentences (or read from stored weights)."""

    def __init__(
        self, rows: Sequence[Labelled] = (), meanings=None, *, weights: dict[str, _Linear] | None = None
    ):
        from scipy.sparse import csr_matrix
        from sklearn.svm import LinearSVC

        self.classifiers: dict[str, _Linear] = dict(weights or {})
        if weights is not None:
            return
        matrix = _features([row.text for row in rows], meanings)
        for kind in KINDS:
            labels = [row.values[kind] for row in rows]
            if len(set(labels)) < 2:
                continue  # nothing to tell apart: every sentence claims nothing of it
            fitted = LinearSVC(C=1.0, class_weight="balanced").fit(matrix, labels)
            self.classifiers[kind] = _Linear(
                classes=[str(label) for label in fitted.classes_],
                coef=csr_matrix(fitted.coef_.astype("float32")),
                intercept=fitted.intercept_.astype("float32"),
            )

    def read(self, sentences: Sequence[str], meanings=None, *, sure: float = 0.0) -> list[SentenceClaims]:
        """What each sentence claims (`meanings`: their vectors, when the caller has them). A claim is
        read only when its classifier's score for it beats its score for "nothing of it" by `sure`."""
        import numpy as np

        if not sentences:
            return []
        matrix = _features(sentences, sentences_encode(list(sentences)) if meanings is None else meanings)
        by_kind: dict[str, list[str]] = {}
        for kind, linear in self.classifiers.items():
            scores = np.asarray((matrix @ linear.coef.T).todense()) + linear.intercept
            nothing = KINDS[kind][0]
            if scores.shape[1] == 1:  # two classes: one score, for the second
                scores = np.column_stack([-scores[:, 0], scores[:, 0]])
            best = scores.argmax(axis=1)
            margin = scores[np.arange(len(best)), best] - scores[:, linear.classes.index(nothing)]
            by_kind[kind] = [
                linear.classes[index] if linear.classes[index] == nothing or margin[row] > sure else nothing
                for row, index in enumerate(best)
            ]
        return [
            SentenceClaims(
                {kind: by_kind[kind][index] if kind in by_kind else KINDS[kind][0] for kind in KINDS}
            )
            for index in range(len(sentences))
        ]

    def store(self, path: Path, *, fingerprint: str) -> None:
        """Keep the weights (each in half precision: a score moves by a few thousandths) with what they
        were trained on."""
        import numpy as np

        arrays: dict[str, Any] = {"fingerprint": np.array(fingerprint)}
        for kind, linear in self.classifiers.items():
            arrays |= {
                f"{kind}.classes": np.array(linear.classes),
                f"{kind}.data": linear.coef.data.astype(np.float16),
                f"{kind}.indices": linear.coef.indices.astype(np.int32),
                f"{kind}.indptr": linear.coef.indptr.astype(np.int32),
                f"{kind}.shape": np.array(linear.coef.shape),
                f"{kind}.intercept": linear.intercept,
            }
        np.savez_compressed(path, **arrays)

    @classmethod
    def stored(cls, path: Path, *, fingerprint: str) -> "ClaimReader | None":
        """The reader kept at `path`, if it was trained on what `fingerprint` says; else None."""
        import numpy as np
        from scipy.sparse import csr_matrix

        if not path.exists():
            return None
        with np.load(path) as kept:
            if str(kept["fingerprint"]) != fingerprint:
                return None
            weights = {
                kind: _Linear(
                    classes=[str(label) for label in kept[f"{kind}.classes"]],
                    coef=csr_matrix(
                        (
                            kept[f"{kind}.data"].astype(np.float32),
                            kept[f"{kind}.indices"],
                            kept[f"{kind}.indptr"],
                        ),
                        shape=tuple(kept[f"{kind}.shape"]),
                    ),
                    intercept=kept[f"{kind}.intercept"],
                )
                for kind in KINDS
                if f"{kind}.classes" in kept
            }
        return cls(weights=weights)


def labelled_meanings(rows: Sequence[Labelled]):
    """The labelled sentences' vectors, as stored in sentences/vectors.npz (encoded here if not)."""
    return phrasings_encoded(tuple(row.text for row in rows), path=VECTORS)


def reader_fingerprint(rows: Sequence[Labelled]) -> str:
    """What a reader is trained on: the labelled sentences, the kinds, the features and the sentence model."""
    seen = json.dumps(
        [[row.writer, row.lang, row.text, row.values] for row in rows]
        + [KINDS, _HASHED_FEATURES, phrasings_encoder()],
        ensure_ascii=False,
    )
    return hashlib.sha256(seen.encode()).hexdigest()


def claim_reader_train_store() -> Path:
    """Train the reader on every labelled sentence and keep it (sentences/reader.npz)."""
    rows = labelled_sentences()
    ClaimReader(rows, labelled_meanings(rows)).store(READER, fingerprint=reader_fingerprint(rows))
    return READER


@functools.cache
def claim_reader() -> ClaimReader:
    """The reader as kept in sentences/reader.npz (a fraction of a second, once per process); trained
    here (several seconds) when the labelled sentences changed since it was kept."""
    rows = labelled_sentences()
    kept = ClaimReader.stored(READER, fingerprint=reader_fingerprint(rows))
    if kept is not None:
        return kept
    logger.warning("the claim reader was trained anew: run manage.py claims_encode to keep it")
    return ClaimReader(rows, labelled_meanings(rows))


def claim_reader_warm() -> None:
    """Read the reader and the sentence model now (about a second, once per process). Without the
    sentence model's files the reader cannot read: the validator then says so on the first reply."""
    try:
        claim_reader().read(["Your order has shipped."])
    except ModelFileError as error:
        logger.error("the claim reader cannot read: %s", error)
