"""What /healthz needs to know about the LLM beyond "the port answers": crashes and failed turns.

The supervisor records every exit of a role (``record_exit``); the digest records whether each
turn's LLM answered (``record_outcome``). ``llm_problem`` turns recent evidence into one sentence.
"""

from __future__ import annotations

import json
import signal
import time
from typing import Any

import redis

ROLE_EXIT_KEY = "engram:role_exit:%s"  # role name → JSON {"code", "at", "count"}
LLM_OUTCOME_KEY = "engram:llm:last_outcome"  # JSON {"ok", "error", "at"} of the latest chat turn
START_CHECK_KEY = "engram:llm:start_check"  # "pending" while `engram run` tests the local servers, or why it failed
START_CHECK_TTL_S = 900  # a supervisor killed mid-check must not leave the LLM "starting" for ever
RECENT_S = 300.0  # a crash or failed turn older than this no longer makes the LLM unhealthy
KEY_TTL_S = 24 * 3600


def record_exit(connection: redis.Redis, role: str, code: int, now: float | None = None) -> None:
    """Called by the supervisor when a role's process exits."""
    key = ROLE_EXIT_KEY % role
    previous = _load(connection.get(key)) or {}
    entry = {"code": code, "at": now or time.time(), "count": int(previous.get("count", 0)) + 1}
    connection.set(key, json.dumps(entry), ex=KEY_TTL_S)


def record_outcome(connection: redis.Redis, ok: bool, error: str | None = None, now: float | None = None, *,
                   pipeline: redis.client.Pipeline | None = None) -> None:
    """Called by the digest after each turn that used the LLM (the write queued on ``pipeline`` when given)."""
    now = now or time.time()
    # Only a failure needs the previous entry (its last success); a success is one write, not two round trips.
    previous = {} if ok else _load(connection.get(LLM_OUTCOME_KEY)) or {}
    entry = {"ok": ok, "error": error or "", "at": now,
             "last_ok_at": now if ok else float(previous.get("last_ok_at", 0.0))}
    (pipeline if pipeline is not None else connection).set(LLM_OUTCOME_KEY, json.dumps(entry), ex=KEY_TTL_S)


def mark_start_check(connection: redis.Redis, problem: str | None) -> None:
    """Record the start-up test completion: "pending" before it, None once it answered, else the problem."""
    if problem is None:
        connection.delete(START_CHECK_KEY)
    else:
        connection.set(START_CHECK_KEY, problem, ex=START_CHECK_TTL_S)


def llm_problem(connection: redis.Redis, roles: tuple[str, ...], now: float | None = None) -> str | None:
    """A sentence about the start check, a recent LLM crash or failed turn; None when there is nothing."""
    now = now or time.time()
    start_check = connection.get(START_CHECK_KEY)
    if start_check:
        state = start_check.decode() if isinstance(start_check, bytes) else str(start_check)
        if state == "pending":
            return "the local LLM is still answering its start-up test completion"
        return f"the local LLM failed its start-up test completion: {state}"
    outcome = _load(connection.get(LLM_OUTCOME_KEY))
    answered_at = float(outcome.get("last_ok_at", 0.0)) if outcome else 0.0
    for role in roles:
        exit_entry = _load(connection.get(ROLE_EXIT_KEY % role))
        # A turn answered after the crash shows the restarted server works again.
        if exit_entry and now - float(exit_entry["at"]) < RECENT_S and float(exit_entry["at"]) > answered_at:
            return (f"{role} exited {describe_exit(int(exit_entry['code']))} {now - float(exit_entry['at']):.0f}s ago "
                    f"({exit_entry['count']} exit(s) in the last day)")
    if outcome and not outcome.get("ok") and now - float(outcome["at"]) < RECENT_S:
        return f"the last chat turn's LLM call failed: {outcome.get('error') or 'no answer'}"
    return None


def describe_exit(code: int) -> str:
    """"with signal SIGSEGV" / "with code 1"."""
    if code < 0:
        try:
            return f"with signal {signal.Signals(-code).name}"
        except ValueError:
            pass
    return f"with code {code}"


def _load(raw: Any) -> dict[str, Any] | None:
    if not raw:
        return None
    try:
        data = json.loads(raw)
    except (TypeError, ValueError):
        return None
    return data if isinstance(data, dict) else None
