"""Round-eight recall signal (bench/locomo.py): on a question about a named person at large that names no
particular thing, that person's turns in the first person are their account and score × (1 + first_person_boost)
(services/memory/firstperson.py)."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import replace

import pytest
from sqlalchemy.orm import Session

from services.db import make_sessionmaker
from services.embeddings import HashEmbedder
from services.memory.config import load_memory_config
from services.memory.firstperson import asks_at_large, factor, speaks_of_self
from services.memory.importer import pair_exchanges, parse_lines, store_records
from services.memory.recall import recall, score_candidates
from services.memory.search import Candidate
from services.settings import PROJECT_ROOT, SettingsError

NOW = dt.datetime(2025, 9, 1, tzinfo=dt.UTC)
SHIPPED = load_memory_config(PROJECT_ROOT / "configs").recall


@pytest.mark.parametrize("query", [
    "What books has Tim read?", "What activities has Melanie done with her family?", "How many pets does Nate have?",
    "Would Caroline go on a hike?", "What are Joanna's hobbies?",
])
def test_a_question_about_the_person_at_large_naming_nothing_particular(query):
    assert asks_at_large(query)


@pytest.mark.parametrize("query", [
    # One particular thing: one turn answers it.
    "What are the main ingredients of the ice cream recipe shared by Joanna?", "Would Tim enjoy the trip to Rome?",
    # Not about the person at large at all.
    "What did Tim read on his trip?", "When did Gina open her store?",
])
def test_a_question_about_one_thing(query):
    assert not asks_at_large(query)


@pytest.mark.parametrize(("text", "own"), [
    ("I finished Dune last week.", True), ("We went camping with the kids!", True), ("I'm so proud.", True),
    ("Took my dog out.", True), ("You're doing something amazing, Gina!", False),
    ("Your store looks great. [shared an image: a photo of me and my shop]", False),  # the caption is not said
])
def test_a_turn_speaks_of_its_speaker(text, own):
    assert speaks_of_self(text) is own


def _said(line_id: int, speaker: str, text: str, lex: float) -> Candidate:
    row = {"id": line_id, "speaker": speaker, "text": text, "speaker_sim": 0.5 if speaker == "Tim" else None}
    return Candidate(kind="exchange", id=line_id, row=row, at=NOW - dt.timedelta(days=40), sim=0.5, lex=lex,
                     salience=None, access=0)


def test_the_persons_own_account_comes_before_their_better_worded_words_to_the_other():
    """"What books has Tim read?": Tim praising Gina's books shares more of the question's words than Tim telling
    what he read; asked about Tim at large, his account comes first. Gina's first-person turn gains nothing."""
    assert SHIPPED.first_person_boost > 0
    to_her = _said(1, "Tim", "Your books are always a great read, Gina!", 0.55)
    his_own = _said(2, "Tim", "I finished Dune on the trip.", 0.35)
    hers = _said(3, "Gina", "I read a lot of books.", 0.2)

    def order(person: str | None) -> list[int]:
        scored = score_candidates([to_her, his_own, hers], SHIPPED, True, None, NOW, None,
                                  SHIPPED.speaker_weight_broad, person)
        return [c.row["id"] for _, _, c in scored]

    assert order(None) == [1, 2, 3]
    assert order("tim") == [2, 1, 3]
    assert factor(hers.row, "tim", SHIPPED.first_person_boost) == 1.0
    assert factor(his_own.row, "tim", 0.0) == 1.0


def test_a_negative_first_person_boost_is_refused(tmp_path):
    (tmp_path / "memory.toml").write_text("[recall]\nfirst_person_boost = -0.3\n")
    with pytest.raises(SettingsError, match="first_person_boost"):
        load_memory_config(tmp_path)


# Through the real import and recall path: Tim cheers Gina's reading in the question's words; his own account
# of what he read holds fewer of them.
CONVERSATION = [
    ("Gina", "I read three books this month for my club!"),
    ("Tim", "Your club reads such good books, Gina, what a great read list!"),
    ("Gina", "Thanks! What about you?"),
    ("Tim", "I finished reading Dune on the train, books like it keep me going."),
]


def _import(db_engine, user: str) -> None:
    lines = [json.dumps({"session": "s1", "speaker": speaker, "text": body, "external_id": f"D1:{index}",
                         "timestamp": (NOW - dt.timedelta(days=10, seconds=-30 * index)).isoformat()})
             for index, (speaker, body) in enumerate(CONVERSATION, start=1)]
    parsed, bad, _ = parse_lines(lines)
    assert not bad
    store_records(make_sessionmaker(db_engine), HashEmbedder(), user, pair_exchanges(parsed))


@pytest.mark.integration
def test_recall_asked_about_the_person_at_large_puts_their_account_first(db_engine):
    _import(db_engine, "firstperson-a")
    config = load_memory_config(PROJECT_ROOT / "configs")
    off = replace(config.recall, first_person_boost=0.0)
    with Session(db_engine) as session:
        def ask(query: str, cfg=config) -> list[str]:
            hits = recall(session, HashEmbedder(), "firstperson-a", query, k=4, now=NOW, config=cfg,
                          reinforce=False)
            return [hit.external_ids[-1] for hit in hits if hit.lines[-1]["speaker"] == "Tim"]

        at_large, plain = ask("What books has Tim read?"), ask("What books has Tim read?", off)
        particular = "Which books has Tim read on the train?"  # "the train": one occasion, left alone
        assert (ask(particular), ask(particular, off)) == (plain, plain)
    # His account comes first; without the boost, his words to Gina lead on the question's words.
    assert (at_large, plain) == (["D1:4", "D1:2"], ["D1:2", "D1:4"])
