"""ACT turns nobody typed: a scheduled prompt coming due, a goal being pursued.

They run the same bounded loop as a chat's ACT turn, with their own limits and a narrower
skill set: no ``schedule`` and no ``goal`` (a scheduled prompt that schedules prompts, or a
goal that spawns goals, would recurse without a person in the loop) and no ``forget`` (nothing
destructive without someone to confirm it). Status events go nowhere: there is no open chat;
the caller pushes the final reply to the person's proactive stream.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from services.act.config import ActConfig, process_act_config
from services.act.dispatcher import ActDispatcher
from services.act.reply import ActReply, act_reply
from services.act.turn import innate_dispatcher
from services.memory.config import MemoryConfig, process_memory_config
from services.memory.context import assemble
from services.queues import ChatRequest

LEFT_OUT = frozenset({"schedule", "goal", "forget"})


@dataclass
class BackgroundTurn:
    """The ``ActTurn`` of a background run: a request with no client listening."""

    request: ChatRequest

    def publish(self, context: Any, event: str, data: dict[str, Any]) -> str:
        return ""


@dataclass
class BackgroundUnderstanding:
    """What the loop reads from the digest's understanding: recalled memory, no chat history."""

    context_text: str = ""
    topic: str = "background"
    mode: str = "ACT"
    working_memory: list[dict[str, Any]] = field(default_factory=list)
    clock24: bool = False  # the 24-hour clock asked for: the reply's "4:20 PM" is written "16:20"


def background_dispatcher(config: ActConfig) -> ActDispatcher:
    """The innate skills minus the ones that must not run without a person (see the module doc)."""
    full = innate_dispatcher(config)
    return ActDispatcher([skill for name, skill in full.skills.items() if name not in LEFT_OUT],
                         timeout_s=config.dispatch.action_timeout_s, release_grace_s=config.dispatch.release_grace_s)


def configs(context: Any) -> tuple[ActConfig, MemoryConfig]:
    """act.toml and memory.toml, read once per process (kept in the context like the workers do)."""
    return (process_act_config(context.extras, context.settings.configs_dir),
            process_memory_config(context.extras, context.settings.configs_dir))


def run_background_turn(context: Any, session: Session, *, request_id: str, user_id: str, text: str,
                        now: datetime, wall_clock_s: float | None = None,
                        max_iterations: int | None = None) -> ActReply:
    """One ACT turn for ``text`` as ``user_id``, writing through ``session`` (the caller commits)."""
    act, memory = configs(context)
    if context.embedder is None:
        # The periodic worker starts without a model; the first scheduled prompt loads it, once.
        from services.embeddings import load_embedder

        context.embedder = load_embedder(context.settings.embedder, graph_dir=context.settings.models_dir)
    if wall_clock_s is not None or max_iterations is not None:
        act = replace(act, loop=replace(act.loop, wall_clock_s=wall_clock_s or act.loop.wall_clock_s,
                                        max_iterations=max_iterations or act.loop.max_iterations))
    request = ChatRequest(request_id=request_id, user_id=user_id, thread_id=f"background-{user_id}", text=text,
                          source="scheduled", received_at=now.timestamp())
    remembered = assemble(session, context.embedder, user_id, text, config=memory, now=now)
    understanding = BackgroundUnderstanding(context_text=remembered.text, clock24=remembered.clock24)
    return act_reply(context, BackgroundTurn(request), understanding, session, lambda text: None, config=act,
                     memory=memory, dispatcher=background_dispatcher(act))
