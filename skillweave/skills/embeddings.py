"""Sentence embeddings for skill selection, from a model shipped inside a Python package.

The optional ``embeddings`` extra (``pip install 'skillweave[embeddings]'``) installs the
``wordllama`` package, whose wheel carries a static embedding model: a 32,000 x 256 token
embedding table distilled from Llama 2 (``weights/l2_supercat_256.safetensors``, 16 MB) and
its tokenizer (``tokenizers/l2_supercat_tokenizer_config.json``). A text's vector is the mean
of its tokens' rows, normalised to unit length, so the cosine of two texts is a dot product.

Only those two files are used, read with ``tokenizers`` and ``safetensors`` (the package's own
loader looks for the tokenizer in a folder its wheel does not have, then downloads it, and its
inference module configures the root logger on import). Nothing is fetched at run time: when
the files are missing, :func:`load_model` says so and selection falls back to BM25.

Embedding is cheap (a table lookup and a mean: ~20 µs for a query, ~30 ms for 1,000 skill
descriptions), so vectors are computed when a registry first searches and kept with it.
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import numpy as np

__all__ = ["MODEL_NAME", "EmbeddingModel", "EmbeddingsUnavailable", "load_model"]

log = logging.getLogger("skillweave.skills")

MODEL_NAME: Final = "wordllama l2_supercat 256-d"
_PACKAGE: Final = "wordllama"
_WEIGHTS: Final = "weights/l2_supercat_256.safetensors"
_TOKENIZER: Final = "tokenizers/l2_supercat_tokenizer_config.json"
_TENSOR: Final = "embedding.weight"
_BATCH: Final = 256


class EmbeddingsUnavailable(RuntimeError):
    """The embedding model cannot be loaded: the extra is not installed, or its files are not
    where this version of it keeps them."""


@dataclass(frozen=True, slots=True)
class _Files:
    weights: Path
    tokenizer: Path


def _files() -> _Files:
    # find_spec locates the package without importing (running) it.
    spec = importlib.util.find_spec(_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddingsUnavailable(
            "the embeddings extra is not installed: pip install 'skillweave[embeddings]'"
        )
    root = Path(next(iter(spec.submodule_search_locations)))
    files = _Files(root / _WEIGHTS, root / _TOKENIZER)
    for path in (files.weights, files.tokenizer):
        if not path.is_file():
            raise EmbeddingsUnavailable(f"the {_PACKAGE} package has no {path.name} at {path}")
    return files


class EmbeddingModel:
    """A static token-embedding model: texts in, unit vectors out. Safe across threads.

    Args:
        table: the token embedding table, one row per token id.
        tokenizer: a ``tokenizers.Tokenizer`` for that vocabulary.
    """

    def __init__(self, table: np.ndarray, tokenizer: object) -> None:
        self._table = np.ascontiguousarray(table, dtype=np.float32)
        self._tokenizer = tokenizer
        self._lock = threading.Lock()  # padding settings live on the shared tokenizer

    @property
    def dimensions(self) -> int:
        return int(self._table.shape[1])

    def embed(self, texts: list[str]) -> np.ndarray:
        """One unit-length float32 row per text (all zeros for a text with no tokens).

        Texts are lowercased first: the tokenizer tells "Resize" from "resize" (cosine 0.71),
        and how a user capitalises a request says nothing about the skill it needs.
        """
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for start in range(0, len(texts), _BATCH):
            batch = [text.lower() for text in texts[start : start + _BATCH]]
            with self._lock:
                encoded = self._tokenizer.encode_batch(  # type: ignore[attr-defined]
                    batch, add_special_tokens=False
                )
            for offset, encoding in enumerate(encoded):
                ids = np.asarray(encoding.ids, dtype=np.int64)
                ids = ids[(ids >= 0) & (ids < len(self._table))]
                if ids.size:
                    out[start + offset] = self._table[ids].mean(axis=0)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out


@functools.cache
def load_model() -> EmbeddingModel:
    """The packaged model, loaded once per process (~0.15 s).

    Raises:
        EmbeddingsUnavailable: the extra is not installed, or its files cannot be read.
    """
    files = _files()
    try:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer
    except ImportError as error:  # the extra pulls both in; a broken install lacks one
        raise EmbeddingsUnavailable(f"the embeddings extra is incomplete: {error}") from error
    try:
        table = load_file(str(files.weights))[_TENSOR]
        tokenizer = Tokenizer.from_file(str(files.tokenizer))
    except Exception as error:  # a corrupt or changed file: say which, fall back to BM25
        raise EmbeddingsUnavailable(f"cannot load {MODEL_NAME}: {error}") from error
    tokenizer.no_padding()
    tokenizer.no_truncation()
    log.debug("loaded %s from %s", MODEL_NAME, files.weights.parent.parent)
    return EmbeddingModel(table, tokenizer)
