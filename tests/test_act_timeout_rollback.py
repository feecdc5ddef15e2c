"""A skill abandoned at its deadline keeps nothing it wrote, and the skills after it keep theirs — however slow the
machine: the abandoned skill waits until it is abandoned (no sleep racing the deadline), and only it has a short
deadline (a 0.2 s deadline for every skill once timed out the list skill too, under load)."""

from __future__ import annotations

import time

import pytest
from sqlalchemy import select

from services.act.config import ActConfig, DispatchLimits, LoopLimits
from services.act.dispatcher import ActDispatcher
from services.act.models import NamedList
from services.act.skills.base import Skill
from services.act.turn import INNATE_SKILLS, run_act_turn
from services.memory.config import load_memory_config
from tests.llm_steps import ToolCalls
from tests.test_act_loop import ANY_ARGS, DONE, _turn, _understanding, actions, person  # noqa: F401 - fixture

pytestmark = pytest.mark.integration

SHORT_S = 0.2  # the abandoned skill's deadline; it waits to be abandoned, so any length would do
ROOMY_S = 120.0  # every other skill's (and every statement's): never reached, whatever the load
WAIT_AT_MOST_S = 120.0


def _write_then_wait(ctx, args):  # type: ignore[no-untyped-def]
    """Writes a list, then waits until the dispatcher abandons it, then claims success (too late)."""
    ctx.session.add(NamedList(user_id=ctx.user_id, name="half-written"))
    ctx.session.flush()
    waited_until = time.monotonic() + WAIT_AT_MOST_S
    while not ctx.ticket.cancelled and time.monotonic() < waited_until:
        time.sleep(0.01)
    return {"done": True}


class _OnlyOneTimesOut(ActDispatcher):
    """The skill under test has a short deadline; every other skill a roomy one."""

    def run(self, label, handler, context):  # type: ignore[no-untyped-def]
        self.timeout_s = SHORT_S if label == "write_wait" else ROOMY_S
        return super().run(label, handler, context)


def test_an_abandoned_skills_writes_are_rolled_back_and_the_next_skills_kept(worker_context, fake_llm, db_engine,
                                                                             person) -> None:  # noqa: F811
    fake_llm.script(ToolCalls([("write_wait", {})]),
                    ToolCalls([("list", {"operation": "add", "name": "kept", "items": ["tea"]})]), DONE)
    cfg = ActConfig(loop=LoopLimits(max_iterations=10, wall_clock_s=600.0, fatigue_budget=100.0),
                    dispatch=DispatchLimits(action_timeout_s=ROOMY_S, release_grace_s=WAIT_AT_MOST_S))
    dispatcher = _OnlyOneTimesOut((*INNATE_SKILLS, Skill("write_wait", "writes, then waits", ANY_ARGS,
                                                         _write_then_wait)),
                                  timeout_s=ROOMY_S, release_grace_s=WAIT_AT_MOST_S)
    with worker_context.sessions.begin() as session:
        outcome = run_act_turn(worker_context, _turn("add tea to my kept list"), _understanding(worker_context),
                               session, config=cfg, memory=load_memory_config(worker_context.settings.configs_dir),
                               dispatcher=dispatcher)
    abandoned, added = actions(outcome)
    assert abandoned["ok"] is False and abandoned["error"]["code"] == "timeout"
    assert added["ok"] is True
    with db_engine.connect() as connection:
        assert sorted(connection.execute(select(NamedList.name)).scalars()) == ["kept"]
