"""Provenance: every recall result lists the external id of every turn it holds, in order, and an
export → import round trip keeps them; the reply's prompt gets the recalled turn with its speaker and date."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from sqlalchemy.orm import Session

from services.bundle import export_bundle, import_bundle
from services.db import make_sessionmaker
from services.memory.config import MemoryConfig, RecallConfig
from services.memory.context import assemble
from services.memory.importer import pair_exchanges, parse_lines, store_records
from services.memory.recall import recall
from services.memory.vectors import fill_all
from tests.fake_embedder import HashEmbedder

pytestmark = pytest.mark.integration

DAY1 = dt.datetime(2025, 3, 2, 18, 0, tzinfo=dt.UTC)
DAY2 = dt.datetime(2025, 4, 9, 19, 30, tzinfo=dt.UTC)
NOW = dt.datetime(2025, 5, 1, tzinfo=dt.UTC)
SPANS = MemoryConfig(recall=RecallConfig(span_replied_to="always"))
FILLER = ["How was your week?", "Busy, lots of meetings.", "Did you sleep well?", "Not really, the neighbours again.",
          "Any plans for the weekend?", "Maybe a walk by the river.", "The weather has been grey.",
          "I miss the sun honestly."]


def _conversation() -> list[str]:
    """Two sessions; in the first, Caroline speaks twice before Melanie's reply holds the answer."""
    turns = [("s1", "Caroline", "I finally visited my grandmother last week.", "c1"),
             ("s1", "Caroline", "She asked about your new hobby!", "c2"),
             ("s1", "Melanie", "Tell her I started restoring an old Vespa scooter in the garage.", "c3"),
             ("s1", "Caroline", "That sounds like a lot of grease and patience.", "c4")]
    turns += [("s2", "Caroline" if n % 2 == 0 else "Melanie", text, f"f{n}") for n, text in enumerate(FILLER)]
    lines = []
    for n, (session, speaker, text, key) in enumerate(turns):
        start = DAY1 if session == "s1" else DAY2
        lines.append(json.dumps({"session": session, "speaker": speaker, "text": text, "external_id": key,
                                 "timestamp": (start + dt.timedelta(seconds=30 * n)).isoformat()}))
    return lines


def _import(db_engine, user: str) -> None:
    lines, bad, _ = parse_lines(_conversation())
    assert not bad
    sessions = make_sessionmaker(db_engine)
    store_records(sessions, HashEmbedder(), user, pair_exchanges(lines))
    fill_all(sessions, HashEmbedder())  # the vectors follow in the background: the backfill, run to completion


def _ids_match_lines(hits) -> None:
    for hit in hits:
        assert hit.external_ids == [line["external_id"] for line in hit.lines]
        assert [line["at"] for line in hit.lines] == sorted(line["at"] for line in hit.lines)


def test_a_result_lists_every_turn_it_holds_and_a_round_trip_keeps_them(db_engine):
    _import(db_engine, "alice")
    embedder = HashEmbedder()
    with Session(db_engine) as session:
        alone = recall(session, embedder, "alice", "What old scooter is Melanie restoring?", k=5, now=NOW,
                       reinforce=False)
        assert alone[0].external_ids == ["c3"]  # the turn that answers; what it replies to holds no match
        hits = recall(session, embedder, "alice", "What old scooter is Melanie restoring?", k=5, now=NOW,
                      reinforce=False, config=SPANS)
        # The answer is Melanie's line; it replies to Caroline's second line of the same exchange.
        assert hits[0].external_ids == ["c2", "c3"]
        assert [line["speaker"] for line in hits[0].lines] == ["Caroline", "Melanie"]
        _ids_match_lines(hits)
        bundle = export_bundle(session, "alice")
    assert [line["key"] for line in bundle["exchanges"][0]["lines"]] == ["c1", "c2", "c3"]
    import_bundle(make_sessionmaker(db_engine), embedder, "carol", json.loads(json.dumps(bundle)))
    with Session(db_engine) as session:
        again = recall(session, embedder, "carol", "What old scooter is Melanie restoring?", k=5, now=NOW,
                       reinforce=False, config=SPANS)
        assert again[0].external_ids == ["c2", "c3"]
        assert again[0].lines[1]["at"] == hits[0].lines[1]["at"]
        _ids_match_lines(again)
        assert [e["lines"] for e in export_bundle(session, "carol")["exchanges"]] == [
            e["lines"] for e in bundle["exchanges"]]


def test_a_question_about_an_earlier_session_gets_the_evidence_turn_into_the_prompt(db_engine):
    _import(db_engine, "alice")
    with Session(db_engine) as session:
        context = assemble(session, HashEmbedder(), "alice", "Which scooter was Melanie restoring in her garage?",
                           now=NOW)
    assert "[2025-03-02] Melanie: Tell her I started restoring an old Vespa scooter in the garage." in context.text
    assert any(line["external_id"] == "c3" for hit in context.hits for line in hit.lines)
