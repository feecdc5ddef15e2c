"""Mid-loop compaction (seed 000): keep the ACT prompt inside the model's context window.

Stage 1 replaces the prompt's tool trail with one summary record. If the prompt is still too
large, stage 2 checkpoints the request, the trail and the latest history into a bounded summary
written without a model call, collapses the trail into a restart marker, and the loop restarts
from iteration zero with the checkpoint as "Current state". Both stages leave an
audit record in the stored trail; the wall clock is not reset.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from services.act.config import CompactionConfig
from services.text import truncate

RESULT_CHARS = 160
HISTORY_PLACEHOLDER = "(the earlier conversation is summarised under Current state)"


@dataclass
class PromptState:
    """The parts of the ACT prompt that compaction may shrink."""

    history: str
    view: list[dict[str, Any]]  # the trail as the model sees it
    current_state: str = ""


class Budget:
    """How many prompt tokens fit, and when to compact."""

    def __init__(self, config: CompactionConfig, context_window: int, reply_tokens: int, fixed_chars: int = 0) -> None:
        window = config.context_window or context_window
        self.config = config
        self.limit = max(1, window - reply_tokens)  # what the prompt may use at most
        self.trigger = int(self.limit * config.threshold)
        self.fixed_chars = fixed_chars  # sent with every step besides the messages (the tools' JSON)

    def tokens(self, messages: list[dict[str, Any]]) -> int:
        """Estimated prompt tokens (characters / chars_per_token, the same estimate as the LLM layer's)."""
        chars = self.fixed_chars + sum(len(str(message.get("content") or "")) for message in messages)
        return int(chars / self.config.chars_per_token) + 1

    def over(self, messages: list[dict[str, Any]]) -> bool:
        """True when the prompt has reached the compaction threshold."""
        return self.tokens(messages) > self.trigger


def entry_line(entry: dict[str, Any]) -> str:
    """One short human-readable line for a trail entry."""
    kind = entry.get("type", "action")
    if kind == "action":
        arguments = json.dumps(entry.get("arguments", {}), ensure_ascii=False, separators=(",", ":"))
        outcome = entry.get("result") if entry.get("ok") else entry.get("error")
        status = "ok" if entry.get("ok") else "error"
        body = json.dumps(outcome, ensure_ascii=False, default=str, separators=(",", ":"))
        return f"{entry.get('skill')}({truncate(arguments, 100)}) → {status}: {truncate(body, RESULT_CHARS)}"
    if kind == "compaction":
        return str(entry.get("summary", ""))
    if kind == "steering":
        return f"the person added, mid-turn: {entry.get('text', '')}"
    if kind == "confirmation":
        return f"the person's answer to the pending confirmation ({entry.get('description', '')}): " \
               f"{entry.get('decision', '')}"
    if kind == "pending":
        return f"waiting for the person to confirm: {entry.get('description', '')}"
    return truncate(json.dumps(entry, ensure_ascii=False, default=str), RESULT_CHARS)


def summarize_trail(view: list[dict[str, Any]]) -> str:
    """The trail as numbered short lines (stage 1's summary and the deterministic checkpoint)."""
    lines = [f"{index}. {entry_line(entry)}" for index, entry in enumerate(view, 1)]
    return "Summary of earlier actions this turn:\n" + "\n".join(lines) if lines else ""


def stage_one(state: PromptState, iteration: int) -> dict[str, Any]:
    """Replace the prompt trail with one summary record; returns the audit record."""
    summary = summarize_trail(state.view)
    replaced = len(state.view)
    state.view = [{"type": "compaction", "stage": 1, "summary": summary}]
    return {"type": "compaction", "stage": 1, "iteration": iteration, "replaced": replaced, "summary": summary}


def stage_two(state: PromptState, iteration: int, restart: int, user_text: str,
              max_chars: int = 1200) -> dict[str, Any]:
    """Checkpoint history + trail into Current state (at most ``max_chars``), collapse the trail into a marker."""
    state.current_state = checkpoint = checkpoint_of(state, user_text, max_chars)
    state.history = HISTORY_PLACEHOLDER
    marker = f"The loop restarted after compaction ({restart}); what was done so far is in Current state."
    state.view = [{"type": "compaction", "stage": 2, "summary": marker}]
    return {"type": "compaction", "stage": 2, "iteration": iteration, "restart": restart, "checkpoint": checkpoint}


def checkpoint_of(state: PromptState, user_text: str, max_chars: int = 1200) -> str:
    """A bounded checkpoint: the request, what Current state held, the trail summary, the latest history."""
    trail = summarize_trail(state.view)
    history_tail = state.history[-max_chars // 2:] if state.history else ""
    parts = [f"The person asked: {truncate(user_text, 300)}"]
    if state.current_state:
        parts.append(truncate(state.current_state, max_chars // 3))
    if trail:
        parts.append(truncate(trail, max_chars // 2))
    if history_tail:
        parts.append("Latest conversation (truncated):\n…" + history_tail)
    return truncate("\n".join(parts), max_chars)
