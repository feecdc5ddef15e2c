"""Round-eight recall signals (bench/recall/locomo.py; services/memory/focus.py): on a question about a named person at
large that names no particular thing, that person's turns in the first person are their account and score
× (1 + first_person_boost); on a question naming both speakers, its grammatical subject's turns score
× (1 + subject_boost)."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import replace

import pytest
from sqlalchemy.orm import Session

from services.db import make_sessionmaker
from services.memory.config import load_memory_config
from services.memory.focus import Focus, asks_at_large, factor, of_question, speaks_of_self, subject_of
from services.memory.importer import pair_exchanges, parse_lines, store_records
from services.memory.recall import recall, score_candidates
from services.memory.search import Candidate
from services.settings import PROJECT_ROOT, SettingsError
from tests.fake_embedder import HashEmbedder

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

    def order(query: str) -> list[int]:
        asked_about = of_question(query, "tim", True, SHIPPED)
        scored = score_candidates([to_her, his_own, hers], SHIPPED, True, None, NOW, None,
                                  SHIPPED.speaker_weight, asked_about)
        return [c.row["id"] for _, _, c in scored]

    assert order("What books has Tim read?") == [2, 1, 3]
    assert order("Which books has Tim read on the trip?") == [1, 2, 3]  # one particular trip: no focus
    assert factor(hers.speaker(), hers.turn_text(), Focus("tim", SHIPPED.first_person_boost, True)) == 1.0
    assert of_question("What books has Tim read?", "tim", True, replace(SHIPPED, first_person_boost=0.0)) is None


def test_the_persons_account_weighs_more_and_a_subjects_turns_weigh_alike():
    """"What activities has Melanie done with her family?": her first-person turns are her account; a question
    naming both speakers weighs all of its subject's turns alike."""
    at_large = of_question("What activities has Melanie done with her family?", "melanie", True, SHIPPED)
    event = ("Melanie", "Yesterday I took the kids to the museum!")
    opinion = ("Melanie", "I think family comes first.")
    about_her = ("Melanie", "You are so kind to her.")
    assert factor(*opinion, at_large) == factor(*event, at_large) == pytest.approx(1 + SHIPPED.first_person_boost)
    assert factor(*about_her, at_large) == 1.0
    subject = of_question("What did Melanie tell Caroline about her family?", None, False, SHIPPED)
    assert factor(*event, subject) == factor(*opinion, subject) == pytest.approx(1 + SHIPPED.subject_boost)


@pytest.mark.parametrize(("query", "subject"), [
    ("What did Jon say about Gina's progress with her store?", "jon"),
    ("What advice does Gina give to Jon about running a business?", "gina"),
    ("How does Gina describe the studio that Jon has opened?", "gina"),  # "has opened": no name
    ("What book did Melanie read from Caroline's suggestion?", "melanie"),
    ("Did Jon and Gina both take part in dance competitions?", None),  # both of them
    ("What did Jon's mom say to Gina?", None),  # Jon's mom speaks, not Jon
    ("What did I tell Gina?", None), ("What is the capital of France?", None),
])
def test_the_subject_of_a_question(query, subject):
    assert subject_of(query) == subject


def test_a_question_naming_both_speakers_puts_its_subjects_words_first():
    """"What did Jon say about Gina's store?" names both: Gina's turn holds more of its words, but Jon is who
    speaks, and his turn comes first. Naming one speaker, the question gets no subject focus (it has the speaker
    signal instead)."""
    assert SHIPPED.subject_boost > 0
    hers = _said(1, "Gina", "My store is doing great, Jon!", 0.55)
    his = _said(2, "Jon", "Way to go, your hard work's paying off!", 0.45)
    query = "What did Jon say about Gina's store?"

    def order(asked_about: Focus | None) -> list[int]:
        return [c.row["id"] for _, _, c in score_candidates([hers, his], SHIPPED, True, None, NOW, None, None,
                                                              asked_about)]

    assert of_question(query, None, False, SHIPPED) == Focus("jon", SHIPPED.subject_boost, False)
    assert order(None) == [1, 2]
    assert order(of_question(query, None, False, SHIPPED)) == [2, 1]
    assert of_question("What did Jon say about the store?", "jon", False, SHIPPED) is None


@pytest.mark.parametrize("setting", ["first_person_boost", "subject_boost"])
def test_a_negative_boost_is_refused(tmp_path, setting):
    (tmp_path / "memory.toml").write_text(f"[recall]\n{setting} = -0.3\n")
    with pytest.raises(SettingsError, match=setting):
        load_memory_config(tmp_path)


# Through the real import and recall path: Tim cheers Gina's reading in the question's words; his own account
# of what he read holds fewer of them.
CONVERSATION = [
    ("Gina", "I read three books this month for my club!"),
    ("Tim", "Your club reads such good books, Gina, what a great read list!"),
    ("Gina", "Thanks! What about you?"),
    ("Tim", "I finished reading Dune on the train, books like it keep me going."),
]


def _import(db_engine, user: str, conversation: list[tuple[str, str]] = CONVERSATION) -> None:
    lines = [json.dumps({"session": "s1", "speaker": speaker, "text": body, "external_id": f"D1:{index}",
                         "timestamp": (NOW - dt.timedelta(days=10, seconds=-30 * index)).isoformat()})
             for index, (speaker, body) in enumerate(conversation, start=1)]
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


STORE_TALK = [
    ("Gina", "My store had its best week, the new store window works!"),
    ("Jon", "Way to go Gina, all that hard work is paying off!"),
]


@pytest.mark.integration
def test_recall_asked_what_one_speaker_said_to_the_other_puts_the_speakers_turn_first(db_engine):
    _import(db_engine, "focus-b", STORE_TALK)
    config = load_memory_config(PROJECT_ROOT / "configs")
    off = replace(config.recall, subject_boost=0.0)
    with Session(db_engine) as session:
        def ask(cfg) -> list[str]:
            hits = recall(session, HashEmbedder(), "focus-b", "What did Jon say about Gina's store?", k=4, now=NOW,
                          config=cfg, reinforce=False)
            return [line["external_id"] for hit in hits for line in hit.lines]

        asked, plain = ask(config), ask(off)
    # Jon's words come first; without the subject's boost, Gina's turn leads on the question's words.
    assert (asked, plain) == (["D1:2", "D1:1"], ["D1:1", "D1:2"])
