"""Speaker-aware recall: a question naming a person is matched against that person's own turns
(each with its own vector, stored at import for named speakers only), by what it asks, not by the name."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import replace

import numpy as np
import pytest
from sqlalchemy import text
from sqlalchemy.orm import Session

from services.db import make_sessionmaker
from services.memory.config import MemoryConfig, RecallConfig
from services.memory.importer import pair_exchanges, parse_lines, store_records
from services.memory.recall import recall
from services.memory.speakers import SPEAKER_WORDS_SQL, name_words, the_one, without_name
from services.memory.vectors import fill_all
from tests.fake_embedder import HashEmbedder
from tests.memory_builders import create_exchange

pytestmark = pytest.mark.integration


def named_speaker(session: Session, user_id: str, query: str) -> str | None:
    """The one speaker of this user's conversations that the query names, as recall's opening statement finds it."""
    words = name_words(query)
    return the_one(session.scalar(text(f"SELECT {SPEAKER_WORDS_SQL}"), {"user": user_id, "words": words}) or [])

START = dt.datetime(2025, 3, 2, 18, 0, tzinfo=dt.UTC)
NOW = dt.datetime(2025, 9, 1, tzinfo=dt.UTC)
# Six sessions of small talk between Caroline and Melanie. Melanie tells of her pastimes in three of
# them, in words the question does not use; Caroline keeps saying Melanie's name (so the name alone,
# by its words or in a sentence vector, would rather find Caroline's turns).
SESSIONS = [
    [("Caroline", "Melanie, how was your week?"), ("Melanie", "Pottery class again."),
     ("Caroline", "Melanie, you always find time for yourself, Melanie!"), ("Melanie", "Trying to.")],
    [("Caroline", "Melanie, did the kids like the museum?"), ("Melanie", "They loved the dinosaur hall."),
     ("Caroline", "Melanie, Melanie, that is so sweet."), ("Melanie", "It was a good day.")],
    [("Caroline", "I went to a support group meeting."), ("Melanie", "How did it feel?"),
     ("Caroline", "Melanie, it felt like home, Melanie."), ("Melanie", "I am glad.")],
    [("Caroline", "Melanie, any plans for summer?"), ("Melanie", "Camping with family."),
     ("Caroline", "Melanie, the mountains, lovely, Melanie."), ("Melanie", "We go every year.")],
    [("Caroline", "My counselling course starts soon."), ("Melanie", "You will be great at it."),
     ("Caroline", "Thanks Melanie, Melanie, really."), ("Melanie", "Anytime.")],
    [("Caroline", "Melanie, what did you do on Sunday?"), ("Melanie", "Painting sunsets."),
     ("Caroline", "Melanie, a sunset, Melanie, nice."), ("Melanie", "It relaxes me.")],
]
QUESTION = "What pastimes does Melanie enjoy?"
EVIDENCE = {"D1:2", "D4:2", "D6:2"}
PASTIMES = {"pottery", "camping", "painting", "pastimes"}


class PastimeEmbedder(HashEmbedder):
    """A hash embedder that knows pottery, camping and painting are pastimes (as a real model would)."""

    def _token_vector(self, token: str) -> np.ndarray:
        return super()._token_vector("pastime" if token in PASTIMES else token)


class CountingEmbedder(PastimeEmbedder):
    """Counts the texts it embeds (an import's embedding work)."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def _encode(self, texts: list[str]) -> np.ndarray:
        self.texts += texts
        return super()._encode(texts)


@pytest.fixture
def sessions(db_engine):
    return make_sessionmaker(db_engine)


def _lines() -> list[str]:
    lines = []
    for number, turns in enumerate(SESSIONS, start=1):
        start = START + dt.timedelta(days=21 * number)
        for index, (speaker, body) in enumerate(turns, start=1):
            lines.append(json.dumps({"session": f"s{number}", "speaker": speaker, "text": body,
                                     "timestamp": (start + dt.timedelta(seconds=30 * index)).isoformat(),
                                     "external_id": f"D{number}:{index}"}))
    return lines


def _import(sessions, user: str, embedder: PastimeEmbedder | None = None) -> None:
    lines, bad, _ = parse_lines(_lines())
    assert not bad
    embedder = embedder or PastimeEmbedder()
    store_records(sessions, embedder, user, pair_exchanges(lines))
    fill_all(sessions, embedder)  # the vectors follow in the background: the backfill, run to completion


def _first_turns(hits, width: int) -> list[str]:
    return [i for hit in hits for i in hit.external_ids][:width]


def test_named_speakers_turns_get_their_own_vector_and_chat_roles_none(sessions, db_engine):
    counting = CountingEmbedder()
    _import(sessions, "speakers-a", counting)
    # Each turn is embedded once and the exchange vector is made from them: no joined text embedded on top.
    assert sorted(counting.texts) == sorted(f"{speaker}: {body}" for turns in SESSIONS for speaker, body in turns)
    with Session(db_engine) as session:
        create_exchange(session, user_id="speakers-a", user_text="hello there", reply="hi!", embedder=HashEmbedder())
        session.commit()
        counts = dict(session.execute(text(
            "SELECT lower(speaker) IN ('user', 'assistant'), count(embedding) FROM exchange_lines "
            "WHERE user_id = 'speakers-a' GROUP BY 1")).all())
    assert counts == {False: 24, True: 0}
    with Session(db_engine) as session:
        assert session.scalar(text("SELECT count(*) FROM exchanges WHERE user_id = 'speakers-a' "
                                   "AND embedding IS NULL")) == 0


def test_a_question_naming_a_person_finds_that_persons_turns_across_sessions(sessions, db_engine):
    _import(sessions, "speakers-b")
    with Session(db_engine) as session:
        hits = recall(session, PastimeEmbedder(), "speakers-b", QUESTION, k=6, now=NOW, reinforce=False)
        first = _first_turns(hits, 6)
        assert EVIDENCE <= set(first), first
        assert all("speaker" in hit.signals for hit in hits if hit.lines[-1]["speaker"] == "Melanie")
        # Without the speaker arm the name's many mentions by Caroline crowd Melanie's own turns out (many of
        # them are questions, which the question-turn prior alone would already push down: off here too).
        plain = MemoryConfig(recall=replace(RecallConfig(), speaker_weight=0.0, question_turn_weight=0.0))
        without = _first_turns(recall(session, PastimeEmbedder(), "speakers-b", QUESTION, k=6, now=NOW,
                                      config=plain, reinforce=False), 6)
    assert not EVIDENCE <= set(without), without


def test_only_a_speaker_of_this_users_conversations_counts_as_named(sessions, db_engine):
    _import(sessions, "speakers-c")
    with Session(db_engine) as session:
        assert named_speaker(session, "speakers-c", "What did Melanie's kids like?") == "melanie"
        assert named_speaker(session, "speakers-c", "What does Melanie think of Caroline?") is None  # two named
        assert named_speaker(session, "speakers-c", "What did the user say?") is None  # a role is not a name
        assert named_speaker(session, "speakers-d", "What did Melanie's kids like?") is None  # another user's
    assert without_name("What did Melanie's kids like?", "melanie") == "What did kids like?"


def test_the_speaker_weight_lifts_a_named_persons_turns(sessions, db_engine):
    """recall() gives a named person's turn speaker_weight × its similarity: the weight lifts their turns."""
    _import(sessions, "speakers-e")
    base = RecallConfig()

    def relevance(question: str, weight: float) -> dict[str, float]:
        """The relevance of each returned turn of Melanie's that is at all similar to the question."""
        config = MemoryConfig(recall=replace(base, speaker_weight=weight))
        with Session(db_engine) as session:
            hits = recall(session, PastimeEmbedder(), "speakers-e", question, k=6, now=NOW, config=config,
                          reinforce=False)
        return {hit.external_ids[-1]: hit.signals["relevance"] for hit in hits
                if hit.signals.get("speaker", 0.0) > base.sim_floor}

    broad = "What pastimes has Melanie picked up?"
    lifted, same = relevance(broad, 0.9), relevance(broad, base.speaker_weight)
    assert lifted.keys() & same.keys()
    assert all(lifted[i] > same[i] for i in lifted.keys() & same.keys())
