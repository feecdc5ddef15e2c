"""Work told by what the person does ("I drive truck for company Nordfrakt", "I run a small bakery") is who they
are, like "I work as …": people23's vytautas told his trucking job first and his bus job later; neither reached the
small model's block about him, and "what is my work now?" was answered "As Vytautas, I work as a software
developer"."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy.orm import Session

from services.db import User, insert
from services.memory.chunks import store_chunk
from services.memory.config import load_memory_config
from services.memory.context import assemble
from services.memory.from_words import chunk_from_words
from services.memory.identity import IDENTITY_SALIENCE
from tests.memory_builders import create_exchange

CONFIGS = Path(__file__).resolve().parents[1] / "configs"


def _salience(message: str) -> list[float | None]:
    return [fact.get("salience") for fact in chunk_from_words(message)["facts"]]


@pytest.mark.parametrize("message", [
    "I drive truck for company Nordfrakt, mostly routes in Norway and Sweden.",
    "I drive a taxi in Hull, nights mostly.",
    "I drive a school bus for the council.",
    "I drive for Uber at weekends.",
    "I run a small bakery in Leith.",
    "I own a fish and chip shop in Whitby with my brother.",
    # a new workplace told as a move (people23's marivic, a nurse in Dubai: "I transferred na to another hospital!
    # Nasa Abu Dhabi na ako": "which city am I working in now?" was answered "Dubai")
    "Update: I transferred na to another hospital! Nasa Abu Dhabi na ako, sa Al Noor Medical Center",
    "I got transferred to the Leeds branch last week.",
    "I've moved to another school, a primary in Hackney.",
    "I was posted to a new base in Cyprus.",
    "I moved to the ICU ward this month.",
])
def test_work_told_by_what_is_done_is_who_the_person_is(message: str) -> None:
    assert _salience(message) == [IDENTITY_SALIENCE]


@pytest.mark.parametrize("message", [
    "I drove the van to Leeds yesterday, what a trip.",
    "I drive to work every day, it takes an hour.",
    "I run every morning before work.",
    "I own a bike and an old Volvo.",
    "I transferred the money to my sister this morning.",
    "We moved to a new flat in Leith.",
    "I moved the sofa to the other room.",
])
def test_errands_and_belongings_are_not_work(message: str) -> None:
    assert IDENTITY_SALIENCE not in _salience(message)


@pytest.mark.integration
def test_the_new_job_told_by_what_is_done_is_shown_whatever_is_asked(db_engine, hash_embedder) -> None:
    with Session(db_engine) as session:
        _the_bus_job_is_shown(session, hash_embedder)
        session.rollback()


def _the_bus_job_is_shown(session: Session, hash_embedder) -> None:
    said = ["Hello. I am Vytautas, from Kaunas in Lithuania. I drive truck for company Nordfrakt, mostly routes in "
            "Norway and Sweden.",
            *[f"The {thing} was terrible again today" for thing in (
                "weather", "coffee", "traffic", "wifi", "queue", "ferry", "parking", "radio", "heater", "canteen",
                "rota", "signal", "laundry", "road")],
            "I'm not in Nordfrakt anymore, now I drive bus in Stavanger city, for Kolumbus."]
    session.execute(insert(User).values(id="vyt").on_conflict_do_nothing())
    for text in said:
        exchange = create_exchange(session, user_id="vyt", user_text=text, reply="Okay.", thread_id="t-vyt")
        store_chunk(session, hash_embedder, exchange, chunk_from_words(text), model="words")
    session.flush()
    about = assemble(session, hash_embedder, "vyt", "any idea for the weekend?", config=load_memory_config(CONFIGS),
                     compact=True, budget_tokens=300, note_tokens=150).about
    assert "drive bus in Stavanger" in about
    assert "Nordfrakt, mostly routes" not in about  # the old job is replaced, not shown beside the new one
