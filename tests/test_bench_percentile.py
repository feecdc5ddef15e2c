"""The benches' one percentile: a share outside 0..1 is refused (bench.act_planner had printed the maximum as p50)."""

from __future__ import annotations

import math

import pytest

from bench.pipeline import percentile


def test_the_median_and_the_tail_are_the_nearest_ranks() -> None:
    seconds = [4.0, 1.0, 3.0, 2.0, 100.0]
    assert percentile(seconds, 0.5) == 3.0
    assert percentile(seconds, 1.0) == 100.0
    assert math.isnan(percentile([], 0.5))


@pytest.mark.parametrize("share", [50, 95, -0.1, 1.5])
def test_a_share_outside_zero_to_one_is_an_error(share: float) -> None:
    with pytest.raises(ValueError, match="within 0..1"):
        percentile([1.0, 2.0, 3.0], share)
