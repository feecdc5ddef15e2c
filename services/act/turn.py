"""One ACT turn from the outside: the innate skills, their dispatcher, and ``run_act_turn``.

The loop's mechanics (steps, confirmation, compaction) are in ``services.act.loop``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from sqlalchemy.orm import Session

from services.act.config import ActConfig
from services.act.dispatcher import ActDispatcher
from services.act.loop import ActLoop, ActOutcome, ActTurn
from services.act.skills import associate, forget, goals, introspect, lists, memorize, recall, schedule
from services.act.skills.base import Skill
from services.act.small_plan import plan_step
from services.act.transaction import statement_timeout
from services.memory.config import MemoryConfig

INNATE_SKILLS: tuple[Skill, ...] = (recall.SKILL, memorize.SKILL, introspect.SKILL, associate.SKILL,
                                    schedule.SKILL, lists.SKILL, goals.SKILL, forget.SKILL)

def innate_dispatcher(config: ActConfig) -> ActDispatcher:
    """The dispatcher with every innate skill (recall's schema takes its ``k`` limits from ``act.toml``)."""
    skills = tuple(recall.skill(config.skills) if skill is recall.SKILL else skill for skill in INNATE_SKILLS)
    return ActDispatcher(skills, timeout_s=config.dispatch.action_timeout_s,
                         release_grace_s=config.dispatch.release_grace_s)


def run_act_turn(context: Any, turn: ActTurn, understanding: Any, session: Session, *,
                 config: ActConfig, memory: MemoryConfig, dispatcher: ActDispatcher | None = None,
                 fast_path: bool = False) -> ActOutcome:
    """Run the loop for one message; never raises for skill or LLM failures (they end up in the trail).

    ``config``, ``memory``: what the worker read at start-up. ``fast_path`` (the small-model profile): try
    services/act/fastpath.py's plain requests, then one planning call of services/act/small_plan.py, instead of
    the multi-step loop.
    """
    if fast_path:  # a small model: no tool schemas built for a loop it does not run
        config = replace(config, loop=replace(config.loop, max_iterations=1, native_tools=False))
    loop = ActLoop(context, turn, understanding, session, config, dispatcher or innate_dispatcher(config), memory)
    with statement_timeout(session, config.dispatch.action_timeout_s):
        if not loop.answer_pending() and not (fast_path and loop.fast_step()):
            if fast_path:
                plan_step(loop)  # a small model: one constrained call names one action, no multi-step loop
            else:
                loop.run()
    return loop.outcome()
