"""The small-model profile (``configs/profiles.toml``): compact prompts and chat-shaped history.

A small model copies whatever shape its prompt has and uses little of a long one. Under this
profile a mode prompt is: a short system prompt with what is known about the person, the same on
every turn of a thread (llama.cpp's prompt cache then reuses it, and the history after it, from one
turn to the next), the recent turns as real user/assistant messages the model continues, what recall
found for this message and the mode's instruction as a short system note, then the message. Each part
has its own budget.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from services.config_files import at_least, parse_section, read_toml
from services.llm.roles import RoleConfig, with_overrides
from services.prompts import fenced
from services.settings import Settings, SettingsError

COMPACT_PROMPTS = "compact"  # prompts/compact/<name>.md
# The heading of the memory note (services/memory/notes.compact_notes writes its lines).
# Short, and a heading the scaffold guard knows (services/llm/guard.py): a small model copies a long one.
MEMORY_NOTE = "Notes from earlier conversations (\"you\" is the person; oldest first, the newer line wins):\n{memory}"
# The same notes' stable part, in the system prompt: what is known about the person whatever they ask.
ABOUT_NOTE = "What you know about the person (\"you\" is the person; oldest first, the newer line wins):\n{memory}"


@dataclass(frozen=True)
class CompactBudgets:
    history_exchanges: int = at_least(6, 0)
    history_step: int = at_least(0, 0)  # how far the window's first turn moves at once (0: half the window)
    history_chars: int = at_least(3000, 0)
    reply_chars: int = at_least(360, 0)
    memory_tokens: int = at_least(200, 0)  # the system prompt's block about the person (whatever the message)
    recalled_tokens: int = at_least(100, 0)  # the note of what recall found for this message besides that block
    memory_turns: int = at_least(0, 0)  # recalled turns shown beside the facts (0: facts and episodes only)
    memory_episodes: int = at_least(3, 0)  # recalled episodes shown (0: none)
    person_facts: int = at_least(4, 0)  # the person's newest facts, shown whatever the message (besides recall's)


@dataclass(frozen=True)
class LLMProfile:
    name: str  # "compact" or "full"
    budgets: CompactBudgets = CompactBudgets()
    role_overrides: dict[str, Any] = field(default_factory=dict)

    @property
    def compact(self) -> bool:
        return self.name == "compact"

    def prompt(self, name: str) -> str:
        """The prompt file to render for ``name`` under this profile."""
        return f"{COMPACT_PROMPTS}/{name}" if self.compact else name

    def roles(self, roles: dict[str, RoleConfig]) -> dict[str, RoleConfig]:
        """Role settings with the profile's overrides applied."""
        return with_overrides(roles, self.role_overrides, "profiles.toml") if self.compact else roles


def load_profile(settings: Settings) -> LLMProfile:
    """The profile the settings ask for ("auto" outside ``engram run``'s local model means full)."""
    if not settings.compact_prompts:
        return LLMProfile("full")
    data = read_toml(Path(settings.configs_dir) / "profiles.toml") or {}
    table = dict(data.get("compact") or {})
    overrides = table.pop("roles", {})
    if not isinstance(overrides, dict) or not all(isinstance(value, dict) for value in overrides.values()):
        raise SettingsError("profiles.toml: [compact.roles.<role>] must be tables")
    budgets = parse_section("profiles.toml", "compact", CompactBudgets(), table)
    return LLMProfile("compact", budgets, overrides)


def history_window(working_memory: list[dict[str, Any]], budgets: CompactBudgets) -> list[dict[str, Any]]:
    """The turns shown as history: the window (``_window``), from its first turn while ``history_chars`` lasts.

    The window's first turn moves in steps, not on every turn: llama.cpp reuses the prompt it evaluated
    last up to the first token that differs, so a window that slid by one turn each time made the whole
    history be read again on every reply (~700 tokens at 6 turns; 20 s for the 1.5B model on these 2
    cores under load). Over ``history_chars`` the first turn moves on by whole steps too, for the same reason.
    """
    shown = _window(working_memory, budgets.history_exchanges, budgets.history_step)
    step = _step(budgets.history_exchanges, budgets.history_step)
    while shown and sum(_size(item, budgets) for item in shown) > budgets.history_chars:
        shown = shown[step:] if len(shown) > step else shown[1:]
    return [item for item in shown if str(item.get("user") or "").strip()]


