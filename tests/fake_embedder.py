"""A deterministic embedder for tests that need vectors but not meaning: each token hashes to a fixed direction."""

from __future__ import annotations

import hashlib
import re

import numpy as np

from services.embeddings import _CachedEmbedder

_TOKEN_RE = re.compile(r"[a-z0-9']+")


class HashEmbedder(_CachedEmbedder):
    """Deterministic fake for unit tests: each token hashes to a fixed random direction."""

    def __init__(self, dim: int = 384, model_id: str = "hash-embedder", cache_size: int = 1024) -> None:
        super().__init__(cache_size)
        self.dim = dim
        self.model_id = model_id

    def _token_vector(self, token: str) -> np.ndarray:
        seed = int.from_bytes(hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest(), "little")
        return np.random.default_rng(seed).standard_normal(self.dim).astype(np.float32)

    def _encode(self, texts: list[str]) -> np.ndarray:
        rows = []
        for text in texts:
            tokens = _TOKEN_RE.findall(text.lower()) or [text]
            rows.append(np.sum([self._token_vector(token) for token in tokens], axis=0))
        return np.stack(rows)
