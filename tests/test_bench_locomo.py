"""``bench.recall locomo``'s data path: LoCoMo's conversations read as import lines, their questions' evidence
cleaned, the bench skipping cleanly without the data, evidence counted only within each width, and a small conversation
imported through the real import path with its evidence turn recalled."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from bench.recall.locomo import Tally, main
from bench.recall.locomo_data import Question, conversation_lines, find_data, load, questions_of
from services.db import make_sessionmaker
from services.memory.importer import parse_lines
from services.memory.recall import recall
from tests.fake_embedder import HashEmbedder

CONVERSATION = {
    "speaker_a": "Caroline", "speaker_b": "Melanie",
    "session_1_date_time": "1:56 pm on 8 May, 2023",
    "session_1": [
        {"speaker": "Caroline", "dia_id": "D1:1", "text": "Hey Mel! I went to a support group yesterday."},
        {"speaker": "Melanie", "dia_id": "D1:2", "text": "  ", "blip_caption": "a photo of a lake"},
        {"speaker": "Melanie", "dia_id": "D1:3", "text": "   "},
        {"speaker": "Melanie", "dia_id": "D1:4", "text": "That's great, Caroline!"},
    ],
    "session_2_date_time": "10:37 am on 27 June, 2023",
    "session_2": [
        {"speaker": "Melanie", "dia_id": "D2:1", "text": "I painted a sunrise over the lake last week."},
        {"speaker": "Caroline", "dia_id": "D2:2", "text": "Beautiful colours."},
    ],
}


def test_a_conversation_becomes_the_import_lines_in_order_with_its_ids_and_captions():
    lines = [json.loads(line) for line in conversation_lines(CONVERSATION)]
    # An empty turn is left out; an image with no words is told by its caption.
    assert [line["external_id"] for line in lines] == ["D1:1", "D1:2", "D1:4", "D2:1", "D2:2"]
    assert lines[1]["text"] == "[shared an image: a photo of a lake]"
    assert [line["session"] for line in lines] == ["session_1"] * 3 + ["session_2"] * 2
    times = [dt.datetime.fromisoformat(line["timestamp"]) for line in lines]
    assert times[0] == dt.datetime(2023, 5, 8, 13, 56, tzinfo=dt.UTC)
    assert times == sorted(times) and times[3] == dt.datetime(2023, 6, 27, 10, 37, tzinfo=dt.UTC)
    parsed, bad, _ = parse_lines(conversation_lines(CONVERSATION))
    assert not bad and len(parsed) == 5  # the importer takes every line


def test_a_questions_evidence_keeps_the_ids_of_stored_turns_only():
    data = {"qa": [
        {"question": "What did Melanie paint?", "category": 4, "evidence": ["D2:1; D9:17"]},
        {"question": "Where?", "category": 1, "evidence": ["D8:6"]},  # no stored turn: no question
        {"question": "Why?", "category": 3, "evidence": []},
    ]}
    end = dt.datetime(2023, 7, 1, tzinfo=dt.UTC)
    found = questions_of("locomo-x", data, {"D1:1", "D2:1"}, end)
    assert [(q.text, q.category, q.evidence) for q in found] == [("What did Melanie paint?", 4, {"D2:1"})]


def test_the_bench_skips_cleanly_without_the_data(tmp_path, capsys):
    assert find_data(str(tmp_path)) is None
    main(["--data", str(tmp_path)])  # returns: exit status 0
    assert "no LoCoMo data found" in capsys.readouterr().out
    (tmp_path / "conv-1.json").write_text("{}", encoding="utf-8")
    assert find_data(str(tmp_path)) == tmp_path


def test_evidence_counts_only_within_each_width():
    question = Question("u", "q", 1, {"a", "b"}, dt.datetime(2024, 1, 1, tzinfo=dt.UTC))
    tally = Tally("t")
    # "a" is the 3rd turn, "b" the 12th: a wider result cannot buy recall at a narrower width.
    ranked = [["x", "y"], ["a"]] + [[f"n{i}"] for i in range(8)] + [["z", "b"]]
    tally.add(question, ranked)
    assert [tally.by_width[w][0] for w in (5, 10, 20)] == [0.5, 0.5, 1.0]
    assert tally.by_category[1] == [1.0] and tally.turns == [13] and tally.results == [11]


@pytest.mark.usefixtures("db_engine")
def test_a_conversation_imported_as_the_bench_does_recalls_its_evidence_turn(db_engine, tmp_path):
    data = {"conversation": CONVERSATION, "qa": [
        {"question": "What did Melanie paint over the lake?", "category": 4, "evidence": ["D2:1"]}]}
    (tmp_path / "conv-9.json").write_text(json.dumps(data), encoding="utf-8")
    sessions = make_sessionmaker(db_engine)
    embedder = HashEmbedder()
    questions, rate, _ = load(sessions, embedder, tmp_path)
    assert rate > 0 and [q.evidence for q in questions] == [{"D2:1"}]
    question = questions[0]
    assert question.user == "locomo-conv-9" and question.now > dt.datetime(2023, 6, 27, tzinfo=dt.UTC)
    with sessions() as session:
        hits = recall(session, embedder, question.user, question.text, k=3, now=question.now, reinforce=False)
    first_turns = [line["external_id"] for hit in hits for line in hit.lines][:2]
    assert "D2:1" in first_turns
