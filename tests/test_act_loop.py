"""The ACT loop with a scripted LLM: every way it ends, hung skills, compaction, confirmations, rollback."""

from __future__ import annotations

import dataclasses
import json
import time
import uuid

import pytest
from sqlalchemy import func, select

from services.act import loop as act_loop
from services.act.config import ActConfig, CompactionConfig, DispatchLimits, LoopLimits, load_act_config
from services.act.dispatcher import ActDispatcher
from services.act.models import NamedList, ScheduledItem
from services.act.reply import act_reply
from services.act.skills.base import ActionCancelled, ActionTicket, SessionGate, Skill
from services.act.turn import INNATE_SKILLS, run_act_turn
from services.db import Thread, User
from services.memory.config import MemoryConfig, load_memory_config
from services.memory.facts import list_facts, remember_fact
from services.queues import ChatRequest
from services.streams import request_channel
from services.threads import history_text
from tests.llm_steps import Error, Json, Reply, ToolCalls
from workers.turn import Turn
from workers.understanding import Understanding

pytestmark = pytest.mark.integration

USER = "ada"
DONE = Json({"actions": []})


def _noop(ctx, args):
    return {"echo": args.get("text", "")}


def _sleep(seconds):
    def run(ctx, args):
        time.sleep(seconds)
        return {"slept": seconds}
    return run


def _bulky(ctx, args):
    return {"data": "x" * 1400}


ANY_ARGS = {"type": "object", "properties": {"text": {"type": "string"}}, "additionalProperties": False}
TEST_SKILLS = (
    Skill("noop", "does nothing", ANY_ARGS, _noop),
    Skill("slow", "sleeps a little", ANY_ARGS, _sleep(0.4)),
    Skill("hang", "never finishes in time", ANY_ARGS, _sleep(3.0)),
    Skill("bulky", "returns a lot", ANY_ARGS, _bulky),
)


def config(**loop) -> ActConfig:
    """Limits roomy enough that only the one under test bites."""
    limits = {"max_iterations": 10, "wall_clock_s": 30.0, "fatigue_budget": 100.0, **loop}
    return ActConfig(loop=LoopLimits(**limits), dispatch=DispatchLimits(action_timeout_s=2.0, release_grace_s=5.0))


def dispatcher(cfg: ActConfig) -> ActDispatcher:
    return ActDispatcher((*INNATE_SKILLS, *TEST_SKILLS), timeout_s=cfg.dispatch.action_timeout_s,
                         release_grace_s=cfg.dispatch.release_grace_s)


def _understanding(worker_context, thread_id: str = "thread-1") -> Understanding:
    """What the digest's understanding stage hands the ACT loop: the mode and the thread as it was read."""
    return Understanding(topic="general", confidence=0.5, mode="ACT",
                         thread=worker_context.threads.state(thread_id),
                         working_memory=worker_context.threads.working_memory(thread_id))


@pytest.fixture
def person(db_engine):
    with db_engine.begin() as connection:
        connection.execute(User.__table__.insert().values(id=USER, timezone="Europe/Berlin"))
        connection.execute(Thread.__table__.insert().values(id="thread-1", user_id=USER))
    return USER


@pytest.fixture
def act(worker_context, person):
    """Run one ACT turn for a message, committed like the digest does; returns the outcome."""

    def run(text, *, cfg=None, thread_id="thread-1", fail_after=False):
        cfg = cfg or config()
        turn = _turn(text, thread_id)
        understanding = _understanding(worker_context, thread_id)
        with worker_context.sessions.begin() as session:
            outcome = run_act_turn(worker_context, turn, understanding, session, config=cfg,
                                   memory=load_memory_config(worker_context.settings.configs_dir),
                                   dispatcher=dispatcher(cfg))
            if fail_after:
                raise RuntimeError("storing the exchange failed")
        return outcome

    return run


