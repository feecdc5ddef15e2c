"""Round-six recall signals (bench/locomo.py): a question about the past does not prefer what was said lately
(past_recency_weight, turnshape.asks_about_past), and a turn that matches on its own is returned without the
turn it replies to, so its slot goes to the next answer (span_replied_to "unmatched")."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import replace
from typing import Any

import pytest
from sqlalchemy.orm import Session

from services.db import make_sessionmaker
from services.embeddings import HashEmbedder
from services.memory.config import load_memory_config
from services.memory.importer import pair_exchanges, parse_lines, store_records
from services.memory.recall import _for_question, recall, score_candidates
from services.memory.search import Candidate
from services.memory.spans import SpanPicker
from services.memory.turnshape import asks_about_past
from services.settings import PROJECT_ROOT, SettingsError

NOW = dt.datetime(2025, 9, 1, tzinfo=dt.UTC)
SHIPPED = load_memory_config(PROJECT_ROOT / "configs").recall


@pytest.mark.parametrize("query", [
    "What did Tim read on his trip?", "When was Melanie's pottery class?", "Where were they camping?",
    "Had Jon opened the studio by then?", "Did Caroline go to the support group?",
])
def test_a_question_about_what_was(query):
    assert asks_about_past(query)


@pytest.mark.parametrize("query", [
    "What is Tim reading?", "Where does Jon's studio stand?", "How many dogs has Maria?", "Is the dentist booked?",
])
def test_a_question_about_what_is(query):
    assert not asks_about_past(query)


def _said(line_id: int, lex: float, days_ago: float) -> Candidate:
    row = {"id": line_id, "text": "said"}
    return Candidate(kind="exchange", id=line_id, row=row, at=NOW - dt.timedelta(days=days_ago), sim=0.5, lex=lex,
                     salience=None, access=0)


def _order(query: str) -> list[int]:
    """The old turn that names the book and a recent one that only mentions reading, ranked for ``query``."""
    named_it, in_passing = _said(1, 0.50, 300), _said(2, 0.46, 1)
    cfg = _for_question(SHIPPED, query)
    return [c.row["id"] for _, _, c in score_candidates([named_it, in_passing], cfg, True, None, NOW)]


def test_a_past_question_ranks_the_better_answer_above_a_recent_weaker_one():
    """"What did Tim read last spring?": the turn from months ago naming the book comes first; a present
    question ("What is Tim reading?") still lets the recent turn win by its recency."""
    assert SHIPPED.recency_weight > SHIPPED.past_recency_weight == 0.0
    assert _order("What did Tim read last spring?") == [1, 2]
    assert _order("What is Tim reading these days?") == [2, 1]


def test_a_negative_past_recency_weight_is_refused(tmp_path):
    (tmp_path / "memory.toml").write_text("[recall]\npast_recency_weight = -0.1\n")
    with pytest.raises(SettingsError, match="past_recency_weight"):
        load_memory_config(tmp_path)


def _row(line_id: int, text: str, lex: float, replied: tuple[int, str, float] | None) -> dict[str, Any]:
    row = {"id": line_id, "exchange_id": line_id, "speaker": "Jon", "text": text, "external_id": f"D1:{line_id}",
           "occurred_at": NOW, "lex": lex, "p_id": None}
    if replied is not None:
        p_id, p_text, p_lex = replied
        row.update(p_id=p_id, p_exchange_id=p_id, p_speaker="Gina", p_text=p_text, p_external_id=f"D1:{p_id}",
                   p_occurred_at=NOW, p_lex=p_lex)
    return row


def _spans(mode: str) -> list[list[str]]:
    """"What did Jon get from the networking event?": hits, best first, as the turns each one lists."""
    rows = [
        # Holds some of the question's words itself (its prompt holds more): a whole answer all the same.
        _row(2, "The event got me two investors.", 0.4, (1, "How was the networking event?", 1.0)),
        # Holds none of them: only its prompt says what "it" is.
        _row(4, "Yes, and a mentor too!", 0.0, (3, "Anything else from the networking event?", 0.9)),
    ]
    picker = SpanPicker(None, "jon", replace(SHIPPED, span_replied_to=mode), set(), [], limit=10)  # type: ignore[arg-type]
    return [[line["external_id"] for line in picker.take(Candidate("exchange", r["id"], r, NOW, 0.5, 0.5, None, 0))]
            for r in rows]


def test_a_turn_that_matches_on_its_own_comes_without_its_prompt():
    assert SHIPPED.span_replied_to == "unmatched"
    # Three turns carry both answers; "matching" spends a fourth on the first answer's prompt.
    assert _spans("unmatched") == [["D1:2"], ["D1:3", "D1:4"]]
    assert _spans("matching") == [["D1:1", "D1:2"], ["D1:3", "D1:4"]]


def test_an_unknown_span_mode_is_refused(tmp_path):
    (tmp_path / "memory.toml").write_text('[recall]\nspan_replied_to = "sometimes"\n')
    with pytest.raises(SettingsError, match="unmatched"):
        load_memory_config(tmp_path)


def _told_twice(db_engine: Any, user: str) -> None:
    """The same short exchange in two sessions, 300 days and 1 day before NOW: only their age differs."""
    lines = []
    for session, days in (("s-old", 300), ("s-new", 1)):
        for index, (speaker, body) in enumerate([("Gina", "Any good books lately?"),
                                                 ("Tim", "I finished reading Dune.")], start=1):
            lines.append(json.dumps({"session": session, "speaker": speaker, "text": body,
                                     "external_id": f"{session}:{index}",
                                     "timestamp": (NOW - dt.timedelta(days=days, seconds=-30 * index)).isoformat()}))
    parsed, bad, _ = parse_lines(lines)
    assert not bad
    store_records(make_sessionmaker(db_engine), HashEmbedder(), user, pair_exchanges(parsed))


@pytest.mark.integration
def test_recall_asked_about_the_past_does_not_prefer_the_recent_telling(db_engine):
    _told_twice(db_engine, "recency-past")
    config = load_memory_config(PROJECT_ROOT / "configs")
    with Session(db_engine) as session:
        def ask(query: str) -> list[tuple[str, float]]:
            hits = recall(session, HashEmbedder(), "recency-past", query, k=4, now=NOW, config=config,
                          reinforce=False)
            return [(hit.external_ids[-1], hit.score) for hit in hits if hit.external_ids[-1].endswith(":2")]

        past, present = ask("Which book did Tim finish reading?"), ask("Which book is Tim reading?")
    # Asked what was, the two tellings score alike; asked what is, the recent one leads on its recency.
    assert [i for i, _ in past] == ["s-old:2", "s-new:2"] and past[0][1] == past[1][1], past
    assert [i for i, _ in present] == ["s-new:2", "s-old:2"] and present[0][1] > present[1][1], present
