"""Pure units of memory: time expressions, config validation, fusion arithmetic."""

from __future__ import annotations

import datetime as dt

import pytest

from services.memory.config import RecallConfig, load_memory_config
from services.memory.recall import fuse
from services.memory.search import Candidate
from services.memory.timewords import time_window
from services.settings import PROJECT_ROOT, SettingsError

NOW = dt.datetime(2026, 11, 21, 12, 0, tzinfo=dt.UTC)


def utc(*parts: int) -> dt.datetime:
    return dt.datetime(*parts, tzinfo=dt.UTC)


@pytest.mark.parametrize(("query", "window"), [
    ("What did I do last May?", (utc(2026, 5, 1), utc(2026, 6, 1))),
    ("the trip in March 2024", (utc(2024, 3, 1), utc(2024, 4, 1))),
    ("what happened last December", (utc(2025, 12, 1), utc(2026, 1, 1))),
    ("back in 2023", (utc(2023, 1, 1), utc(2024, 1, 1))),
    ("yesterday's call", (utc(2026, 11, 20), utc(2026, 11, 21))),
    ("last month", (utc(2026, 10, 1), utc(2026, 11, 1))),
    ("on 2025-03-04", (utc(2025, 3, 4), utc(2025, 3, 5))),
])
def test_time_expressions_become_windows(query, window):
    assert time_window(query, NOW) == window


@pytest.mark.parametrize("query", ["I may go swimming", "Where is my dog?", "mar the surface"])
def test_ordinary_words_are_not_dates(query):
    assert time_window(query, NOW) is None


def test_two_weeks_ago_is_a_window_around_the_point():
    start, end = time_window("what did we say two weeks ago", NOW)
    assert start < NOW - dt.timedelta(days=14) < end


def test_the_shipped_config_loads_and_bad_values_are_refused(tmp_path):
    assert load_memory_config(PROJECT_ROOT / "configs").recall.fusion in ("absolute", "minmax", "rrf")
    (tmp_path / "memory.toml").write_text("[recall]\nfusion = 'magic'\n")
    with pytest.raises(SettingsError, match="fusion"):
        load_memory_config(tmp_path)
    (tmp_path / "memory.toml").write_text("[recall]\nrecency_weigth = 0.1\n")
    with pytest.raises(SettingsError, match="unknown key"):
        load_memory_config(tmp_path)


def _candidate(sim: float, lex: float) -> Candidate:
    return Candidate(kind="exchange", id=1, row={}, at=NOW, sim=sim, lex=lex, salience=None, access=0)


def test_fusion_methods_rank_a_strong_match_first_and_stay_in_unit_range():
    candidates = [_candidate(0.8, 1.0), _candidate(0.5, 0.0), _candidate(0.2, 0.3)]
    for fusion in ("absolute", "minmax", "rrf"):
        scores = fuse(candidates, RecallConfig(fusion=fusion), has_vector=True)
        assert scores[0] == max(scores) and all(0 <= s <= 1 for s in scores), fusion
    assert fuse(candidates, RecallConfig(), has_vector=False) == [1.0, 0.0, 0.3]


def test_cli_registers_the_four_memory_commands():
    import argparse

    from cli.memory import cmd_forget, cmd_import, cmd_recall, register

    parser = argparse.ArgumentParser(prog="engram")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["recall", "where is Biscuit", "--user", "u1", "--k", "5", "--json"])
    assert (args.handler, args.query, args.user, args.k, args.json) == (cmd_recall, "where is Biscuit", "u1", 5, True)
    assert parser.parse_args(["import", "f.jsonl", "--user", "u1", "--no-enrich"]).handler is cmd_import
    assert parser.parse_args(["forget", "--user", "u1", "--yes"]).handler is cmd_forget