def _turn(text, thread_id="thread-1"):
    request = ChatRequest(request_id=str(uuid.uuid4()), user_id=USER, thread_id=thread_id, text=text,
                          source="text", received_at=time.time())
    return Turn(request=request, channel=request_channel(request.request_id))


def actions(outcome):
    return [entry for entry in outcome.trail if entry["type"] == "action"]


# --- how the loop ends -------------------------------------------------------------------------

def test_no_actions_ends_the_loop_at_once(act, fake_llm):
    fake_llm.script(DONE)
    outcome = act("hello there")
    assert (outcome.reason, outcome.reply_mode, outcome.iterations) == ("no_actions", "RESPOND", 1)
    assert actions(outcome) == []
    step = fake_llm.requests[0]
    assert {tool["function"]["name"] for tool in step["tools"]} >= {"recall", "schedule", "list", "forget"}
    assert "JSON" in step["messages"][0]["content"] and "Europe/Berlin" in step["messages"][0]["content"]


def test_iteration_cap(act, fake_llm):
    fake_llm.route("Actions so far", ToolCalls([("noop", {"text": "again"})]))
    outcome = act("keep going", cfg=config(max_iterations=3))
    assert outcome.reason == "iteration_cap"
    assert [entry["iteration"] for entry in actions(outcome)] == [0, 1, 2]
    assert len(fake_llm.requests) == 3


def test_fatigue_cost_grows_per_iteration(act, fake_llm):
    # An action costs 1 in iteration 0 and 2 in iteration 1 (base 1, growth 1): a budget of 4 pays for
    # both actions of iteration 0 and the first of iteration 1; the second (4 + 2 > 4) is skipped.
    fake_llm.route("Actions so far", ToolCalls([("noop", {}), ("noop", {})]))
    outcome = act("tire me out", cfg=config(fatigue_budget=4.0, fatigue_base_cost=1.0, fatigue_growth=1.0))
    assert outcome.reason == "fatigue"
    assert [entry["iteration"] for entry in actions(outcome)] == [0, 0, 1]
    skipped = [entry for entry in outcome.trail if entry["type"] == "skipped"]
    assert skipped and skipped[0]["reason"] == "fatigue budget spent"


def test_wall_clock_cap(act, fake_llm):
    fake_llm.route("Actions so far", ToolCalls([("slow", {}), ("slow", {})]))
    # 10 steps of two 0.4 s actions would take 8 s: the 1.5 s cap stops the loop after a few,
    # with room for a slow first LLM step on a loaded machine.
    outcome = act("take your time", cfg=config(wall_clock_s=1.5))
    assert outcome.reason == "wall_clock"
    assert 1 <= len(actions(outcome)) <= 5


def test_llm_failure_ends_the_loop_without_raising(act, fake_llm):
    fake_llm.script(ToolCalls([("noop", {})]), Error(500))
    outcome = act("do something")
    assert outcome.reason == "llm_error" and len(actions(outcome)) == 1


def test_too_many_actions_in_one_step_are_refused(act, fake_llm):
    fake_llm.script(ToolCalls([("noop", {"text": str(n)}) for n in range(3)]), DONE)
    outcome = act("three things", cfg=config(max_actions_per_step=2))
    assert len(actions(outcome)) == 2
    assert [entry["type"] for entry in outcome.trail].count("skipped") == 1


# --- structured errors, timeouts, atomicity ------------------------------------------------------

def test_bad_calls_become_structured_errors(act, fake_llm):
    fake_llm.script(ToolCalls([("teleport", {}), ("list", "{broken"), ("list", {"operation": "juggle"})]), DONE)
    outcome = act("do weird things")
    codes = [entry["error"]["code"] for entry in actions(outcome)]
    assert codes == ["unknown_skill", "invalid_arguments", "invalid_arguments"]
    assert "operation must be one of" in actions(outcome)[2]["error"]["message"]
    assert outcome.reason == "no_actions"
    assert "unknown_skill" in fake_llm.requests[1]["messages"][0]["content"]  # the model saw its mistakes


