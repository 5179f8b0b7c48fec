"""The sentence model the FAQ reader reads meaning with (support/assistant/understanding/sentences.py)."""

import zipfile

import numpy as np
import pytest

from support.assistant.builtin.faq import PHRASINGS
from support.assistant.understanding import sentences


def test_vectors_are_the_models_own():
    """The model card's sentences read as sentence-transformers reads them (0.755 alike): a forward pass
    that drops a layer norm, the GELU or the mean over tokens reads them otherwise."""
    eating, bread, baby = sentences.sentences_encode(
        ["A man is eating food.", "A man is eating a piece of bread.", "The girl is carrying a baby."]
    )
    assert eating @ bread == pytest.approx(0.755, abs=0.005)
    assert eating @ baby < 0.1
    assert np.linalg.norm(baby) == pytest.approx(1.0, abs=1e-5)


def test_a_sentence_reads_the_same_beside_a_longer_one():
    """A batch is padded to its longest sentence; the padding is not read."""
    short = "do you take paypal?"
    alone = sentences.sentences_encode([short])[0]
    beside = sentences.sentences_encode(
        [short, "I would like to know which cards and wallets you take " * 3]
    )[0]
    assert np.allclose(alone, beside, atol=1e-5)


def test_meaning_is_read_beyond_the_words():
    """What the FAQ reader needs it for: a question worded with none of the topic's words is nearer to
    the topic's question than to another topic's."""
    visa, payment, wrapping = sentences.sentences_encode(
        [
            "can I pay with my visa card?",
            "Which payment methods do you accept?",
            "Do you offer gift wrapping?",
        ]
    )
    assert visa @ payment > visa @ wrapping + 0.15


@pytest.fixture
def model_zip_tampered(tmp_path, monkeypatch):
    """The package's model.zip with one byte of the weights changed."""
    with zipfile.ZipFile(sentences._model_zip()) as published:
        weights = bytearray(published.read("model.safetensors"))
        tokenizer = published.read("tokenizer.json")
    weights[-1] ^= 1
    path = tmp_path / "model.zip"
    with zipfile.ZipFile(path, "w") as tampered:
        tampered.writestr("model.safetensors", bytes(weights))
        tampered.writestr("tokenizer.json", tokenizer)
    monkeypatch.setattr(sentences, "_model_zip", lambda: path)
    sentences._model_read.cache_clear()
    yield path
    sentences._model_read.cache_clear()


def test_weights_other_than_the_published_file_are_not_read(model_zip_tampered):
    with pytest.raises(sentences.ModelFileError, match="not the published"):
        sentences.sentences_encode(["hello"])


def test_the_stored_phrasings_are_phrasings_json():
    """phrasings.npz holds every phrasing as phrasings.json has it: edited without `manage.py
    phrasings_encode`, every process would encode the new ones when it starts; encoded otherwise (another
    model, another scale), all of them."""
    with np.load(sentences._PHRASINGS_VECTORS) as stored:
        assert tuple(str(text) for text in stored["texts"]) == sentences.phrasings_texts(PHRASINGS)
        assert str(stored["encoder"]) == sentences.phrasings_encoder()


def test_a_phrasing_not_stored_is_encoded():
    texts = (*sentences.phrasings_texts(PHRASINGS)[:2], "a phrasing added since the file was written")
    vectors = sentences.phrasings_encoded(texts)
    assert np.allclose(vectors[2], sentences.sentence_encode(texts[2]), atol=1e-5)
    assert np.allclose(vectors[0], sentences.sentence_encode(texts[0]), atol=0.01)  # stored in bytes


@pytest.fixture
def model_missing(monkeypatch):
    """No sentence model installed, and nothing read or learned with one yet."""
    from support.assistant.builtin import faq

    def missing():
        raise sentences.ModelFileError("the sentence model is not installed")

    monkeypatch.setattr(sentences, "_model_zip", missing)
    caches = (sentences._model_read, sentences.sentence_encode, faq._match, faq._reader_trained)
    for cache in caches:
        cache.cache_clear()
    yield
    for cache in caches:
        cache.cache_clear()


def test_without_the_model_a_faq_question_gets_the_built_in_answer_not_an_error(model_missing, caplog):
    from support.assistant.builtin.faq import faq_match, faq_reader_warm
    from support.llm.protocol import FaqTopic

    faq_reader_warm()
    payments = FaqTopic("payment_methods", "Payment methods", ("Which cards do you take?",), "Visa.")
    assert faq_match("can I pay with my visa card?", [payments]).scores == ()
    assert "FAQ reader: the sentence model is not installed" in caplog.text


def test_threads_asking_for_the_model_at_once_read_it_once(monkeypatch):
    """A worker's threads all asking at its first FAQ question: one read (each holds hundreds of MB)."""
    from concurrent.futures import ThreadPoolExecutor

    published, reads = sentences._model_zip(), []

    def counted():
        reads.append(1)
        return published

    monkeypatch.setattr(sentences, "_model_zip", counted)
    sentences._model_read.cache_clear()
    try:
        with ThreadPoolExecutor(max_workers=4) as pool:
            list(pool.map(lambda _: sentences._model(), range(4)))
    finally:
        sentences._model_read.cache_clear()
    assert len(reads) == 1


def test_threads_asking_for_a_new_reader_at_once_train_it_once(monkeypatch):
    from concurrent.futures import ThreadPoolExecutor

    from support.assistant.builtin import faq
    from support.llm.protocol import FaqTopic

    labels, trainings = faq._labels, []

    def counted(*args, **kwargs):
        trainings.append(1)
        return labels(*args, **kwargs)

    monkeypatch.setattr(faq, "_labels", counted)
    topics = faq._written([FaqTopic("gift_cards", "Gift cards", ("Do you sell gift cards?",), "We do.")])
    faq._reader_trained.cache_clear()
    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(lambda _: faq._reader(topics), range(4)))
    assert len(trainings) == 1
