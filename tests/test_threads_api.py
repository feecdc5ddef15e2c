"""GET/POST /threads and GET /threads/<id>/exchanges: the chat page's conversations, per user."""

from __future__ import annotations

import json

import pytest
from sqlalchemy.orm import Session

from services.memory.models import Fact
from services.queues import PROMPT_QUEUE
from tests.llm_steps import Reply, ToolCalls
from tests.sse import parse_frames
from tests.two_users import ALICE, BOB

pytestmark = pytest.mark.integration



def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def say(client, run_jobs, text: str, token: str = ALICE, **extra):  # type: ignore[no-untyped-def]
    response = client.post("/chat", data=json.dumps({"text": text, **extra}), content_type="application/json",
                           headers=auth(token), buffered=False)
    assert response.status_code == 200, response.get_data(as_text=True)
    run_jobs((PROMPT_QUEUE,))
    frames = [f for f in parse_frames(response.response) if not f.comment]
    message = next(f.data for f in frames if f.event == "message")
    return message, response.headers["X-Thread-ID"]


def test_threads_list_and_page_through_exchanges(secured, run_jobs, fake_llm):
    fake_llm.script(Reply("Nice to meet you."), Reply("Sure, here is a plan."), Reply("Anything else?"))
    _, thread_id = say(secured, run_jobs, "Hello, I am planning a garden this spring.")
    say(secured, run_jobs, "Help me plan the vegetable beds.", thread_id=thread_id)
    say(secured, run_jobs, "Thanks!", thread_id=thread_id)

    listed = secured.get("/threads", headers=auth(ALICE)).json
    assert listed["total"] == 1
    thread = listed["threads"][0]
    assert thread["id"] == thread_id and thread["exchanges"] == 3 and thread["current"] is True
    assert thread["title"] == "Hello, I am planning a garden this spring."

    newest = secured.get(f"/threads/{thread_id}/exchanges?limit=2", headers=auth(ALICE)).json
    assert [x["user_text"] for x in newest["exchanges"]] == ["Help me plan the vegetable beds.", "Thanks!"]
    assert newest["has_more"] is True and newest["before"] == newest["exchanges"][0]["id"]
    assert newest["exchanges"][1]["reply"] == "Anything else?"
    assert {"mode", "topic", "recalled", "confirm", "created_at", "request_id"} <= set(newest["exchanges"][0])
    older = secured.get(f"/threads/{thread_id}/exchanges?limit=2&before={newest['before']}", headers=auth(ALICE)).json
    assert [x["user_text"] for x in older["exchanges"]] == ["Hello, I am planning a garden this spring."]
    assert older["has_more"] is False and older["before"] is None


def test_other_users_threads_are_missing_and_lists_are_per_user(secured, run_jobs, fake_llm):
    fake_llm.script(Reply("Hi Alice."))
    _, thread_id = say(secured, run_jobs, "Hi, it's Alice.")
    assert secured.get("/threads", headers=auth(BOB)).json == {"threads": [], "total": 0, "limit": 20, "offset": 0}
    response = secured.get(f"/threads/{thread_id}/exchanges", headers=auth(BOB))
    assert response.status_code == 404 and response.json["error"]["code"] == "not_found"
    assert secured.get("/threads/no-such-thread/exchanges", headers=auth(ALICE)).status_code == 404
    assert secured.get("/threads").status_code == 401
    assert secured.get(f"/threads/{thread_id}/exchanges").status_code == 401


@pytest.mark.parametrize("query", ["limit=0", "limit=101", "limit=abc", "offset=-1", "offset=x"])
def test_bad_thread_paging_is_400(secured, query):
    response = secured.get(f"/threads?{query}", headers=auth(ALICE))
    assert response.status_code == 400
    assert response.json["error"]["message"].startswith("'")


@pytest.mark.parametrize("query", ["limit=0", "limit=1000", "before=0", "before=-3", "before=x"])
def test_bad_exchange_paging_is_400(secured, run_jobs, fake_llm, query):
    fake_llm.script(Reply("Hello."))
    _, thread_id = say(secured, run_jobs, "Hello there.")
    response = secured.get(f"/threads/{thread_id}/exchanges?{query}", headers=auth(ALICE))
    assert response.status_code == 400 and "error" in response.json


def test_new_thread_becomes_the_current_one(secured, run_jobs, fake_llm):
    fake_llm.script(Reply("First."), Reply("Second."))
    _, first = say(secured, run_jobs, "Start of the first conversation.")
    created = secured.post("/threads", headers=auth(ALICE))
    assert created.status_code == 201 and created.json["exchanges"] == 0
    _, second = say(secured, run_jobs, "Start of the second conversation.")  # no thread_id: goes to the new one
    assert second == created.json["id"] != first
    listed = secured.get("/threads", headers=auth(ALICE)).json["threads"]
    assert [t["id"] for t in listed] == [second, first]
    assert [t["current"] for t in listed] == [True, False]


def test_reply_and_exchange_carry_receipts_of_recalled_memory(secured, run_jobs, fake_llm, db_engine):
    with Session(db_engine) as session, session.begin():
        from services.db import User

        session.add(User(id="alice"))
        session.flush()
        fact = Fact(user_id="alice", text="The user's sister Maria lives in Lisbon.", salience=0.9, confidence=0.9)
        session.add(fact)
        session.flush()
        fact_id = fact.id
    fake_llm.script(Reply("Maria lives in Lisbon."))
    message, thread_id = say(secured, run_jobs, "Where does my sister Maria live?")
    assert any(r["kind"] == "fact" and r["id"] == fact_id for r in message["recalled"]), message["recalled"]
    assert "Maria lives in Lisbon" in next(r["text"] for r in message["recalled"] if r["id"] == fact_id)
    prompt = fake_llm.requests[-1]["messages"][0]["content"]
    assert "Maria lives in Lisbon" in prompt  # the receipt names what really went into the prompt
    stored = secured.get(f"/threads/{thread_id}/exchanges", headers=auth(ALICE)).json["exchanges"][0]
    assert any(r["kind"] == "fact" and r["id"] == fact_id for r in stored["recalled"])
    bob_view = secured.get("/ops/routing", headers=auth(BOB)).json["decisions"]
    assert bob_view == []


def test_a_held_back_action_is_marked_for_yes_no(secured, run_jobs, fake_llm, db_engine):
    fake_llm.script(ToolCalls([("schedule", {"operation": "create", "text": "call the dentist",
                                             "due": "tomorrow at 10"})]))
    message, thread_id = say(secured, run_jobs, "Remind me tomorrow at 9 to call the dentist")
    assert message["confirm"]["skill"] == "schedule" and "tomorrow at 10" in message["confirm"]["description"]
    stored = secured.get(f"/threads/{thread_id}/exchanges", headers=auth(ALICE)).json["exchanges"][-1]
    assert stored["confirm"] == message["confirm"]
    fake_llm.script(Reply("Done, the reminder is set."))
    answered, _ = say(secured, run_jobs, "yes", thread_id=thread_id)
    assert "confirm" not in answered and answered["metrics"]["tools"] == {"schedule": 1}