def test_hung_skill_times_out_and_the_loop_goes_on(act, fake_llm):
    fake_llm.script(ToolCalls([("hang", {})]), ToolCalls([("noop", {"text": "after"})]), DONE)
    cfg = dataclasses.replace(config(), dispatch=DispatchLimits(action_timeout_s=0.2, release_grace_s=1.0))
    outcome = act("hang please", cfg=cfg)
    hung, after = actions(outcome)
    assert hung["ok"] is False and hung["error"]["code"] == "timeout"
    assert "Traceback" not in str(hung)
    assert after["ok"] is True and outcome.reason == "no_actions"


def test_nothing_is_written_when_the_turn_fails_to_store(act, fake_llm, db_engine):
    fake_llm.script(ToolCalls([("list", {"operation": "add", "name": "shopping", "items": ["milk"]})]), DONE)
    with pytest.raises(RuntimeError):
        act("Add milk to my shopping list", fail_after=True)
    with db_engine.connect() as connection:
        assert connection.execute(select(func.count()).select_from(NamedList)).scalar_one() == 0


# --- compaction ---------------------------------------------------------------------------------

def _window_for(act, fake_llm, extra_chars: int) -> int:
    """A context window whose prompt budget is this test's bare prompt plus ``extra_chars``."""
    fake_llm.script(DONE)
    act("measure")
    request = fake_llm.requests[-1]
    tools_chars = len(json.dumps(request["tools"], separators=(",", ":")))  # counted too: sent with every step
    base_chars = sum(len(m["content"]) for m in request["messages"]) - len("measure") + tools_chars
    fake_llm.reset()
    return (base_chars + extra_chars) // 4 + 384  # 4 chars per token; 384 = the act role's max_tokens


def test_stage_one_summarises_the_trail(act, fake_llm):
    window = _window_for(act, fake_llm, 2400)
    fake_llm.script(ToolCalls([("bulky", {}), ("bulky", {})]), DONE)
    cfg = dataclasses.replace(config(), compaction=CompactionConfig(context_window=window, threshold=1.0))
    outcome = act("big results", cfg=cfg)
    stages = [entry for entry in outcome.trail if entry["type"] == "compaction"]
    assert [entry["stage"] for entry in stages] == [1]
    assert stages[0]["replaced"] == 2 and stages[0]["tokens_after"] < stages[0]["tokens_before"]
    assert len(actions(outcome)) == 2  # the stored trail keeps every action; only the prompt shrank
    last_prompt = fake_llm.requests[-1]["messages"][0]["content"]
    assert "Summary of earlier actions this turn" in last_prompt and "x" * 1400 not in last_prompt
    assert outcome.reason == "no_actions"


def test_stage_two_checkpoints_and_restarts_from_iteration_zero(act, fake_llm, worker_context):
    window = _window_for(act, fake_llm, 3000)
    # A conversation that just fits: one bulky result overflows the prompt, and summarising the trail
    # (stage 1) is not enough because the history itself takes nearly all the room.
    for n in range(3):
        worker_context.threads.record_exchange("thread-1", USER, {"request_id": f"old-{n}", "user": "tell me " * 60,
                                                                  "reply": "story " * 76})
    assert 2800 < len(history_text(worker_context.threads.working_memory("thread-1"))) < 2920
    fake_llm.script(ToolCalls([("bulky", {})]), ToolCalls([("noop", {"text": "after restart"})]), DONE)
    cfg = dataclasses.replace(config(), compaction=CompactionConfig(context_window=window, threshold=1.0))
    outcome = act("bulk please", cfg=cfg)
    stages = [entry for entry in outcome.trail if entry["type"] == "compaction"]
    assert [entry["stage"] for entry in stages] == [1, 2] and stages[1]["restart"] == 1
    checkpoint = stages[1]["checkpoint"]
    assert checkpoint.startswith("The person asked: bulk please") and "bulky({}) → ok" in checkpoint
    assert len(fake_llm.requests) == 3  # the three steps: the checkpoint costs no model call
    last_prompt = fake_llm.requests[-1]["messages"][0]["content"]
    assert checkpoint in last_prompt and "summarised under Current state" in last_prompt
    assert [(entry["skill"], entry["iteration"]) for entry in actions(outcome)] == [("bulky", 0), ("noop", 0)]
    assert outcome.reason == "no_actions"


