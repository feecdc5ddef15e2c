"""Step 5 of the digest job: generate the reply with the chosen mode's prompt."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from sqlalchemy.orm import Session

from services.act.critic import awaits_confirmation
from services.act.reply import act_reply, empty_completion
from services.llm.completion import Completion
from services.llm.fallback import generate_with_fallback
from services.llm.guard import ScaffoldGuard
from services.llm.profile import compact_messages, turn_note
from services.prompts import fenced
from services.router.missing import clarifying_question
from services.router.mood_words import sad_news
from services.threads import history_text
from workers.context import WorkerContext, act_config, llm_profile, memory_config
from workers.turn import Turn
from workers.understanding import Understanding

# Coalesce streamed tokens into fewer events: the first goes out at once (time to first
# token is what a person feels), later ones at most every 40 ms or 200 characters.
DELTA_FLUSH_S = 0.04
DELTA_FLUSH_CHARS = 200
MODE_PROMPTS = {"RESPOND": "respond", "CLARIFY": "clarify", "ACKNOWLEDGE": "acknowledge", "ACT": "act"}
# Router signals of a message that asks for something ("Tell me a joke", "Write a haiku"), not only tells.
ASKING_SIGNALS = ("question", "imperative", "writing_task", "action_request", "capability_question")


@dataclass
class Reply:
    text: str
    completion: Completion
    fallback: bool = False
    tool_trail: list[dict[str, Any]] = field(default_factory=list)
    # Streamed text not yet sent as a ``delta``: it goes out with ``message``, in the same round trip.
    unsent: str = ""
    # Under the compact profile, the note the model read before the message: kept with the turn in working
    # memory so that the thread's later prompts repeat it where it stood (services/llm/profile.history_messages).
    note: str = ""

    def tool_counts(self) -> dict[str, int]:
        return dict(Counter(step["skill"] for step in self.tool_trail if step.get("type", "action") == "action"))

    @classmethod
    def from_stored(cls, row: Any) -> Reply:
        completion = Completion(
            text=row.reply,
            model="",
            prompt_tokens=row.prompt_tokens,
            completion_tokens=row.completion_tokens,
            total_tokens=row.total_tokens,
            latency_s=0.0,
        )
        return cls(text=row.reply, completion=completion, fallback=row.fallback, tool_trail=list(row.tool_trail or []))


class DeltaPublisher:
    """Publishes streamed text as ``delta`` events, coalescing bursts of tiny chunks."""

    def __init__(self, context: WorkerContext, turn: Turn) -> None:
        self.context = context
        self.turn = turn
        self.buffer: list[str] = []
        self.last_flush = 0.0
        self.sent_any = False

    def __call__(self, text: str) -> None:
        self.buffer.append(text)
        now = time.monotonic()
        size = sum(len(part) for part in self.buffer)
        if not self.sent_any or now - self.last_flush >= DELTA_FLUSH_S or size >= DELTA_FLUSH_CHARS:
            self.flush()

    def flush(self) -> None:
        if not self.buffer:
            return
        self.turn.publish(self.context, "delta", {"text": "".join(self.buffer)})
        self.buffer.clear()
        self.last_flush = time.monotonic()
        self.sent_any = True

    def take_unsent(self) -> str:
        """The buffered text, handed to the caller to send with ``message`` (one round trip less per turn)."""
        unsent = "".join(self.buffer)
        self.buffer.clear()
        return unsent

    def restart(self) -> None:
        """Before a retry: drop unsent text and tell the client the reply starts over."""
        self.buffer.clear()
        if self.sent_any:
            self.turn.publish(self.context, "status", {"stage": "retrying"})
        self.sent_any = False


def acts(context: WorkerContext, turn: Turn, understanding: Understanding) -> bool:
    """Does this turn run the ACT loop (whose skills write in the digest's transaction)? ACT, or a "yes"/"no"
    answering the critic's question, whatever mode the router chose for it."""
    pending = understanding.thread.extra if understanding.thread is not None else {}
    return understanding.mode == "ACT" or awaits_confirmation(pending, turn.request.text,
                                                              act_config(context).critic.pending_ttl_s)


def generate(context: WorkerContext, turn: Turn, understanding: Understanding, session: Session | None) -> Reply:
    """IGNORE → no LLM call; RESPOND / CLARIFY / ACKNOWLEDGE → one streamed call; ACT (``acts``) → the loop.

    ``session`` is the digest's open transaction, which ACT skills write in (the exchange is stored in
    it afterwards); None for a turn that does not act.
    """
    started = time.monotonic()
    limits = act_config(context)
    if acts(context, turn, understanding):
        if session is None:
            raise ValueError("an ACT turn needs the digest's transaction")
        deltas = DeltaPublisher(context, turn)
        act = act_reply(context, turn, understanding, session, deltas, on_retry=deltas.restart, config=limits,
                        memory=memory_config(context), profile=llm_profile(context))
        turn.mark("generation_s", time.monotonic() - started)
        return Reply(text=act.text, completion=act.completion, fallback=act.fallback, tool_trail=act.trail,
                     unsent=deltas.take_unsent())
    if understanding.mode == "IGNORE":
        return Reply(text="", completion=empty_completion())
    messages = build_messages(context, turn, understanding)
    deltas = DeltaPublisher(context, turn)
    role = prompt_name(understanding, llm_profile(context).compact)
    # What the person asked for holds under every profile; the small model's scaffolding (and its repeat of the
    # person's message) is repaired under the compact one only.
    must_ask = clarifying_question(understanding.signals) if understanding.mode == "CLARIFY" else ""
    guard = partial(ScaffoldGuard, message=turn.request.text, refused=understanding.refused,
                    clock24=understanding.clock24, must_ask=must_ask, scaffold=llm_profile(context).compact)
    completion, fallback = generate_with_fallback(context.llm, role, messages, deltas, on_retry=deltas.restart,
                                                  guard=guard)
    turn.mark("generation_s", time.monotonic() - started)
    return Reply(text=completion.text.strip(), completion=completion, fallback=fallback, unsent=deltas.take_unsent(),
                 note=turn_note(messages) if llm_profile(context).compact else "")


def prompt_name(understanding: Understanding, compact: bool) -> str:
    """The mode's prompt (and role); under the compact profile a RESPOND that asks nothing is answered as a reaction.

    Told "I play tennis at the club", a 0.5B model under the answering prompt alone said it back ("You play
    tennis at the club") or spoke as the person in 5 of 14 statements; the reaction's instruction just before
    the message asks for a reaction of its own (the guard catches the rest).
    """
    name = MODE_PROMPTS.get(understanding.mode, "respond")
    asks = any(understanding.signals.get(signal) for signal in ASKING_SIGNALS)
    return "acknowledge" if compact and name == "respond" and not asks else name


def reaction_prompt(name: str, text: str) -> str:
    """A reaction to bad news is sympathy: under the reaction's prompt alone the 1.5B met "My back is hurting from
    sitting so much" and "Paper is rejected from first journal" with "That's great to hear!"."""
    return "sympathise" if name == "acknowledge" and sad_news(text) else name


def build_messages(context: WorkerContext, turn: Turn, understanding: Understanding) -> list[dict[str, str]]:
    """System prompt of the mode (history rendered as text inside it) plus the user's message.

    Under the compact profile: a short, stable system prompt, the history as chat turns, the memory note.
    """
    request = turn.request
    profile = llm_profile(context)
    if profile.compact:
        # Every chat mode shares one prefix (the answering prompt, what is known about the person, the history):
        # the model reads only what changed since the thread's last turn, whatever mode that turn had. A
        # reaction or a clarifying question differs only in the instruction just before the message.
        name = prompt_name(understanding, compact=True)
        system = context.prompts.render(profile.prompt("respond"))
        instructions = [] if name == "respond" else [context.prompts.render(
            profile.prompt(reaction_prompt(name, request.text)),
            missing=understanding.signals.get("missing", "") or "the details needed")]
        if understanding.untold and name == "respond":  # asked of what was never told, the 1.5B made it up
            instructions.append(context.prompts.render(profile.prompt("untold"), thing=understanding.untold))
        if understanding.answer_in:  # told in memory alone, the 1.5B answered in the message's language
            instructions.append(context.prompts.render(profile.prompt("answer-in"), language=understanding.answer_in))
        hint = "\n\n".join(part.strip() for part in instructions if part.strip())
        note = "" if name == "acknowledge" else understanding.note_text  # a reaction needs no recall of its own
        return compact_messages(system, understanding.working_memory, note, request.text, profile.budgets,
                                about_text=understanding.about_text, hint=hint)
    system = context.prompts.render(
        MODE_PROMPTS.get(understanding.mode, "respond"),
        history=history_text(understanding.working_memory),
        topic=understanding.topic,
        context=fenced("memory", understanding.context_text) if understanding.context_text else "(nothing recalled)",
        missing=understanding.signals.get("missing", "") or "the details needed",
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": request.text}]
