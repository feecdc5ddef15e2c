"""Recall's scored candidates, best first, as a sequence of (score, signals, candidate) made when read.

``recall.score_candidates`` scores a few hundred candidates over arrays and sorts them; recall reads the first
k or so. A candidate's signals (a dict of rounded values, what a hit shows) are put together only for those.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, overload

from services.memory.search import Candidate

Item = tuple[float, dict[str, float], Candidate]


class Scored(Sequence[Item]):
    """Scored candidates best first, as (score, signals, candidate); each one's signals made when first read."""

    def __init__(self, order: list[int], scores: list[float], candidates: list[Candidate],
                 signals: Callable[[int], dict[str, float]]) -> None:
        self._order, self._scores, self._candidates, self._signals = order, scores, candidates, signals
        self._made: dict[int, Item] = {}

    def __len__(self) -> int:
        return len(self._order)

    @overload
    def __getitem__(self, index: int) -> Item: ...

    @overload
    def __getitem__(self, index: slice) -> list[Item]: ...

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        i = self._order[index]
        made = self._made.get(i)
        if made is None:
            made = self._made[i] = (self._scores[i], self._signals(i), self._candidates[i])
        return made
