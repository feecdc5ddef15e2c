"""A fact that replaces a salient one is as salient: the newer word on a home or a job stays in the prompt's block
about the person (people23's junhao told his home in his first message and his new one later; neither reached the
block, which shows only salient facts)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy.orm import Session

from services.memory.config import load_memory_config
from services.memory.context import assemble
from services.memory.facts import list_facts, remember_fact
from tests.memory_builders import create_user

CONFIGS = Path(__file__).resolve().parents[1] / "configs"


@pytest.mark.integration
@pytest.mark.parametrize(("first", "later", "new_word", "old_word"), [
    ("The user lives in Tampines with the user's parents", "The user moved out, living in Punggol now",
     "Punggol", "Tampines"),
    ("The user works at a bank in the mortgage department", "The user left the bank, teaching maths at a school now",
     "maths", "mortgage"),
])
def test_the_newer_word_on_a_salient_thing_is_shown_whatever_is_asked(db_engine, hash_embedder, first: str,
                                                                      later: str, new_word: str,
                                                                      old_word: str) -> None:
    config = load_memory_config(CONFIGS)
    with Session(db_engine) as session:
        create_user(session, user_id="salience-heir")
        remember_fact(session, hash_embedder, "salience-heir", first, salience=0.8, config=config.facts)
        remember_fact(session, hash_embedder, "salience-heir", "The user's favourite colour is green",
                      salience=0.5, config=config.facts)
        newer = remember_fact(session, hash_embedder, "salience-heir", later, salience=0.5, config=config.facts)
        assert newer.action == "superseded"
        [fact] = [fact for fact in list_facts(session, "salience-heir") if fact.id == newer.fact_id]
        assert fact.salience == pytest.approx(0.8)
        about = assemble(session, hash_embedder, "salience-heir", "any ideas for the weekend?", config=config,
                         compact=True, budget_tokens=300, note_tokens=150).about
        assert new_word in about and old_word not in about
        assert "green" not in about  # a fact that replaced nothing keeps its own salience
        session.rollback()
