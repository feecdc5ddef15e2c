"""The small-model profile's memory end to end: POST /chat → digest → chunker → facts → the next question's notes.

Under the compact profile with enrichment from words (configs/profiles.toml) the chunker makes no model
call: a statement's facts are the person's own sentences, and a change of job supersedes the old one.
The scripted LLM sees the reply requests only; a question's request carries the current fact, never the
superseded one, and a statement's request carries no memory at all (nothing for a small model to copy).
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from sqlalchemy import select

from services.memory.models import Fact
from services.queues import MEMORY_CHUNKER_QUEUE, PROMPT_QUEUE
from tests.llm_steps import Reply
from tests.test_act_chat import chat, message_of, person  # noqa: F401  (person: a fixture)

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("person")]


@pytest.fixture
def settings(settings):  # type: ignore[no-untyped-def]
    return replace(settings, llm_profile="compact")


def tell(client, run_jobs, fake_llm, text: str, reply: str) -> dict:  # type: ignore[no-untyped-def]
    fake_llm.script_stream(Reply(reply))
    frames, _ = chat(client, run_jobs, text)
    run_jobs((MEMORY_CHUNKER_QUEUE, PROMPT_QUEUE))
    return message_of(frames)


def test_what_the_person_tells_becomes_facts_in_their_words_and_the_newest_answers_the_question(
        client, run_jobs, fake_llm, db_engine):
    told = tell(client, run_jobs, fake_llm, "I work at a bank, in the mortgage department.", "Sounds busy!")
    assert told["text"] == "Sounds busy!"
    statement = fake_llm.requests[-1]["messages"]
    assert "<memory>" not in str(statement) and statement[-1]["content"].startswith("I work at a bank")
    tell(client, run_jobs, fake_llm, "Big news: I left the bank last month. I'm teaching maths now.", "Wow!")
    with db_engine.connect() as connection:
        active = connection.execute(select(Fact.text).where(Fact.superseded_at.is_(None)).order_by(Fact.id)).scalars()
        assert list(active) == ["The user left the bank last month", "The user is teaching maths now"]
    assert len(fake_llm.requests) == 2  # the two replies: no chunker call, no episode call

    # In the same thread the history shows what was said (the notes repeat none of it) ...
    fake_llm.script_stream(Reply("You teach maths."))
    frames, _ = chat(client, run_jobs, "What do I do for a living these days?")
    assert message_of(frames)["text"] == "You teach maths."
    asked = fake_llm.requests[-1]["messages"]
    assert "<memory>" not in str(asked) and "I'm teaching maths now" in asked[-3]["content"]
    # ... and in a new one the notes about the person hold the newest fact, not the stale one.
    fake_llm.script_stream(Reply("You teach maths."))
    assert client.post("/threads").status_code == 201  # a new conversation, now the current one
    frames, _ = chat(client, run_jobs, "What do I do for a living these days?")
    assert message_of(frames)["text"] == "You teach maths."
    notes = next(m["content"] for m in fake_llm.requests[-1]["messages"] if "<memory>" in m["content"])
    assert "- You are teaching maths now." in notes and "mortgage" not in notes
