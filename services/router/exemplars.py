"""Exemplar sentences per mode (``configs/router_exemplars.toml``), embedded once, as similarity signals."""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from services.embeddings import Embedder
from services.router.signals import MODES

EXEMPLARS_FILE = "router_exemplars.toml"
SIM_SIGNALS = {mode: f"sim_{mode.lower()}" for mode in MODES}


class ExemplarIndex:
    """Embedded exemplar sentences per mode; similarity is the mean of the top-k cosines."""

    def __init__(self, matrix: np.ndarray, spans: dict[str, tuple[int, int]], model_id: str) -> None:
        self.matrix = matrix
        self.spans = spans
        self.model_id = model_id

    @classmethod
    def build(cls, exemplars: Mapping[str, list[str]], embedder: Embedder) -> ExemplarIndex:
        """Embed every exemplar once (called when the router is built)."""
        texts: list[str] = []
        spans: dict[str, tuple[int, int]] = {}
        for mode in MODES:
            sentences = list(exemplars.get(mode, []))
            if not sentences:
                raise ValueError(f"{EXEMPLARS_FILE} has no exemplars for {mode}")
            spans[mode] = (len(texts), len(texts) + len(sentences))
            texts.extend(sentences)
        return cls(embedder.embed_many(texts), spans, embedder.model_id)

    def similarities(self, vector: np.ndarray, top_k: int) -> dict[str, float]:
        """Top-k-mean cosine similarity of ``vector`` to each mode's exemplars."""
        cosines = self.matrix @ vector  # a fresh array: each mode's slice of it is partitioned in place
        result = {}
        for mode, (start, end) in self.spans.items():
            row = cosines[start:end]
            k = min(top_k, len(row))
            # What ``np.partition(row, len(row) - k)`` returns, without its copy and wrapper: the same introselect on
            # the same numbers, so the same top k in the same order (and so the same float32 sum).
            row.partition(len(row) - k)
            result[SIM_SIGNALS[mode]] = _mean(row[len(row) - k:])
        return result


def _mean(values: np.ndarray) -> float:
    """``float(values.mean())`` without NumPy's general-purpose wrappers: the sum in the array's own type
    (``np.add.reduce``, which ``ndarray.sum`` calls) divided by the count, as ``ndarray.mean`` does it (the same bits),
    at a fraction of the cost for three numbers."""
    return float(values.dtype.type(float(np.add.reduce(values)) / len(values)))


def load_exemplars(path: Path) -> dict[str, list[str]]:
    """Read ``[MODE] examples = [...]`` tables."""
    with path.open("rb") as handle:
        raw = tomllib.load(handle)
    return {mode: [str(s) for s in raw.get(mode, {}).get("examples", [])] for mode in MODES}
