"""An ACT turn from the digest's point of view: run the loop, re-route, write the reply with the trail.

After the loop the turn ends in a terminal mode: RESPOND (say what was done), CLARIFY (a skill
needs a detail the person did not give) or the critic's confirmation question (no LLM call).
The whole trail — actions, compaction and steering records, the end record — goes back to the
digest, which stores it with the exchange in the same transaction as the skills' writes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from sqlalchemy.orm import Session

from services.act import steering
from services.act.compaction import entry_line
from services.act.config import ActConfig
from services.act.dispatcher import ActDispatcher
from services.act.loop import ActOutcome, ActTurn
from services.act.prompt import reply_messages
from services.act.request_words import FAST_PATH
from services.act.small_plan import NOT_THAT, SMALL_PLAN, UNCLEAR, UNUSABLE
from services.act.transaction import after_commit
from services.act.turn import run_act_turn
from services.act.wording import found_reply, plain_reply
from services.llm.clock import to_24_hour
from services.llm.completion import Completion
from services.llm.fallback import generate_with_fallback
from services.llm.guard import ScaffoldGuard
from services.llm.profile import LLMProfile
from services.memory.config import MemoryConfig
from services.router.missing import question_for
from services.zones import zone_of

INSTRUCTIONS = {
    "RESPOND": "Tell the person what you did or found.",
    "CLARIFY": "A detail is missing: {missing}. Say briefly what you did so far (if anything), then ask exactly "
               "one short question to get that detail. Do not pretend the missing part was done.",
}


@dataclass
class ActReply:
    text: str
    completion: Completion
    fallback: bool
    trail: list[dict[str, Any]]
    reply_mode: str


def act_reply(context: Any, turn: ActTurn, understanding: Any, session: Session, on_delta: Callable[[str], None],
              on_retry: Callable[[], None] | None = None, *, config: ActConfig, memory: MemoryConfig,
              dispatcher: ActDispatcher | None = None,
              profile: LLMProfile | None = None) -> ActReply:
    """Run the ACT loop for the turn and generate its reply (streamed through ``on_delta``).

    ``dispatcher`` narrows the skills (background turns leave out ``schedule`` and ``goal``).
    ``profile``: the compact one turns on the fast path, whose replies are written from the result.
    """
    fast = profile is not None and profile.compact
    outcome = run_act_turn(context, turn, understanding, session, config=config, memory=memory,
                           dispatcher=dispatcher, fast_path=fast)
    written = _fast_reply(outcome) if fast else None
    clock24 = bool(understanding.clock24)
    if outcome.question is not None or written is not None:
        text, completion, fallback = outcome.question or written or "", empty_completion(), False
        text = to_24_hour(text) if clock24 else text  # the person's own "at 4pm" in a reminder's words
        on_delta(text)
    else:
        completion, fallback = _generate(context, turn, understanding, outcome, on_delta, on_retry, profile)
        text = completion.text.strip()
        if fallback and fast:  # what the small model could not word, said plainly (in the final message): no apology
            text, fallback = _said_plainly(outcome), False
            text = to_24_hour(text) if clock24 else text
        elif fallback:
            text = done_summary(outcome.trail) or text
    trail = [*outcome.trail, {"type": "end", "reason": outcome.reason, "reply_mode": outcome.reply_mode,
                              "iterations": outcome.iterations}]
    if outcome.steered:
        reply = {"text": text, "mode": understanding.mode, "topic": understanding.topic}
        after_commit(session, lambda: steering.settle(context.redis, context.events, outcome.steered, turn.request,
                                                      reply))
    return ActReply(text, total_completion([*outcome.completions, completion], text), fallback, trail,
                    outcome.reply_mode)


def _fast_reply(outcome: ActOutcome) -> str | None:
    """The reply of a small-model turn, built from the action's result or the planner's answer (no LLM call).

    None when the model should word it: a recall's findings, or the answer to a confirmation.
    """
    if outcome.question is not None or outcome.reason not in (FAST_PATH, SMALL_PLAN, UNUSABLE):
        return None
    actions = _actions(outcome)
    last = actions[-1] if actions else None
    if last is not None and (last.get("ok") or not outcome.missing):
        if len(actions) > 1:  # several changes told in one message (services/act/list_edits): each said, in order
            replies = [plain_reply(action) for action in actions]
            if all(replies):
                return " ".join(replies)  # type: ignore[arg-type]  (all of them said)
        return plain_reply(last)
    if outcome.missing:  # the planner's answer, or the skill, lacks a detail: ask for it
        return question_for(outcome.missing)
    return NOT_THAT if outcome.reason == SMALL_PLAN else UNCLEAR


def _said_plainly(outcome: ActOutcome) -> str:
    """A small-model turn's reply when the model failed to word it: the recall's findings, or what was done."""
    actions = _actions(outcome)
    if not actions:
        return UNCLEAR
    last = actions[-1]
    if last.get("skill") == "recall" and last.get("ok"):
        return found_reply(last)
    return plain_reply(last) or UNCLEAR


def _actions(outcome: ActOutcome) -> list[dict[str, Any]]:
    return [entry for entry in outcome.trail if entry.get("type") == "action"]


def _generate(context: Any, turn: ActTurn, understanding: Any, outcome: ActOutcome, on_delta: Callable[[str], None],
              on_retry: Callable[[], None] | None, profile: LLMProfile | None = None) -> tuple[Completion, bool]:
    mode = outcome.reply_mode
    instructions = INSTRUCTIONS[mode].format(missing=outcome.missing or "")
    user_message = turn.request.text + "".join(f"\n{later.text}" for later in outcome.steered)
    compact = profile is not None and profile.compact
    messages = reply_messages(context.prompts, state=outcome.state, topic=understanding.topic,
                              user_message=user_message, instructions=instructions, reason=_reason_text(outcome),
                              zone=zone_of(outcome.zone_name), zone_name=outcome.zone_name, now=outcome.now,
                              prompt="compact/act-reply" if compact else "act-reply")
    role = "clarify" if mode == "CLARIFY" else "respond"
    # A CLARIFY reply asks for what is missing, whatever the model wrote ("Sure, I'll remind you on Friday." when
    # nothing was set). Not checked for refused things: it says what was done, in the person's own words.
    must_ask = question_for(outcome.missing) if mode == "CLARIFY" and outcome.missing else ""
    return generate_with_fallback(context.llm, role, messages, on_delta, on_retry=on_retry,
                                  guard=partial(ScaffoldGuard, message=turn.request.text,
                                                clock24=bool(understanding.clock24), must_ask=must_ask,
                                                scaffold=compact))


def done_summary(trail: list[dict[str, Any]]) -> str:
    """A plain reply from the trail when the reply LLM failed: the person still learns what was done."""
    done = [entry for entry in trail if entry.get("type") == "action" and entry.get("ok")]
    if not done:
        return ""
    lines = "\n".join(f"- {entry_line(entry)}" for entry in done)
    return f"I had trouble writing a proper answer, but this is what I did:\n{lines}"


def total_completion(completions: list[Completion], text: str) -> Completion:
    """One completion for the exchange: the reply's, with tokens summed over every LLM call of the turn."""
    last = completions[-1]
    return replace(
        last, text=text,
        prompt_tokens=sum(c.prompt_tokens for c in completions),
        completion_tokens=sum(c.completion_tokens for c in completions),
        total_tokens=sum(c.total_tokens for c in completions),
        latency_s=sum(c.latency_s for c in completions),
        usage_estimated=any(c.usage_estimated for c in completions),
    )


def _reason_text(outcome: ActOutcome) -> str:
    return {
        "no_actions": "finished", "confirmed": "the person confirmed the pending action",
        "declined": "the person declined the pending action", "fatigue": "stopped: too many actions",
        "iteration_cap": "stopped at the step limit", "wall_clock": "stopped: out of time",
        "llm_error": "stopped: the planning step failed", FAST_PATH: "done",
        "context_full": "stopped: too much to keep track of", SMALL_PLAN: "done",
    }.get(outcome.reason, outcome.reason)


def empty_completion() -> Completion:
    """The completion of a reply written without an LLM call (a confirmation question, an empty message): no
    tokens, no time."""
    return Completion(text="", model="", prompt_tokens=0, completion_tokens=0, total_tokens=0, latency_s=0.0)
