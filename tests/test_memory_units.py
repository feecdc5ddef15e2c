"""Pure units of memory: time expressions, config validation, fusion arithmetic."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest

from services.db import vector_text
from services.memory.config import RecallConfig, load_memory_config
from services.memory.scoring import fused
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
    assert load_memory_config(PROJECT_ROOT / "configs").recall.span_replied_to == "unmatched"
    (tmp_path / "memory.toml").write_text("[recall]\nspan_replied_to = 'magic'\n")
    with pytest.raises(SettingsError, match="span_replied_to"):
        load_memory_config(tmp_path)
    (tmp_path / "memory.toml").write_text("[recall]\nrecency_weigth = 0.1\n")
    with pytest.raises(SettingsError, match="unknown key"):
        load_memory_config(tmp_path)
    (tmp_path / "memory.toml").write_text("[recall]\nspeaker_weight = -0.3\n")
    with pytest.raises(SettingsError, match="speaker_weight"):
        load_memory_config(tmp_path)


def _candidate(sim: float, lex: float) -> Candidate:
    return Candidate(kind="exchange", id=1, row={}, at=NOW, sim=sim, lex=lex, salience=None, access=0)


def test_fusion_ranks_a_strong_match_first_and_stays_in_unit_range():
    candidates = [_candidate(0.8, 1.0), _candidate(0.5, 0.0), _candidate(0.2, 0.3)]
    scores = list(fused(candidates, RecallConfig(), has_vector=True))
    assert scores[0] == max(scores) and all(0 <= s <= 1 for s in scores)
    assert scores == pytest.approx([0.5 * 1.0 + 0.5 * 1.0, 0.5 * 0.35 / 0.6, 0.5 * 0.05 / 0.6 + 0.5 * 0.3])
    assert list(fused(candidates, RecallConfig(), has_vector=False)) == [1.0, 0.0, 0.3]


def test_cli_registers_the_four_memory_commands():
    import argparse

    from cli.memory import cmd_forget, cmd_import, cmd_recall, register

    parser = argparse.ArgumentParser(prog="engram")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["recall", "where is Biscuit", "--user", "u1", "--k", "5", "--json"])
    assert (args.handler, args.query, args.user, args.k, args.json) == (cmd_recall, "where is Biscuit", "u1", 5, True)
    assert parser.parse_args(["import", "f.jsonl", "--user", "u1", "--no-enrich"]).handler is cmd_import
    assert parser.parse_args(["forget", "--user", "u1", "--yes"]).handler is cmd_forget


@pytest.mark.parametrize("query", ["what did I do 3000 years ago", "101 years ago", "99999999999999999999 days ago"])
def test_spans_beyond_a_century_are_no_window(query):
    assert time_window(query, NOW) is None  # and no OverflowError on the chat path


def test_a_span_within_a_century_is_still_a_window():
    start, end = time_window("what did I do 2 years ago", NOW)
    assert start < NOW - dt.timedelta(days=730) < end


def test_memory_jobs_outlast_their_llm_calls():
    from services.llm.roles import load_role_configs
    from services.queues import MEMORY_JOB_TIMEOUT_S, memory_job_options

    roles = load_role_configs(PROJECT_ROOT / "configs")
    # complete_json retries once and the shape check asks once more: 4 calls of the role at most.
    slowest = max(roles[role].timeout_s for role in ("memory_chunker", "episodic_memory"))
    assert MEMORY_JOB_TIMEOUT_S > 4 * slowest
    assert memory_job_options()["job_timeout"] == MEMORY_JOB_TIMEOUT_S


def test_every_memory_enqueue_site_uses_the_memory_job_options_and_names_the_owner():
    from types import SimpleNamespace

    import fakeredis
    from rq import Queue

    from services.jobs import enqueue_jobs
    from services.memory.edits import enqueue_embedding
    from services.queues import (
        CHUNKER_JOB,
        EMBED_JOB,
        EPISODE_JOB,
        EPISODIC_QUEUE,
        MEMORY_CHUNKER_QUEUE,
        MEMORY_JOB_TIMEOUT_S,
        job_owner,
    )
    from services.sessions import enqueue_episode
    from workers.digest import enqueue_enrichment

    connection = fakeredis.FakeRedis()
    enqueue_enrichment(SimpleNamespace(redis=connection), 7, "ann")
    enqueue_embedding(connection, "fact", 8, "ann")
    enqueue_jobs(connection, MEMORY_CHUNKER_QUEUE, CHUNKER_JOB, [(9, "chunk-9")], "ann")
    enqueue_episode(connection, "s-1", [7], "ann")
    episode = Queue(EPISODIC_QUEUE, connection=connection).fetch_job("episode-s-1")
    # The episode waits (deferred, not queued) for the chunker job of exchange 7, queued above.
    assert episode is not None and episode.get_status() == "deferred" and episode.meta["exchange_ids"] == [7]
    jobs = [*Queue(MEMORY_CHUNKER_QUEUE, connection=connection).get_jobs(), episode]
    assert sorted(job.func_name for job in jobs) == sorted([CHUNKER_JOB, EMBED_JOB, CHUNKER_JOB, EPISODE_JOB])
    assert {job.timeout for job in jobs} == {MEMORY_JOB_TIMEOUT_S}
    # The owner decides who may see and retry the job on the ops page.
    assert [job_owner(job.meta) for job in jobs] == ["ann"] * 4


def test_a_bundle_of_another_version_or_shape_is_refused_by_name():
    from services.bundle import FORMAT, VERSION, BundleInvalid, validate_bundle

    good = {"format": FORMAT, "version": VERSION, "exchanges": [{"key": "k1", "occurred_at": "2026-01-02T03:04:05"}],
            "facts": [{"key": "f1", "text": "I like tea", "confidence": 1.0, "salience": 0.5}]}
    validate_bundle(good)
    for bad, message in [
        ({**good, "version": 2}, "unsupported bundle version 2"),
        ({**good, "facts": [{"key": "f1", "text": "I like tea"}]}, "facts[0] lacks 'confidence', 'salience'"),
        ({**good, "exchanges": {"key": "k1"}}, "'exchanges' must be a list"),
        ({**good, "exchanges": [{"key": "k1", "occurred_at": "last Tuesday"}]}, "exchanges[0].occurred_at"),
        ({**good, "episodes": ["x"]}, "episodes[0] must be an object"),
    ]:
        with pytest.raises(BundleInvalid, match=message.replace("[", r"\[").replace("]", r"\]")):
            validate_bundle(bad)


def test_a_vector_sent_to_postgresql_parses_back_to_the_same_float32_values():
    """The text a vector is sent as (recall's query vector; the importer's, the backfill's and the vocabulary's stored
    vectors) must give PostgreSQL the very floats the model made (recall's similarities and hits depend on every
    bit): each value read back with strtof's rounding, as float32, whether it came as float32, float64 or a list."""
    rng = np.random.default_rng(9)
    vectors = [rng.standard_normal(384).astype(np.float32) for _ in range(50)]
    vectors.append(np.array([0.0, -0.0, 1.0, -1.0, 1e-38, -3.4e38, 1.17549435e-38, 0.1, 1 / 3] + [0.5] * 375,
                            dtype=np.float32))
    vectors += [rng.standard_normal(384) * 10.0 ** exponent for exponent in (-40, -8, 0, 9, 30)]
    vectors += [[0.1, -0.0, 1, 3.4e38, 1e-45], np.zeros(0)]
    for vector in vectors:
        text = vector_text(vector)
        assert text.startswith("[") and text.endswith("]")
        parsed = np.array([np.float32(value) for value in text[1:-1].split(",") if value], dtype=np.float32)
        assert parsed.tobytes() == np.asarray(vector, dtype=np.float32).tobytes()
    assert vector_text(None) is None


