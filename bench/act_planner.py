"""Does the ACT planner end a request the fast path does not take in the right skill, or a plain answer?

Through the real `POST /chat` path of an `engram run` this bench starts itself (its own data directory
and port; the embedded local model, ``ENGRAM_LOCAL_MODEL`` picks which, or the endpoint of
OPENAI_BASE_URL): each request of bench/act_requests.toml is sent by a user of its own, in a new thread,
after the file's seed commands (lists, reminders, goals, facts: fast-path commands, no model) have built
the same world for everyone. The turn's stored tool trail is then scored against the request's expected
outcomes (an action of the right skill, operation and arguments that ran, or one held for the person's
"yes"; or no change at all, a plain reply), and the reply must be no apology ("I had trouble ...").

Printed per split (tuning, frozen apart): right, of which held for confirmation, wrong, apologies,
time per request p50 / max (the whole turn: routing, planning, the skill, the reply). Timings depend
on what else runs on the cores; the load average is printed.

    python -m bench.act_planner [--split tuning|frozen|all] [--only N,M] [--json out.json] [--show-frozen]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import create_engine, text

from bench.local import TurnResult, new_thread, percentile, turn
from bench.pipeline import unthrottled_configs
from services.db import sqlalchemy_url
from services.settings import Settings
from tests.system import System, running_system

REQUESTS = Path(__file__).with_name("act_requests.toml")
TOKEN_PREFIX = "act-bench-"
APOLOGIES = ("i had trouble",)


@dataclass
class Request:
    index: int
    text: str
    split: str
    expect: list[dict[str, Any]]

    @property
    def user(self) -> str:
        return f"act-bench-{self.index}"

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {TOKEN_PREFIX}{self.index}"}


@dataclass
class Outcome:
    index: int
    split: str
    text: str
    mode: str
    reply: str
    seconds: float
    right: bool
    pending: bool
    apology: bool
    actions: list[dict[str, Any]] = field(default_factory=list)
    end: str = ""


def load_requests() -> tuple[list[str], list[Request]]:
    data = tomllib.loads(REQUESTS.read_text(encoding="utf-8"))
    requests = [Request(index, str(item["text"]), str(item["split"]), list(item["expect"]))
                for index, item in enumerate(data["request"], 1)]
    return list(data["seed"]), requests


def _words_in(value: Any, words: list[str]) -> bool:
    said = " ".join(map(str, value)) if isinstance(value, list) else str(value if value is not None else "")
    return all(word.lower() in said.lower() for word in words)


def matches(expect: dict[str, Any], action: dict[str, Any]) -> bool:
    """Whether one trail entry (an action or a held one) is the expected skill, operation and arguments."""
    arguments = action.get("arguments") or {}
    if action.get("skill") != expect["skill"]:
        return False
    if "op" in expect and arguments.get("operation") != expect["op"]:
        return False
    return all(_words_in(arguments.get(name), words) for name, words in expect.get("words", {}).items())


def score(request: Request, result: TurnResult, trail: list[dict[str, Any]]) -> Outcome:
    done = [entry for entry in trail if entry.get("type") == "action" and entry.get("ok")]
    held = [entry for entry in trail if entry.get("type") == "pending"]
    changed = [entry for entry in done if (entry.get("arguments") or {}).get("operation") not in ("view", "list")
               and entry.get("skill") not in ("recall", "introspect", "associate")]
    apology = result.fallback or result.reply.strip().lower().startswith(APOLOGIES) or not result.reply.strip()
    right = pending = False
    for expect in request.expect:
        if expect["skill"] == "none":
            right = right or (not changed and not held)
            continue
        replied = _words_in(result.reply, expect.get("reply", []))
        if any(matches(expect, entry) for entry in done) and replied:
            right = True
        elif any(matches(expect, entry) for entry in held):
            right = pending = True
    end = next((str(entry.get("reason")) for entry in trail if entry.get("type") == "end"), "")
    shown = [{key: entry.get(key) for key in ("type", "skill", "arguments", "ok", "error") if key in entry}
             for entry in trail if entry.get("type") in ("action", "pending")]
    return Outcome(request.index, request.split, request.text, result.mode, result.reply, result.message_s,
                   right and not apology, pending, apology, shown, end)


def last_trail(engram: System, user: str) -> list[dict[str, Any]]:
    engine = create_engine(sqlalchemy_url(engram.urls()[1]))
    try:
        with engine.connect() as connection:
            trail = connection.execute(text("SELECT tool_trail FROM exchanges WHERE user_id = :u ORDER BY id DESC "
                                            "LIMIT 1"), {"u": user}).scalar()
    finally:
        engine.dispose()
    return list(trail or [])


def run_request(engram: System, seed: list[str], request: Request) -> Outcome:
    thread = new_thread(engram, request.headers)
    for line in seed:
        seeded = turn(engram, line, thread, request.headers)
        if seeded.mode != "ACT":
            print(f"  seed {line!r} went to {seeded.mode}: {seeded.reply[:80]!r}", flush=True)
    thread = new_thread(engram, request.headers)
    started = time.monotonic()
    try:
        result = turn(engram, request.text, thread, request.headers)
    except httpx.HTTPError as exc:
        result = TurnResult(request.text, "", "error", None, time.monotonic() - started, True, type(exc).__name__)
    return score(request, result, last_trail(engram, request.user))


def table(outcomes: list[Outcome], show_frozen: bool) -> str:
    lines = [f"{'split':<8} {'n':>3} {'right':>6} {'held':>5} {'plain':>6} {'apology':>8} {'p50 s':>6} {'max s':>6}"]
    for split in ("tuning", "frozen"):
        chosen = [o for o in outcomes if o.split == split]
        if not chosen:
            continue
        seconds = [o.seconds for o in chosen]
        lines.append(f"{split:<8} {len(chosen):>3} {sum(o.right for o in chosen):>6} "
                     f"{sum(o.right and o.pending for o in chosen):>5} {sum(not o.actions for o in chosen):>6} "
                     f"{sum(o.apology for o in chosen):>8} {percentile(seconds, 0.5):>6.1f} {max(seconds):>6.1f}")
    for outcome in outcomes:
        if outcome.right or (outcome.split == "frozen" and not show_frozen):
            continue
        lines.append(f"  wrong #{outcome.index} {outcome.text!r} [{outcome.mode}, {outcome.end}] "
                     f"{json.dumps(outcome.actions)[:300]} → {outcome.reply[:160]!r}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("tuning", "frozen", "all"), default="all")
    parser.add_argument("--only", help="comma-separated request numbers (1-based, file order)")
    parser.add_argument("--json", type=Path, help="write every outcome here")
    parser.add_argument("--show-frozen", action="store_true", help="print the frozen split's wrong requests too")
    parser.add_argument("--report", type=Path, help="print the table of a --json file written before")
    args = parser.parse_args()
    if args.report:
        saved = json.loads(args.report.read_text())
        print(f"{args.report}: {saved['model']}")
        print(table([Outcome(**o) for o in saved["outcomes"]], args.show_frozen))
        return
    seed, requests = load_requests()
    only = {int(n) for n in args.only.split(",")} if args.only else None
    requests = [r for r in requests if args.split in ("all", r.split) and (only is None or r.index in only)]
    data_dir = Path(tempfile.mkdtemp(prefix="engram-bench-act-")) / "data"
    data_dir.mkdir(parents=True)
    tokens = ",".join(f"{TOKEN_PREFIX}{r.index}:{r.user}" for r in requests)
    model = os.environ.get("OPENAI_BASE_URL") or f"the embedded local model {Settings.from_env().local_model}"
    load_before = " ".join(f"{value:.1f}" for value in os.getloadavg())
    outcomes: list[Outcome] = []
    configs = unthrottled_configs(data_dir.parent / "configs")  # 14 chats a person in a minute: no rate limit
    with running_system(data_dir, ENGRAM_API_TOKENS=tokens, ENGRAM_CONFIGS_DIR=str(configs)) as engram:
        print(f"bench.act_planner: {len(requests)} requests on {model}; load average {load_before}", flush=True)
        for request in requests:
            outcome = run_request(engram, seed, request)
            outcomes.append(outcome)
            verdict = "right" if outcome.right else "WRONG"
            shown = outcome.split == "tuning" or args.show_frozen
            print(f"  #{request.index} {request.split} {verdict} {outcome.seconds:.1f} s"
                  + (f" {request.text!r} → {outcome.reply[:100]!r}" if shown else ""), flush=True)
            if args.json:
                args.json.write_text(json.dumps({"model": model, "outcomes": [asdict(o) for o in outcomes]},
                                                indent=1))
    print(table(outcomes, args.show_frozen))
    load = " ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"load average {load} (at the start {load_before})")


if __name__ == "__main__":
    main()
