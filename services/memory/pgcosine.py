"""pgvector's cosine distance (``<=>``) reproduced bit for bit in the process, for a few stored vectors.

The query expansion's statement (``vocabulary.nearest_sql``) computed pgvector's cosines for the ~10 words the kept
vectors pick (``vocabmatrix``), then ordered, cut and weighted them: a statement on recall's critical path, after the
query vector. The weights it yields enter every turn's BM25, so an in-process cosine must be the same double, not a
close one.

pgvector 0.8 (src/vector.c, ``VectorCosineSimilarity``) sums float32 products in a loop its Makefile lets the compiler
vectorise and fuse (``-ftree-vectorize -fassociative-math -ffp-contract=fast``), in a clone for CPUs with FMA. On such a
CPU the loop runs as 8 float32 lanes: lane ``l`` accumulates elements ``l, l + 8, ...`` by fused multiply-adds (one
rounding each), and the lanes are then added in halves (4 + 4, 2 + 2, 1 + 1); the similarity is
``dot / sqrt(norm_a × norm_b)`` in double, clamped to [−1, 1], and the distance ``1 − similarity``. Measured against
the embedded server here: this order matched all 895,750 cosines of 250 query vectors × 3,583 words; every other
order tried (scalar, 4 or 16 lanes, without fusion, other reductions) differed in 72–100% of 35,830. A server built
otherwise (``-march=native``, another compiler) may sum in another order: recall checks these cosines against the
statement's own results first (``vocabmatrix.Matrices``) and keeps the statement where they differ.

Each step is computed in float64 (a float32 product is exact there; a sum is rounded once to 53 bits) and then rounded
to float32: two roundings, which differ from the hardware's one only when the float64 value lies exactly halfway between
two float32s (about one step in 2^24); there the float64 sum's exact error (two-sum) tells which way the exact value
lies. (A sum in float32's subnormal range that float64 rounded gives None: the statement decides.)
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

LANES = 8
# A float64 exactly halfway between two float32s: its 29 bits below float32's precision are a one and 28 zeros.
_BELOW_FLOAT32 = np.uint64((1 << 29) - 1)
_HALFWAY = np.uint64(1 << 28)
_SMALLEST_NORMAL32 = float(np.finfo(np.float32).tiny)


def parsed(literal: str) -> np.ndarray | None:
    """The float32 values pgvector's input function reads from a vector's text form (``strtof`` of each value: one
    rounding of the decimal), or None for a value in float32's subnormal range."""
    texts = literal[1:-1].split(",")
    values = np.array(texts, dtype=np.float64)
    rounded = values.astype(np.float32)
    for index in np.flatnonzero(_doubtful(values)):  # the decimal itself decides which way (rare)
        if abs(values[index]) < _SMALLEST_NORMAL32:
            return None
        exact = Fraction(texts[index])
        rounded[index] = _toward(values[index], exact - Fraction(float(values[index])), rounded[index])
    return rounded


def distances(rows: np.ndarray, query: np.ndarray) -> np.ndarray | None:
    """pgvector's ``row <=> query`` for each of ``rows`` (float32, one vector a row; the stored vector on the left, as
    ``embedding <=> :vector``), as float64; None when a float64 sum was rounded into float32's subnormal range (where
    the rounding is not checked here), a value is not finite or the dimension does not split into the lanes."""
    count, dim = rows.shape
    if dim % LANES or count == 0:
        return None
    wide = rows.astype(np.float64)
    query64 = np.asarray(query, dtype=np.float32).astype(np.float64)
    # One pass for the dot products, the rows' norms and the query's norm: products exact in float64.
    products = np.concatenate([wide * query64, wide * wide, (query64 * query64)[None, :]])
    if not np.all(np.isfinite(products)):
        return None
    steps = products.reshape(2 * count + 1, dim // LANES, LANES).transpose(1, 0, 2).copy()
    sums = _lane_sums(steps)
    if sums is None:
        return None
    dot, norms, query_norm = sums[:count], sums[count:2 * count], sums[2 * count]
    similarity = dot / np.sqrt(norms * query_norm)
    return 1.0 - np.clip(similarity, -1.0, 1.0)


def _lane_sums(steps: np.ndarray) -> np.ndarray | None:
    """Each row's sum of products as the vectorised loop makes it (float32 values in float64); ``steps``: the products
    by step, row and lane."""
    totals = np.empty_like(steps)  # each step's float64 sums, checked at once after the loop
    acc, rounded = np.zeros(steps.shape[1:]), np.empty(steps.shape[1:], dtype=np.float32)
    for step, products in enumerate(steps):  # (buffers assigned in place, same types: ~120 µs for 25 rows)
        np.add(acc, products, out=totals[step])  # a fused multiply-add: the exact product, one rounding ...
        rounded[...] = totals[step]  # ... to float32, the nearest (to even)
        acc[...] = rounded
    before = np.concatenate([np.zeros_like(steps[:1]), totals[:-1].astype(np.float32)])
    if np.any(_doubtful(totals) & (_error(before, steps, totals) != 0)):  # rare: again, each step as the hardware does
        acc = np.zeros(steps.shape[1:], dtype=np.float64)
        for products in steps:
            acc = _sum32(acc, products)
            if acc is None:
                return None
    while acc.shape[1] > 1:  # the lanes added in halves
        half = acc.shape[1] // 2
        acc = _sum32(acc[:, :half], acc[:, half:])
        if acc is None:
            return None
    return acc[:, 0]


def _sum32(left: np.ndarray, right: np.ndarray) -> np.ndarray | None:
    """``left + right`` (float32 values, or float32 and an exact product, in float64) rounded once to float32, kept
    as float64; None where a rounded float64 sum lies in float32's subnormal range."""
    total = left + right
    rounded = total.astype(np.float32)
    error = _error(left, right, total)
    # A float64 sum that was exact is rounded right (to even at a true tie); one rounded onto a halfway point is not.
    for index in zip(*np.nonzero(_doubtful(total) & (error != 0)), strict=True):
        if abs(total[index]) < _SMALLEST_NORMAL32:
            return None
        rounded[index] = _toward(float(total[index]), float(error[index]), rounded[index])
    return rounded.astype(np.float64)


def _error(left: np.ndarray, right: np.ndarray, total: np.ndarray) -> np.ndarray:
    """Knuth's two-sum: the exact rounding error of the float64 sums ``total`` = ``left + right``."""
    right_part = total - left
    return (left - (total - right_part)) + (right - right_part)


def _toward(value: float, error: float | Fraction, rounded: np.float32) -> np.float32:
    """The float32 neighbour of ``value`` (halfway between two) on the side of the exact value ``value + error``;
    ``rounded`` (to even) when ``error`` is zero."""
    if error > 0 and float(rounded) < value:
        return np.nextafter(rounded, np.float32(np.inf))
    if error < 0 and float(rounded) > value:
        return np.nextafter(rounded, np.float32(-np.inf))
    return rounded


def _halfway(values: np.ndarray) -> np.ndarray:
    """Where a float64 lies exactly halfway between two float32s: its 29 bits below float32's are a one, 28 zeros."""
    return (values.view(np.uint64) & _BELOW_FLOAT32) == _HALFWAY


def _doubtful(values: np.ndarray) -> np.ndarray:
    """Where a float64 sum's float32 rounding needs its exact value: halfway between two float32s, or subnormal."""
    return _halfway(values) | ((np.abs(values) < _SMALLEST_NORMAL32) & (values != 0))
