"""End to end with no LLM configured: `engram run` serves the offline SmolLM2 model itself.

Asserts structure only (streaming, usage, a stored reply, the list and reminder really stored, no
prompt scaffolding in replies), never the tiny model's wording.
Skipped only where the optional `local` extra is not installed; `make test` installs it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import httpx
import pytest
from sqlalchemy import create_engine, text

from services.llm.fallback import FALLBACK_REPLY
from services.llm.guard import is_heading
from services.llm.local import local_llm_available
from tests.system import System, chat, read_stream, running_system

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.integration,
    pytest.mark.slow,
    pytest.mark.skipif(not local_llm_available(), reason="the local extra (llama-cpp-python + the local model) is absent"),
]


@pytest.fixture(scope="module")
def local_system(tmp_path_factory: pytest.TempPathFactory) -> Iterator[System]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("OPENAI_")}
    data_dir = tmp_path_factory.mktemp("engram-local")
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)  # the launched process must not inherit an endpoint
    try:
        with running_system(data_dir) as engram:
            yield engram
    finally:
        os.environ.clear()
        os.environ.update(saved)


def test_the_local_model_answers_a_chat(local_system: System) -> None:
    health = httpx.get(local_system.base_url + "/healthz", timeout=5).json()
    assert health["checks"]["llm"]["ok"]
    with chat(local_system, "Tell me one fun fact about the ocean.") as response:
        frames = read_stream(response)
    kinds = [f.event for f in frames]
    assert kinds[-2:] == ["message", "done"], frames
    message = frames[-2].data
    assert message["mode"] == "RESPOND"
    assert message["text"].strip() and message["text"] != FALLBACK_REPLY
    assert "delta" in kinds
    assert message["metrics"]["tokens_total"] > 0


def say(system: System, text_: str, thread: dict[str, str]) -> dict:  # type: ignore[type-arg]
    """One turn in ``thread`` (its id is filled in by the first turn)."""
    with chat(system, text_, **thread) as response:
        assert response.status_code == 200, response.read()
        thread["thread_id"] = response.headers["X-Thread-ID"]
        frames = read_stream(response)
    message = next(frame.data for frame in frames if frame.event == "message")
    assert not message.get("fallback"), message  # a failed LLM call would say so here
    return message


def test_list_and_reminder_turns_are_stored_and_read_back(local_system: System) -> None:
    thread: dict[str, str] = {}
    added = say(local_system, "Add milk and eggs to my shopping list", thread)
    assert added["mode"] == "ACT"
    reminded = say(local_system, "Remind me tomorrow at 9 to call the dentist", thread)
    assert reminded["mode"] == "ACT"
    listed = say(local_system, "What's on my shopping list?", thread)
    assert "milk" in listed["text"].lower() and "eggs" in listed["text"].lower()
    engine = create_engine(local_system.urls()[1].replace("postgresql://", "postgresql+psycopg://"))
    try:
        with engine.connect() as connection:
            items = connection.execute(text(
                "SELECT i.text FROM list_items i JOIN lists l ON l.id = i.list_id WHERE l.name = 'shopping'"
            )).scalars().all()
            reminders = connection.execute(text(
                "SELECT text, due_at AT TIME ZONE timezone FROM scheduled_items WHERE status = 'active'")).all()
    finally:
        engine.dispose()
    assert sorted(items) == ["eggs", "milk"]
    assert [(row[0], row[1].hour, row[1].minute) for row in reminders] == [("call the dentist", 9, 0)]


def test_chat_replies_carry_no_prompt_scaffolding(local_system: System) -> None:
    thread: dict[str, str] = {}
    for line in ("Hello", "My name is Dana, I live in Lisbon, I have a dog called Pixel", "What is my dog's name?"):
        message = say(local_system, line, thread)
        assert message["text"].strip() and message["text"] != FALLBACK_REPLY
        assert not any(is_heading(reply_line) for reply_line in message["text"].splitlines()), message["text"]
