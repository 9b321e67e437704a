"""What every embedder is: the interface the index and retrieval use (the offline static model in
static_embedding.py, MiniLM in minilm.py, litellm models in embedding.py), its one error, the
row normalisation they share, and how their long steps report progress."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import numpy as np

Progress = Callable[[int, int, str], None]  # (done, total, what is being done)


class EmbeddingError(RuntimeError):
    """The embedder cannot produce vectors; keyword search keeps working without them."""


class Embedder(Protocol):
    @property
    def name(self) -> str:
        """Names the model and its version: vectors are stored and looked up under it."""
        ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: list[str]) -> np.ndarray:
        """float32 array (len(texts), dim) of L2-normalised rows."""
        ...


def unit_rows(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.maximum(norms, 1e-12)).astype(np.float32)
