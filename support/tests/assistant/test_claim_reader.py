"""The claim reader of layer 4 (support.assistant.claims.reader): its labelled sentences are data checked
like input, cover every kind and value in every language, and are read by meaning well enough on a writer
it never saw (the full figures: `manage.py run_evals --claims`)."""

import json
from collections import Counter

import pytest

from support.assistant.claims.reader import (
    KINDS,
    LANGUAGES,
    READER,
    ClaimReader,
    labelled_meanings,
    labelled_sentences,
    reader_fingerprint,
)
from support.evals.claims import ClaimCounts

# Each value of each kind in each language at least this often: a value few sentences have is not learnt.
FEWEST = 10


@pytest.fixture(scope="module")
def rows():
    return labelled_sentences()


def test_every_value_of_every_kind_has_sentences_in_every_language(rows):
    seen = Counter((row.lang, kind, row.values[kind]) for row in rows for kind in KINDS)
    thin = [
        (lang, kind, value)
        for lang in LANGUAGES
        for kind, values in KINDS.items()
        for value in values
        if seen[lang, kind, value] < FEWEST
    ]
    assert not thin
    assert len({row.text for row in rows}) == len(rows)  # no sentence twice


def test_the_kept_reader_was_trained_on_these_sentences(rows):
    """reader.npz is what `manage.py claims_encode` trained on the sentences as they are now: a sentence
    added or relabelled without it would leave the validator reading with the old weights."""
    assert ClaimReader.stored(READER, fingerprint=reader_fingerprint(rows)) is not None


def test_a_label_that_is_not_a_kinds_value_is_refused_with_its_file_and_line(tmp_path):
    good = {"text": "It has shipped.", "lang": "en", "order_state": "shipped"}
    lines = [json.dumps(good), json.dumps({**good, "text": "Parcel 2 left.", "parcel": "maybe"})]
    (tmp_path / "writer_x.jsonl").write_text("\n".join(lines))

    with pytest.raises(ValueError, match=r"writer_x.jsonl:2: not a labelled sentence \(parcel\)"):
        labelled_sentences(tmp_path)


def test_a_writer_it_never_saw_is_read_by_meaning(rows):
    """Trained on every other writer's sentences, the reader reads writer_h's (claims buried among
    courtesy and context) at these floors per kind; `run_evals --claims` gives every writer's and
    language's figures."""
    meanings = labelled_meanings(rows)
    held = "writer_h"
    trained = [index for index, row in enumerate(rows) if row.writer != held]
    tested = [index for index, row in enumerate(rows) if row.writer == held]
    reader = ClaimReader([rows[index] for index in trained], meanings[trained])

    read = reader.read([rows[index].text for index in tested], meanings[tested])

    for kind, values in KINDS.items():
        counts = ClaimCounts()
        for index, claims in zip(tested, read, strict=True):
            labelled, found = rows[index].values[kind], claims.values[kind]
            if labelled == found != values[0]:
                counts.right += 1
            elif labelled != found:
                counts.missed += labelled != values[0]
                counts.read_wrongly += found != values[0]
        assert (kind, counts.precision >= 0.8, counts.recall >= 0.6) == (kind, True, True)
