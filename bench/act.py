"""ACT loop overhead per iteration, excluding LLM time.

Starts a throwaway PostgreSQL (pgvector) and Redis, then runs whole ACT turns in-process with an
instant scripted LLM (an object, no HTTP) whose time is measured and subtracted. What remains is
the loop's own cost per iteration: prompt rendering, the compaction check, the critic, the
dispatch thread with its deadline and savepoint, the trail, the status event and the steering
check — once with a no-op skill, once with a real database skill (``list view``).

    python -m bench.act [--turns 30] [--iterations 5]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import uuid
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import redis

from services.act.config import ActConfig, LoopLimits
from services.act.dispatcher import ActDispatcher
from services.act.skills.base import Skill
from services.act.turn import INNATE_SKILLS, run_act_turn
from services.db import User, make_engine, make_sessionmaker
from services.llm.completion import Completion, ToolStep
from services.llm.output import ToolCall
from services.llm.roles import RoleConfig
from services.migrate import upgrade_head
from services.prompts import PromptLibrary
from services.queues import ChatRequest
from services.settings import Settings
from services.streams import EventLog, request_channel
from services.threads import ThreadStore
from tests.servers import start_postgres, start_redis
from workers.understanding import Understanding

USER = "bench"
NOOP = Skill("noop", "does nothing", {"type": "object", "properties": {}}, lambda ctx, args: {"ok": True})


class InstantLLM:
    """Asks for ``calls`` on the first ``iterations`` steps of a turn, then for nothing; times itself."""

    def __init__(self, calls: list[ToolCall], iterations: int) -> None:
        self.calls, self.iterations = calls, iterations
        self.steps_this_turn = 0
        self.seconds = 0.0

    def role(self, name: str) -> RoleConfig:
        return RoleConfig(context_window=32768, max_tokens=384)

    def tool_step(self, role: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
                  tool_choice: Any = None) -> ToolStep:
        started = time.perf_counter()
        calls = self.calls if self.steps_this_turn < self.iterations else []
        self.steps_this_turn += 1
        completion = Completion("", "instant", 1, 1, 2, 0.0)
        step = ToolStep("", list(calls), completion)
        self.seconds += time.perf_counter() - started
        return step


@dataclass
class BenchTurn:
    request: ChatRequest

    def publish(self, context: Any, event: str, data: dict[str, Any]) -> str:
        return context.events.publish(request_channel(self.request.request_id), event, data)


def _understanding(context: Any, thread_id: str) -> Understanding:
    """What the digest's understanding stage hands the loop: the mode and the thread as it was read."""
    return Understanding(topic="general", confidence=0.5, mode="ACT", thread=context.threads.state(thread_id),
                         working_memory=context.threads.working_memory(thread_id))


def run(label: str, context: Any, sessions: Any, calls: list[ToolCall], turns: int, iterations: int) -> None:
    llm = InstantLLM(calls, iterations)
    context.llm = llm
    config = replace(ActConfig(), loop=LoopLimits(max_iterations=iterations + 1, fatigue_budget=1000.0))
    dispatcher = ActDispatcher((*INNATE_SKILLS, NOOP), timeout_s=10.0)
    per_iteration, turn_times = [], []
    for _ in range(turns):
        llm.steps_this_turn, llm.seconds = 0, 0.0
        request = ChatRequest(str(uuid.uuid4()), USER, "bench-thread", "show my shopping list", "text", time.time())
        with sessions.begin() as session:
            started = time.perf_counter()
            outcome = run_act_turn(context, BenchTurn(request), _understanding(context, request.thread_id), session,
                                   config=config, dispatcher=dispatcher)
            elapsed = time.perf_counter() - started - llm.seconds
        assert outcome.reason == "no_actions", outcome.reason
        per_iteration.append(elapsed / (iterations + 1))
        turn_times.append(elapsed)
    ms = [value * 1000 for value in per_iteration]
    print(f"{label}: {turns} turns × {iterations} acting iterations (+1 final step), {len(calls)} action(s) each")
    print(f"  per step (turn time / steps, setup included)  p50 {statistics.median(ms):6.2f} ms   "
          f"mean {statistics.fmean(ms):6.2f} ms   max {max(ms):6.2f} ms")
    print(f"  per turn  p50 {statistics.median(turn_times) * 1000:6.1f} ms  (LLM time excluded)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=30)
    parser.add_argument("--iterations", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="engram-bench-act-") as tmp:
        postgres, valkey = start_postgres(Path(tmp) / "pg"), start_redis(Path(tmp) / "redis")
        try:
            engine = make_engine(postgres.url)
            upgrade_head(engine)
            sessions = make_sessionmaker(engine)
            with sessions.begin() as session:
                session.add(User(id=USER, timezone="Europe/Berlin"))
            client = redis.Redis.from_url(valkey.url)
            settings = Settings()
            context = type("BenchContext", (), {})()
            context.settings, context.redis, context.embedder = settings, client, None
            context.events, context.threads = EventLog(client), ThreadStore(client, ttl_s=3600)
            context.prompts = PromptLibrary(settings.prompts_dir)
            run("no-op skill", context, sessions, [ToolCall("c0", "noop", {})], args.turns, args.iterations)
            view = ToolCall("c0", "list", {"operation": "view"})
            run("list view (database)", context, sessions, [view], args.turns, args.iterations)
            client.close()
            engine.dispose()
        finally:
            valkey.stop()
            postgres.stop()


if __name__ == "__main__":
    main()
