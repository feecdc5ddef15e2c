"""Round-four recall signals: the turn's own shape (a turn that asks ranks below a turn that tells; a question
asking *when* / *how many* / *where* prefers the turn holding a time word / number / place:
services/memory/turnshape.py), the similarity of the conversation around a turn (context_sim_weight), and which
questions ask about a named person at large (turnshape.asks_broadly)."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import replace

import numpy as np
import pytest
from sqlalchemy.orm import Session

from services.db import make_sessionmaker
from services.memory.config import RecallConfig, load_memory_config
from services.memory.importer import pair_exchanges, parse_lines, store_records
from services.memory.recall import recall, score_candidates
from services.memory.search import Candidate
from services.memory.spans import context_signals
from services.memory.turnshape import answer_cue, asks_broadly, carries, question_share
from services.settings import PROJECT_ROOT, SettingsError
from tests.fake_embedder import HashEmbedder

NOW = dt.datetime(2025, 9, 1, tzinfo=dt.UTC)


def _turn(line_id: int, text: str) -> Candidate:
    row = {"id": line_id, "text": text}
    return Candidate(kind="exchange", id=line_id, row=row, at=NOW - dt.timedelta(days=40), sim=0.5, lex=0.5,
                     salience=None, access=0)


def _order(candidates: list[Candidate], cfg: RecallConfig, cue: str | None = None) -> list[int]:
    return [c.row["id"] for _, _, c in score_candidates(candidates, cfg, True, None, NOW, cue)]


@pytest.mark.parametrize("setting", ["question_turn_weight = 1.5", "answer_cue_weight = -0.1",
                                     "context_sim_weight = 2"])
def test_out_of_range_weights_are_refused(tmp_path, setting):
    (tmp_path / "memory.toml").write_text(f"[recall]\n{setting}\n")
    with pytest.raises(SettingsError, match=setting.split()[0]):
        load_memory_config(tmp_path)


def test_question_share_counts_asking_sentences_and_ignores_annotations():
    assert question_share("How was the event? Did you meet anyone?") == 1.0
    assert question_share("It went well. Did you go too?") == 0.5
    assert question_share("I met two investors there. [shared an image: a crowded hall?]") == 0.0
    assert question_share("") == 0.0


@pytest.mark.parametrize(("query", "cue"), [
    ("When did Jon open his studio?", "time"), ("In what year did she move?", "time"),
    ("How many dogs does Maria have?", "number"), ("How long has he been surfing?", "number"),
    ("Where did they go camping?", "place"), ("What city did he visit?", "place"),
    ("What does Jon like to paint?", None),
])
def test_the_kind_of_answer_a_question_asks_for(query, cue):
    assert answer_cue(query) == cue


def test_a_turn_carries_a_time_a_number_or_a_place():
    assert carries("time", "We adopted him last Saturday.") and not carries("time", "We adopted a puppy.")
    assert carries("number", "I have three dogs now.") and not carries("number", "I have dogs now.")
    assert carries("place", "We went camping in Yosemite.") and not carries("place", "We went camping.")
    assert not carries(None, "last Saturday in Paris, three of us")


def test_a_turn_that_asks_ranks_below_one_that_tells_as_well_matched():
    asking, telling = _turn(1, "How was the networking event? Did you meet investors?"), _turn(2, "The networking "
                                                                                                 "event was great.")
    shipped = load_memory_config(PROJECT_ROOT / "configs").recall
    assert shipped.question_turn_weight > 0
    assert _order([asking, telling], shipped) == [2, 1]
    # Without the prior the two tie and the lower id comes first: the prior is what orders them.
    assert _order([asking, telling], replace(shipped, question_turn_weight=0.0)) == [1, 2]


def test_a_when_question_prefers_the_turn_that_holds_a_time():
    vague, dated = _turn(1, "We finally adopted the puppy."), _turn(2, "We adopted the puppy last Saturday.")
    shipped = load_memory_config(PROJECT_ROOT / "configs").recall
    assert _order([vague, dated], shipped, answer_cue("When did they adopt the puppy?")) == [2, 1]
    assert _order([vague, dated], shipped, answer_cue("Which puppy did they adopt?")) == [1, 2]


@pytest.mark.parametrize("query", [
    "What books has Tim read?", "What musical instruments does Melanie play?", "How many dogs does Maria have?",
    "What are Joanna's hobbies?", "Where has Melanie camped?", "Would Caroline pursue writing as a career?",
    "What job might Maria pursue in the future?", "Is John likely to move abroad?",
])
def test_a_question_about_the_person_at_large(query):
    assert asks_broadly(query)


@pytest.mark.parametrize("query", [
    "What did Caroline research?", "When did Melanie paint a sunrise?", "Where did Jon open his studio?",
    "What is Tim's favourite book?", "Which city did John visit last May?",
])
def test_a_question_about_one_thing_the_person_did(query):
    assert not asks_broadly(query)


def _spoken(line_id: int, lex: float, speaker_sim: float | None) -> Candidate:
    candidate = _turn(line_id, "said")
    candidate.lex, candidate.row["speaker_sim"] = lex, speaker_sim
    return candidate


def _similarity(sims: list[float | None], cfg: RecallConfig) -> float | None:
    """The vector signal of the middle turn of one thread whose turns' exchanges have these similarities."""
    values = np.array([np.nan if sim is None else sim for sim in sims])
    previous = np.arange(len(sims)) - 1
    found, _ = context_signals(values, np.zeros(len(sims)), previous, np.array([len(sims) // 2]), 1.0, cfg)
    return None if np.isnan(found[0]) else float(found[0])


def test_a_turn_amid_talk_about_the_topic_is_more_similar_than_an_equal_one_in_passing():
    shipped = load_memory_config(PROJECT_ROOT / "configs").recall
    assert shipped.context_sim_weight > 0 and shipped.context_window == 2
    on_topic, in_passing = [0.5, 0.6, 0.4, 0.6, 0.5], [0.1, 0.1, 0.4, 0.1, 0.1]
    assert _similarity(on_topic, shipped) > _similarity(in_passing, shipped)
    # The mean over the window (itself and two turns either side), mixed half and half with its own.
    assert _similarity(on_topic, shipped) == pytest.approx(0.5 * 0.4 + 0.5 * 0.52)
    own_only = replace(shipped, context_sim_weight=0.0)
    assert _similarity(on_topic, own_only) == _similarity(in_passing, own_only) == 0.4
    assert _similarity([0.5, None, 0.3], shipped) is None  # no vector: no signal
    # a turn around it without a vector is not counted
    assert _similarity([0.5, 0.2, None], shipped) == pytest.approx(0.5 * 0.2 + 0.5 * 0.35)


# Through the real import and recall path: a friend keeps asking about the event in the words of the
# question; the person's own account of it shares none of them and must come first.
CONVERSATION = [
    ("Gina", "How was the networking thing downtown? Did it help?"),
    ("Jon", "Honestly I am still tired from it."),
    ("Gina", "Did you talk to anyone at the networking event? Was the event crowded?"),
    ("Jon", "It got me two investors for the dance studio."),
]


@pytest.mark.integration
def test_recall_puts_the_account_before_the_questions_about_it(db_engine):
    lines = [json.dumps({"session": "s1", "speaker": speaker, "text": body, "external_id": f"D1:{index}",
                         "timestamp": (NOW - dt.timedelta(days=10, seconds=-30 * index)).isoformat()})
             for index, (speaker, body) in enumerate(CONVERSATION, start=1)]
    parsed, bad, _ = parse_lines(lines)
    assert not bad
    store_records(make_sessionmaker(db_engine), HashEmbedder(), "turnshape-a", pair_exchanges(parsed))
    config = load_memory_config(PROJECT_ROOT / "configs")
    with Session(db_engine) as session:
        hits = recall(session, HashEmbedder(), "turnshape-a", "What came of the networking event?", k=3, now=NOW,
                      config=config, reinforce=False)
        plain = replace(config.recall, question_turn_weight=0.0)
        before = recall(session, HashEmbedder(), "turnshape-a", "What came of the networking event?", k=3, now=NOW,
                        config=plain, reinforce=False)
    # The answer comes first, with the question it answers; no hit is led by one of the friend's questions.
    assert hits[0].external_ids == ["D1:3", "D1:4"], [h.external_ids for h in hits]
    assert all(hit.signals["asks"] == 0.0 for hit in hits)
    # Without the prior, one of the friend's questions leads a hit of its own.
    assert any(question_share(hit.lines[-1]["text"]) == 1.0 for hit in before), [h.external_ids for h in before]
