"""A question naming a speaker the process has not seen named yet (no guess): recall embeds the query alone ahead,
learns the name from its opening statement, and embeds the query without the name beside the query's own
embedding, each text once (not the query again in a batch after its first embedding), with the hits it gives
when the query's vector is given."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from sqlalchemy.orm import Session

from services.db import make_sessionmaker
from services.memory import speakers
from services.memory.recall import recall
from services.memory.speakers import SpeakerGuesses, without_name
from tests.test_memory_speakers import NOW, QUESTION, PastimeEmbedder, _import

pytestmark = pytest.mark.integration


class OverlapEmbedder(PastimeEmbedder):
    """Counts the texts it embeds; its first call (the query alone) holds on until a second call has begun, so a
    recall that waits for the first before starting the second never gets an answer from it within 5 s."""

    def __init__(self) -> None:
        super().__init__(cache_size=0)
        self.texts: list[str] = []
        self.second_began = threading.Event()
        self.overlapped: list[bool] = []

    def _encode(self, texts: list[str]) -> np.ndarray:
        self.texts += texts
        if len(self.texts) == len(texts):  # the first call
            self.overlapped.append(self.second_began.wait(5))
        else:
            self.second_began.set()
        return super()._encode(texts)


def _hits(session: Session, embedder, query: str, vector: np.ndarray | None = None):  # type: ignore[no-untyped-def]
    return [hit.to_dict() for hit in recall(session, embedder, "named-ahead", query, k=6, now=NOW, reinforce=False,
                                            query_embedding=vector)]


def test_a_name_not_guessed_embeds_the_nameless_query_beside_the_query_and_each_text_once(db_engine, monkeypatch):
    _import(make_sessionmaker(db_engine), "named-ahead")
    monkeypatch.setattr(speakers, "GUESSES", SpeakerGuesses())  # this process has heard no name yet
    embedder = OverlapEmbedder()
    with Session(db_engine) as session:
        given = _hits(session, PastimeEmbedder(cache_size=0), QUESTION, PastimeEmbedder().embed(QUESTION))
        monkeypatch.setattr(speakers, "GUESSES", SpeakerGuesses())  # the given recall learned the name: forget it
        own = _hits(session, embedder, QUESTION)
    assert embedder.overlapped == [True]  # the nameless text went to the model while the query's own embedded
    assert sorted(embedder.texts) == sorted([QUESTION, without_name(QUESTION, "melanie")])
    assert given and own == given