def test_stage_two_checkpoints_a_history_too_long_on_its_own(act, fake_llm, worker_context):
    window = _window_for(act, fake_llm, 400)
    worker_context.threads.record_exchange("thread-1", USER, {"request_id": "old", "user": "long " * 400,
                                                              "reply": "reply " * 100})
    fake_llm.script(DONE)
    outcome = act("go", cfg=dataclasses.replace(config(), compaction=CompactionConfig(context_window=window,
                                                                                      threshold=1.0)))
    stage = [entry for entry in outcome.trail if entry["type"] == "compaction"][-1]
    assert stage["stage"] == 2 and stage["checkpoint"].startswith("The person asked: go")
    assert outcome.reason == "no_actions"


# --- confirmation round trip -------------------------------------------------------------------

def test_forget_asks_first_then_yes_deletes_exactly_what_was_shown(act, fake_llm, worker_context, hash_embedder):
    with worker_context.sessions.begin() as session:
        remember_fact(session, hash_embedder, USER, "I live in Paris")
        remember_fact(session, hash_embedder, USER, "My sister is called Priya")
    fake_llm.script(ToolCalls([("forget", {"query": "live in Paris"})]))
    first = act("Forget that I live in Paris")
    assert first.reply_mode == "CONFIRM" and first.reason == "confirmation"
    assert "I live in Paris" in first.question and "Priya" not in first.question
    pending = worker_context.threads.state("thread-1").extra["pending_action"]
    assert pending["skill"] == "forget" and len(pending["arguments"]["fact_ids"]) == 1

    second = act("yes")
    assert second.reason == "confirmed" and actions(second)[0]["confirmed"] is True
    assert "pending_action" not in worker_context.threads.state("thread-1").extra
    with worker_context.sessions() as session:
        assert [fact.text for fact in list_facts(session, USER)] == ["My sister is called Priya"]


def test_a_yes_or_no_turn_never_reads_the_world_state(act, fake_llm, monkeypatch):
    reads = []
    monkeypatch.setattr(act_loop, "world_state", lambda *args: reads.append(args) or "Lists: none")
    fake_llm.script(ToolCalls([("list", {"operation": "delete", "name": "shopping"})]))
    assert act("what a week").reply_mode == "CONFIRM" and len(reads) == 1  # read once, for the step prompt
    assert act("no").reason == "declined" and len(reads) == 1


def test_no_declines_the_pending_action(act, fake_llm, worker_context, db_engine):
    fake_llm.script(ToolCalls([("list", {"operation": "delete", "name": "shopping"})]))
    first = act("what a week")
    assert first.reply_mode == "CONFIRM"  # deleting a list nobody mentioned: ask
    second = act("no")
    assert second.reason == "declined" and actions(second) == []
    assert second.trail[0]["decision"] == "declined"
    assert "pending_action" not in worker_context.threads.state("thread-1").extra


def test_a_new_request_drops_the_pending_action(act, fake_llm, worker_context):
    fake_llm.script(ToolCalls([("list", {"operation": "delete", "name": "shopping"})]), DONE)
    act("what a week")
    outcome = act("what's the weather like")
    assert outcome.trail[0]["decision"] == "dropped" and outcome.reason == "no_actions"
    assert "pending_action" not in worker_context.threads.state("thread-1").extra


def test_a_failed_turn_keeps_no_pending_action(act, fake_llm, worker_context):
    fake_llm.script(ToolCalls([("list", {"operation": "delete", "name": "shopping"})]))
    with pytest.raises(RuntimeError):
        act("what a week", fail_after=True)
    assert "pending_action" not in worker_context.threads.state("thread-1").extra