@pytest.mark.parametrize(("said", "meant"), [
    ("We went camping yesterday!", "We went camping yesterday (19 October 2023)!"),
    ("I'm going to a conference this month.", "I'm going to a conference this month (October 2023)."),
    ("I won a tournament two weeks ago", "I won a tournament two weeks ago (2 weeks before 20 October 2023)"),
    ("the road trip last weekend", "the road trip last weekend (the weekend before 20 October 2023)"),
    ("I painted it 3 days ago, last Friday",
     "I painted it 3 days ago (17 October 2023), last Friday (13 October 2023)"),
    ("We move next month", "We move next month (November 2023)"),
    ("I started last year (2022)", "I started last year (2022)"),  # already dated: left alone
    ("I love my weekends", "I love my weekends"),
])
def test_a_recalled_lines_relative_time_words_get_the_date_they_meant(said, meant):
    from services.memory.timewords import anchored

    assert anchored(said, dt.datetime(2023, 10, 20, 15, 0, tzinfo=dt.UTC)) == meant  # a Friday
    assert anchored(said, None) == said


@pytest.mark.parametrize(("said", "meant"), [
    ("Mum's birthday 14.3, she turns 70", "Mum's birthday 14.3 (14 March), she turns 70"),
    ("I was born 2.11.1971 in Brno", "I was born 2.11.1971 (2 November 1971) in Brno"),
    ("the visa is due on 30.6", "the visa is due on 30.6 (30 June)"),
    ("my long run on 21.1 km went fine", "my long run on 21.1 km went fine"),  # a distance
    ("we are on 4.32 now", "we are on 4.32 now"),  # no month 32
])
def test_a_date_written_day_dot_month_gets_its_months_name(said, meant):
    """A small model read "birthday 22.9" as 22 November; a month named cannot be misread."""
    from services.memory.timewords import anchored

    assert anchored(said, None) == meant


def test_a_day_is_written_as_people_write_it():
    from services.memory.timewords import spoken_day

    assert spoken_day(dt.date(2023, 5, 7)) == "7 May 2023"