def _size(item: dict[str, Any], budgets: CompactBudgets) -> int:
    return (len(str(item.get("user") or "").strip()) + len(str(item.get("note") or ""))
            + len(_cut(str(item.get("reply") or ""), budgets.reply_chars)))


def history_messages(working_memory: list[dict[str, Any]], budgets: CompactBudgets) -> list[dict[str, str]]:
    """The shown turns (``history_window``) as chat messages, each exactly as the model was given it then.

    A turn's note (what recall found, the mode's instruction) stays before its message: the prompt of a
    thread then only grows, so llama.cpp finds the last turn's prompt *and the reply it wrote* in its cache
    and reads only the new message and its note. With the note dropped from the history, the reply after it
    and everything later were read again on every turn (~60–130 tokens, 1–3 s for the 1.5B on 2 cores).
    """
    messages: list[dict[str, str]] = []
    for item in history_window(working_memory, budgets):
        if item.get("note"):
            messages.append({"role": "system", "content": str(item["note"])})
        messages.append({"role": "user", "content": str(item.get("user") or "").strip()})
        reply = _cut(str(item.get("reply") or ""), budgets.reply_chars)
        if reply:
            messages.append({"role": "assistant", "content": reply})
    return messages


def _window(working_memory: list[dict[str, Any]], size: int, step: int = 0) -> list[dict[str, Any]]:
    """The turns shown: between ``size - step + 1`` and ``size`` of the newest, starting on a multiple of the step."""
    numbers = [item.get("turn") for item in working_memory]
    if size <= 0 or not working_memory or not all(isinstance(number, int) for number in numbers):
        return working_memory[-size:] if size > 0 else []
    step = _step(size, step)
    first = numbers[-1] - size + 1  # the first turn of a window that slides by one
    if first > 1 and (first - 1) % step:
        first += step - (first - 1) % step
    return [item for item, number in zip(working_memory, numbers, strict=True) if number >= first]


def _step(size: int, step: int) -> int:
    """How far the window's first turn moves at once: ``step`` (at most the window), or half the window."""
    return min(size, step) if step > 0 else max(1, size // 2)


def compact_note(memory_text: str, budgets: CompactBudgets, hint: str = "") -> str:
    """This message's note: what recall found for it besides the block, then the mode's instruction."""
    memory = _cut(memory_text.strip(), budgets.recalled_tokens * 4)
    note = [MEMORY_NOTE.format(memory=fenced("memory", memory))] if memory else []
    note += [hint.strip()] if hint.strip() else []
    return "\n\n".join(note)


def compact_messages(system: str, working_memory: list[dict[str, Any]], memory_text: str, user_text: str,
                     budgets: CompactBudgets, about_text: str = "", hint: str = "") -> list[dict[str, str]]:
    """System prompt with what is known about the person, history as chat turns, the note, then the message.

    Stable parts first, so that llama.cpp reads only what changed since the thread's last turn: the block
    ``about_text`` does not depend on the message (and leaves out what the shown history says), and the
    history repeats each earlier turn's note where it stood (``history_messages``). This message's note
    (``compact_note``) comes just before it; ``turn_note`` finds it again to store with the turn.
    """
    about = _cut(about_text.strip(), budgets.memory_tokens * 4)
    if about:  # fenced like every mode prompt's memory: stored text is quoted data, never instructions
        system = f"{system.strip()}\n\n{ABOUT_NOTE.format(memory=fenced('memory', about))}"
    messages = [{"role": "system", "content": system.strip()}, *history_messages(working_memory, budgets)]
    note = compact_note(memory_text, budgets, hint)
    if note:
        messages.append({"role": "system", "content": note})
    messages.append({"role": "user", "content": user_text})
    return messages


def turn_note(messages: list[dict[str, str]]) -> str:
    """The note ``compact_messages`` put before the message ("" if none): kept with the turn for its history."""
    if len(messages) > 2 and messages[-2]["role"] == "system":
        return messages[-2]["content"]
    return ""


def _cut(text: str, limit: int) -> str:
    text = text.strip()
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0].rstrip(",;:")
    return cut + "…"
