"""The chaos soak's short version (bench/chaos.py): four minutes of traffic on `engram run` with seed 4's faults
(Valkey and a digest worker killed at once, the web process killed three times, the LLM cut mid-reply, the
chunker killed), then every invariant holds: one message per accepted request, one exchange row each, each due
reminder once to its owner, each confirmed list item stored once, every stream's replay whole and in order, no
job left started or failed without a reason, no role's memory grown past 15 % after warm-up."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.system import ROOT

pytestmark = [pytest.mark.e2e, pytest.mark.integration, pytest.mark.slow]


def test_four_minutes_of_faults_break_no_invariant() -> None:
    done = subprocess.run([sys.executable, "-m", "bench.chaos", "--minutes", "4", "--seed", "4"], cwd=ROOT,
                          capture_output=True, text=True, timeout=1500)
    report = done.stdout + done.stderr[-3000:]
    assert "invariant violations: 0" in done.stdout and done.returncode == 0, report
    assert "kill_redis 1" in done.stdout and "kill_role" in done.stdout, report
