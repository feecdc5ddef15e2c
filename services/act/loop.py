"""The bounded ACT loop (DESIGN.md §5): prompt → LLM → dispatch each action → trail → repeat.

The loop ends when the model asks for no action, or at the first limit of ``configs/act.toml``:
iteration cap, wall-clock cap, fatigue budget (each action costs more the later it comes), or a
consequential action held back for the person's confirmation. Skills write through the digest's
open session (flush, never commit), so nothing reaches PostgreSQL unless the whole turn is stored.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from sqlalchemy.orm import Session

from services.act import steering
from services.act.compaction import Budget, PromptState, stage_one, stage_two
from services.act.config import ActConfig
from services.act.critic import PENDING_FIELD, Critic, live_pending, reply_kind
from services.act.dispatcher import ActDispatcher, ActionResult
from services.act.fastpath import plain_action
from services.act.list_edits import list_edits
from services.act.models import list_holding
from services.act.prompt import skills_text, step_messages, world_state
from services.act.request_words import FAST_PATH
from services.act.skills.base import SessionGate, Skill, SkillContext
from services.act.transaction import after_commit
from services.errors import LLMError
from services.llm.completion import Completion
from services.llm.output import ToolCall
from services.memory.config import MemoryConfig
from services.queues import ChatRequest
from services.threads import history_text
from services.zones import user_zone, zone_of

logger = logging.getLogger(__name__)

CHECKPOINT_RESERVE, MIN_CHECKPOINT_CHARS, MAX_CHECKPOINT_CHARS = 200, 120, 2000
SHORT_ANSWER_WORDS = 4  # "yes, do it" ends the turn; "yes, and add eggs too" goes on to the loop


class ActTurn(Protocol):
    request: ChatRequest

    def publish(self, context: Any, event: str, data: dict[str, Any]) -> str: ...


@dataclass
class ActOutcome:
    trail: list[dict[str, Any]]
    state: PromptState
    reason: str
    reply_mode: str  # RESPOND | CLARIFY | CONFIRM
    question: str | None
    missing: str | None
    completions: list[Completion]
    steered: list[ChatRequest]
    iterations: int
    zone_name: str
    now: datetime


@dataclass
class _Counters:
    started: float = field(default_factory=time.monotonic)
    iteration: int = 0  # back to 0 after a stage-2 restart
    steps: int = 0  # LLM steps of the whole turn
    fatigue: float = 0.0
    restarts: int = 0


class ActLoop:
    """One turn's loop state and its steps; ``run`` is the loop itself."""

    def __init__(self, context: Any, turn: ActTurn, understanding: Any, session: Session, config: ActConfig,
                 dispatcher: ActDispatcher, memory: MemoryConfig) -> None:
        self.context, self.turn, self.request = context, turn, turn.request
        self.understanding, self.session, self.config, self.dispatcher = understanding, session, config, dispatcher
        self.critic = Critic(config.critic)
        self.counters = _Counters()
        self.trail: list[dict[str, Any]] = []
        self.completions: list[Completion] = []
        self.steered: list[ChatRequest] = []
        self.reason: str | None = None
        self.missing: str | None = None
        self.pending: dict[str, Any] | None = None
        self.now = datetime.now(UTC)
        self.zone_name = user_zone(session, self.request.user_id)
        self.zone = zone_of(self.zone_name)
        working_memory = understanding.working_memory
        self.state = PromptState(history=history_text(working_memory), view=[])
        self.recent_user_text = " ".join(str(item.get("user", "")) for item in working_memory[-2:])
        self._world: str | None = None  # read on the first step: a yes/no to a confirmation never needs it
        self.skills = skills_text(dispatcher)
        self.gate = SessionGate(session, claim_wait_s=config.dispatch.release_grace_s)
        self.skill_context = SkillContext(
            user_id=self.request.user_id, thread_id=self.request.thread_id, request_id=self.request.request_id,
            user_text=self.request.text, zone=self.zone, zone_name=self.zone_name, now=self.now, config=config,
            gate=self.gate, embedder=getattr(context, "embedder", None), catalog=dispatcher.catalog(),
            memory=memory,
        )
        self.tools = dispatcher.tools() if config.loop.native_tools else []
        role = context.llm.role("act")
        self.budget = Budget(config.compaction, role.context_window, role.max_tokens,
                             fixed_chars=len(json.dumps(self.tools, separators=(",", ":"))) if self.tools else 0)

    # --- the loop ------------------------------------------------------------------------------

    def run(self) -> None:
        """Step until the model is done or a limit is hit."""
        while self.reason is None:
            self.reason = self._limit()
            if self.reason is not None:
                break
            messages = self._fitting_messages()
            step = self._step(messages) if messages is not None else None
            if step is None:
                break
            if not step.calls:
                if not self._steer():
                    self.reason = "no_actions"
                continue
            self._act(step.calls)
            self.counters.iteration += 1
            self._steer()

    def fast_step(self) -> bool:
        """Run a plain list / reminder request, or the list changes a message tells, without a planning step; False
        when the message is not one."""
        plain = plain_action(self.request.text, self.understanding.signals, self.now, self.zone,
                             self.config.due)
        edits = list_edits(
            self.request.text, self.understanding.signals,
            lambda item: list_holding(self.session, self.request.user_id, item),  # a swap on the list holding it
        ) if plain is None or plain.skill == "list" else []
        # A list request the fast path reads may be one of several changes told at once: "Put coconut water on the
        # grocery list too, and take off the bitters, …" added the coconut water and kept the bitters.
        actions = edits if plain is None or len(edits) > 1 else [plain]
        if not actions:
            return False
        self.take([ToolCall(FAST_PATH, action.skill, action.arguments) for action in actions], FAST_PATH)
        return True

    def take(self, calls: list[ToolCall], how: str) -> None:
        """Run actions chosen without the planning loop, mark their trail entries ``how``, and end the turn."""
        start = len(self.trail)
        self._act(calls)
        for entry in self.trail[start:]:
            entry[how] = True
        self.reason = how

    def _limit(self) -> str | None:
        limits = self.config.loop
        if self.pending is not None:
            return "confirmation"
        if time.monotonic() - self.counters.started >= limits.wall_clock_s:
            return "wall_clock"
        if self.counters.fatigue >= limits.fatigue_budget:
            return "fatigue"
        if self.counters.iteration >= limits.max_iterations:
            return "iteration_cap"
        return None

    def _step(self, messages: list[dict[str, Any]]) -> Any:
        try:
            step = self.context.llm.tool_step("act", messages, self.tools)
        except LLMError as exc:
            logger.warning("ACT step failed: %s", exc)
            self.reason = "llm_error"
            return None
        self.completions.append(step.completion)
        self.counters.steps += 1
        return step

    def _act(self, calls: list[ToolCall]) -> None:
        limits = self.config.loop
        for index, call in enumerate(calls):
            if index >= limits.max_actions_per_step:
                self._skip(call, f"at most {limits.max_actions_per_step} actions per step; ask again for the rest")
                continue
            cost = limits.action_cost(self.counters.iteration)
            if self.counters.fatigue + cost > limits.fatigue_budget:
                self._skip(call, "fatigue budget spent")
                self.reason = "fatigue"
                return
            if time.monotonic() - self.counters.started >= limits.wall_clock_s:
                self.reason = "wall_clock"
                return
            if self.pending is not None:
                self._skip(call, "waiting for the person to confirm an earlier action")
                continue
            self.counters.fatigue += cost
            self.turn.publish(self.context, "status", {"stage": "acting", "skill": call.name})
            self._one(call)

    def _one(self, call: ToolCall) -> None:
        skill = self.dispatcher.skills.get(call.name)
        arguments, notes = self.critic.correct(skill, call.arguments, self.request.text)
        prepared = self.dispatcher.prepare(call.name, arguments, call.arguments_error)
        if isinstance(prepared, ActionResult):
            self._record(call.name, arguments, prepared, notes=notes)
            return
        skill, checked = prepared
        assessment = self.critic.assess(skill, checked, self._evidence(), self.now, self.zone, self.request.text)
        if not assessment.run:
            self._hold(skill, checked, assessment.confidence, assessment.reasons)
            return
        result = self._run(skill, checked)
        retry = self.critic.retry_arguments(skill.name, checked, result.ok, result.result)
        if retry is not None:
            notes.append(f"no results for {checked.get('query')!r}; retried with {retry.get('query')!r}")
            checked, result = retry, self._run(skill, retry)
        self._record(skill.name, checked, result, notes=notes, confidence=assessment.confidence)

    def _run(self, skill: Skill, arguments: dict[str, Any]) -> ActionResult:
        return self.dispatcher.run(skill.name, lambda ctx: skill.run(ctx, arguments), self.skill_context)

    def _hold(self, skill: Skill, arguments: dict[str, Any], confidence: float, reasons: list[str]) -> None:
        """Keep a consequential action for the person's confirmation instead of running it."""
        shown: dict[str, Any] = {}
        if skill.preview is not None:
            preview = self.dispatcher.run(f"{skill.name}.preview", lambda ctx: skill.preview(ctx, arguments),
                                          self.skill_context)
            if not preview.ok or preview.result is None:
                self._record(skill.name, arguments, preview)
                return
            arguments = preview.result.get("arguments", arguments)
            shown = {key: value for key, value in preview.result.items() if key != "arguments"}
        description = skill.describe({**arguments, **shown})
        self.pending = {"skill": skill.name, "arguments": arguments, "description": description,
                        "request_id": self.request.request_id, "created_at": time.time()}
        self._add({"type": "pending", "skill": skill.name, "arguments": arguments, "description": description,
                   "critic": {"confidence": confidence, "reasons": reasons}, "iteration": self.counters.iteration})
        self._after_commit(lambda: self._save_pending(self.pending))

    def _skip(self, call: ToolCall, why: str) -> None:
        self._add({"type": "skipped", "skill": call.name, "arguments": call.arguments, "reason": why,
                   "iteration": self.counters.iteration})

    def _record(self, name: str, arguments: dict[str, Any], result: ActionResult, *, notes: list[str] | None = None,
                confidence: float | None = None, confirmed: bool = False) -> None:
        entry: dict[str, Any] = {"type": "action", "skill": name, "arguments": arguments,
                                 **result.trail_fields(), "iteration": self.counters.iteration}
        if notes or confidence is not None:
            entry["critic"] = {"confidence": confidence, "notes": notes or []}
        if confirmed:
            entry["confirmed"] = True
        error = result.error or {}
        if error.get("code") == "needs_info":
            self.missing = str(error.get("missing") or error.get("message") or "the missing detail")
        elif result.ok:
            self.missing = None
        self._add(entry)

    def _add(self, entry: dict[str, Any]) -> None:
        self.trail.append(entry)
        self.state.view.append(entry)

    def _evidence(self) -> str:
        """What the person said that actions may be grounded in: this message, folded ones, the last turns; and the
        lists this turn's actions changed ("As for Saturday, cross the charcoal off the list. Put firelighters on
        instead.": the list holding the charcoal is the one meant)."""
        changed = [str(entry["result"]["list"]) for entry in self.trail
                   if entry.get("ok") and isinstance(entry.get("result"), dict) and entry["result"].get("list")]
        return " ".join([self.request.text, *(later.text for later in self.steered), self.recent_user_text, *changed])

    @property
    def world(self) -> str:
        """What exists right now (lists, reminders, goals), read once per turn and only when a step needs it."""
        if self._world is None:
            self._world = world_state(self.session, self.request.user_id, self.zone_name,
                                      self.now.astimezone(self.zone))
        return self._world

    # --- steering, confirmation, compaction -----------------------------------------------------

    def _steer(self) -> bool:
        seen = {later.request_id for later in self.steered}
        found = steering.later_requests(self.context.redis, self.context.events, self.request, seen)
        for later in found:
            steering.announce(self.context.events, later, self.request)
            self.steered.append(later)
            self._add({"type": "steering", "request_id": later.request_id, "text": later.text,
                       "iteration": self.counters.iteration})
        return bool(found)

    def answer_pending(self) -> bool:
        """Handle a reply to a pending confirmation; True when that reply is the whole turn."""
        extra = self.context.threads.state(self.request.thread_id).extra
        if PENDING_FIELD not in extra:
            return False
        self._after_commit(lambda: self._save_pending(None))
        pending = live_pending(extra, self.config.critic.pending_ttl_s)
        if pending is None:
            return False
        decision = {"confirm": "confirmed", "cancel": "declined"}.get(reply_kind(self.request.text) or "", "dropped")
        self._add({"type": "confirmation", "decision": decision, "skill": pending.get("skill"),
                   "description": pending.get("description"), "request_id": pending.get("request_id")})
        if decision == "confirmed":
            self.turn.publish(self.context, "status", {"stage": "acting", "skill": pending.get("skill")})
            result = self.dispatcher.dispatch(str(pending.get("skill")), dict(pending.get("arguments") or {}),
                                              self.skill_context)
            self._record(str(pending.get("skill")), dict(pending.get("arguments") or {}), result, confirmed=True)
        if decision == "dropped" or len(self.request.text.split()) > SHORT_ANSWER_WORDS:
            return False
        self.reason = decision
        return True

    def _save_pending(self, pending: dict[str, Any] | None) -> None:
        thread_id = self.request.thread_id
        extra = self.context.threads.state(thread_id).extra
        if pending is None:
            extra.pop(PENDING_FIELD, None)
        else:
            extra[PENDING_FIELD] = pending
        self.context.threads.save_fields(thread_id, extra=extra)

    def _after_commit(self, callback: Callable[[], None]) -> None:
        after_commit(self.session, callback)

    def _messages(self) -> list[dict[str, Any]]:
        user_message = self.request.text
        if self.steered:
            added = "\n".join(f"- {later.text}" for later in self.steered)
            user_message += f"\n\nSent while you were working on it:\n{added}"
        return step_messages(self.context.prompts, state=self.state, skills=self.skills, world=self.world,
                             context_text=self.understanding.context_text,
                             user_message=user_message, zone=self.zone, zone_name=self.zone_name, now=self.now)

    def _fitting_messages(self) -> list[dict[str, Any]] | None:
        """The step prompt, compacted (stage 1, then stage 2) when it nears the window; None if it cannot fit."""
        messages = self._messages()
        if not self.budget.over(messages):
            return messages
        if any(entry.get("type") != "compaction" for entry in self.state.view):
            messages = self._compacted(lambda: stage_one(self.state, self.counters.iteration), messages)
            if not self.budget.over(messages):
                return messages
        if self.counters.restarts < self.config.compaction.max_restarts:
            self.counters.restarts += 1
            room = self._checkpoint_room()
            messages = self._compacted(lambda: stage_two(self.state, self.counters.iteration, self.counters.restarts,
                                                         self.request.text, room), messages)
            self.counters.iteration = 0
        if self.budget.tokens(messages) <= self.budget.limit:
            return messages
        self.reason = "context_full"
        return None

    def _compacted(self, stage: Callable[[], dict[str, Any]], messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        before = self.budget.tokens(messages)
        audit = stage()
        messages = self._messages()
        audit.update(tokens_before=before, tokens_after=self.budget.tokens(messages))
        self.trail.append(audit)
        logger.info("ACT compaction stage %s: %d → %d tokens", audit["stage"], before, audit["tokens_after"])
        return messages

    def _checkpoint_room(self) -> int:
        """Characters a stage-2 checkpoint may take so that the restarted prompt fits."""
        saved = (self.state.history, self.state.current_state, self.state.view)
        self.state.history, self.state.current_state, self.state.view = "", "", []
        bare = self.budget.tokens(self._messages())
        self.state.history, self.state.current_state, self.state.view = saved
        # Keep back room for the history placeholder and the restart marker that replace them.
        room = int((self.budget.trigger - bare) * self.config.compaction.chars_per_token * 0.9) - CHECKPOINT_RESERVE
        return max(MIN_CHECKPOINT_CHARS, min(MAX_CHECKPOINT_CHARS, room))

    def outcome(self) -> ActOutcome:
        """How the loop ended and which terminal mode the reply takes."""
        reason = self.reason or "no_actions"
        mode = "CONFIRM" if self.pending is not None else "CLARIFY" if self.missing else "RESPOND"
        question = confirmation_question(self.pending["description"]) if self.pending is not None else None
        return ActOutcome(trail=self.trail, state=self.state, reason=reason, reply_mode=mode, question=question,
                          missing=self.missing, completions=self.completions, steered=self.steered,
                          iterations=self.counters.steps, zone_name=self.zone_name, now=self.now)


def confirmation_question(description: str) -> str:
    """What the person is asked before a held-back action runs."""
    return f"Before I do that, please confirm: {description}. Reply \"yes\" to go ahead or \"no\" to leave it."