def test_skills_get_the_recall_settings_the_turn_was_given(worker_context, person, fake_llm):
    seen = []
    probe = Skill("probe", "notes its recall settings", ANY_ARGS, lambda ctx, args: seen.append(ctx.memory) or {})
    memory = MemoryConfig()
    fake_llm.script(ToolCalls([("probe", {})]), DONE)
    with worker_context.sessions.begin() as session:
        outcome = run_act_turn(worker_context, _turn("probe"), _understanding(worker_context), session,
                               config=config(), dispatcher=ActDispatcher((probe,), timeout_s=2.0), memory=memory)
    assert actions(outcome)[0]["ok"] is True and len(seen) == 1 and seen[0] is memory


# --- the reply after the loop --------------------------------------------------------------------

def worker_configs(context) -> dict:  # type: ignore[no-untyped-def]
    """The ACT and memory configs a worker reads at start-up."""
    return {"config": load_act_config(context.settings.configs_dir),
            "memory": load_memory_config(context.settings.configs_dir)}


def test_needs_info_turns_into_a_clarify_reply(worker_context, person, fake_llm):
    fake_llm.script(ToolCalls([("schedule", {"operation": "create", "text": "call mum", "due": "friday"})]), DONE,
                    Reply("What time on Friday?"))
    deltas: list[str] = []
    understanding = _understanding(worker_context)
    with worker_context.sessions.begin() as session:
        reply = act_reply(worker_context, _turn("Remind me on friday to call mum"), understanding, session,
                          deltas.append, **worker_configs(worker_context))
    assert reply.reply_mode == "CLARIFY" and reply.text == "What time on Friday?" == "".join(deltas)
    assert "A detail is missing: the time of day" in fake_llm.requests[-1]["messages"][0]["content"]
    assert reply.trail[-1] == {"type": "end", "reason": "no_actions", "reply_mode": "CLARIFY", "iterations": 2}
    tokens = reply.completion
    assert tokens.total_tokens == tokens.prompt_tokens + tokens.completion_tokens > 0
    with worker_context.sessions() as session:
        assert session.scalar(select(func.count()).select_from(ScheduledItem)) == 0


def test_a_failed_reply_still_says_what_was_done(worker_context, person, fake_llm):
    fake_llm.script(ToolCalls([("list", {"operation": "add", "name": "shopping", "items": ["milk"]})]), DONE,
                    Error(500), Error(500))
    understanding = _understanding(worker_context)
    with worker_context.sessions.begin() as session:
        reply = act_reply(worker_context, _turn("Add milk to my shopping list"), understanding, session,
                          lambda text: None, **worker_configs(worker_context))
    assert reply.fallback is True
    assert reply.text.startswith("I had trouble writing a proper answer") and '"milk"' in reply.text


def test_confirmation_question_is_streamed_without_an_llm_call(worker_context, person, fake_llm):
    fake_llm.script(ToolCalls([("list", {"operation": "delete", "name": "shopping"})]))
    deltas: list[str] = []
    understanding = _understanding(worker_context)
    with worker_context.sessions.begin() as session:
        reply = act_reply(worker_context, _turn("hmm"), understanding, session, deltas.append,
                          **worker_configs(worker_context))
    assert reply.text.startswith("Before I do that") and "".join(deltas) == reply.text
    assert len(fake_llm.requests) == 1 and reply.trail[-1]["reply_mode"] == "CONFIRM"


def test_an_abandoned_action_can_never_claim_the_session():
    gate = SessionGate(None, claim_wait_s=0.1)
    ticket = ActionTicket()
    assert gate.cancel(ticket) is True  # it never touched the session, so nothing waits on it
    with pytest.raises(ActionCancelled):
        gate.claim(ticket)
    assert gate.settle(0.1) is True
