"""Autobiography with a controllable clock, and that it reaches the prompt it is for."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import replace

import pytest
from sqlalchemy import select

from services.cognition import autobiography
from services.cognition.models import Autobiography
from services.queues import PROMPT_QUEUE
from tests.cognition_builders import Clock, episode, person, service_call
from tests.llm_steps import Reply
from tests.sse import parse_frames

pytestmark = pytest.mark.integration

NOW = dt.datetime(2026, 11, 23, 15, 0, tzinfo=dt.UTC)
STORY = "Ada is training for the Berlin marathon and cares about her sister in Lyon."


@pytest.fixture
def clock() -> Clock:
    return Clock(NOW)


@pytest.fixture
def ada(settings, worker_context):
    """The default user of the API (the chat tests talk as her)."""
    with worker_context.sessions.begin() as db:
        person(db, user_id=settings.default_user)
    return settings.default_user


def add_episode(context, user_id, title, gist, at):
    with context.sessions.begin() as db:
        return episode(db, user_id=user_id, title=title, gist=gist, at=at, outcome="planned")


def stories(context):
    with context.sessions.begin() as db:
        return list(db.scalars(select(Autobiography).order_by(Autobiography.id)))


def chat(client, run_jobs, text):
    response = client.post("/chat", data=json.dumps({"text": text}), content_type="application/json",
                           buffered=False)
    run_jobs((PROMPT_QUEUE,))
    return [frame for frame in parse_frames(response.response) if not frame.comment]


def system_prompts(fake_llm):
    return [message["content"] for body in fake_llm.requests for message in body["messages"]
            if message["role"] == "system"]


# --- autobiography -------------------------------------------------------------------------------

def test_autobiography_needs_new_episodes_before_any_llm_call(worker_context, fake_llm, clock, ada):
    result = autobiography.run(service_call(worker_context, "autobiography", clock))
    assert (result.outcome, result.reason) == ("skipped", "no new episodes")
    assert fake_llm.requests == []


def test_under_the_compact_profile_no_narrative_is_written_for_prompts_that_never_read_it(
        worker_context, fake_llm, clock, ada):
    add_episode(worker_context, ada, "Marathon training plan", "Ada planned long runs", NOW - dt.timedelta(days=2))
    worker_context.settings = replace(worker_context.settings, llm_profile="compact")
    result = autobiography.run(service_call(worker_context, "autobiography", clock))
    assert (result.outcome, result.reason) == ("skipped", "the compact prompts read no narrative")
    assert fake_llm.requests == [] and stories(worker_context) == []


def test_autobiography_is_rewritten_from_new_episodes_once_per_fire(worker_context, fake_llm, clock, ada):
    add_episode(worker_context, ada, "Marathon training plan", "Ada planned long runs", NOW - dt.timedelta(days=2))
    add_episode(worker_context, ada, "Sister moved to Lyon", "Ada's sister moved to Lyon", NOW - dt.timedelta(days=1))
    fake_llm.script(Reply(STORY))
    first = autobiography.run(service_call(worker_context, "autobiography", clock, "auto-1"))
    assert first.details == {"written": 1, "failed": 0}
    prompt = fake_llm.requests[0]["messages"][0]["content"]
    assert "Marathon training plan" in prompt and "Sister moved to Lyon" in prompt and "nothing yet" in prompt
    assert prompt.index("Marathon training plan") < prompt.index("Sister moved to Lyon")  # told in order
    (story,) = stories(worker_context)
    assert story.narrative == STORY and len(story.episode_ids) == 2

    assert autobiography.run(service_call(worker_context, "autobiography", clock, "auto-1")).outcome == "skipped"
    clock.advance(hours=6)
    assert autobiography.run(service_call(worker_context, "autobiography", clock)).reason == "no new episodes"
    assert len(fake_llm.requests) == 1

    add_episode(worker_context, ada, "Knee pain", "Ada's knee hurt after a long run", NOW + dt.timedelta(hours=1))
    fake_llm.script(Reply(STORY + " Her knee hurts after long runs."))
    assert autobiography.run(service_call(worker_context, "autobiography", clock)).outcome == "ran"
    second_prompt = fake_llm.requests[1]["messages"][0]["content"]
    assert STORY in second_prompt and "Knee pain" in second_prompt and "Marathon training plan" not in second_prompt
    assert stories(worker_context)[-1].narrative.endswith("Her knee hurts after long runs.")


def test_the_autobiography_reaches_the_mode_prompt(client, run_jobs, worker_context, fake_llm, clock, ada):
    add_episode(worker_context, ada, "Marathon training plan", "Ada planned long runs", NOW - dt.timedelta(days=2))
    fake_llm.script(Reply(STORY))
    autobiography.run(service_call(worker_context, "autobiography", clock))
    fake_llm.reset()
    fake_llm.script(Reply("Sounds lovely."))
    # A question, so the reply is written with the person in view (a day told with no question is acknowledged).
    frames = chat(client, run_jobs, "Any idea what I could do with this beautiful autumn day?")
    assert any(frame.event == "message" for frame in frames)
    prompts = system_prompts(fake_llm)
    assert prompts and "Who the person is (your own running summary):" in prompts[-1] and STORY in prompts[-1]
