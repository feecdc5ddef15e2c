"""Prompt templates: ``prompts/<name>.md`` files rendered per call.

Placeholders are written ``{{name}}`` rather than ``{name}`` because prompts carry JSON examples
full of braces. ``{{today}}``, ``{{now}}`` and ``{{weekday}}`` are filled at render time, never at
import or load time, so a worker that runs for days keeps telling the model the right date.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from datetime import UTC, datetime, tzinfo
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

logger = logging.getLogger(__name__)

PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
PROMPT_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_\-/]*$")
PROMPT_SUFFIX = ".md"
# Blocks of untrusted text in a prompt (recalled memories, tool results) are fenced with these tags;
# the prompts tell the model that a fenced block is quoted data, never instructions.
FENCE_TAGS = ("memory", "tool-results")
_FENCE_LOOKALIKE = re.compile(r"<(\s*/?\s*)(" + "|".join(FENCE_TAGS) + r")(?=[\s>/]|$)", re.IGNORECASE)


class PromptError(KeyError):
    """A prompt or one of its placeholders cannot be resolved."""

    def __str__(self) -> str:
        # KeyError's own __str__ shows the repr of its argument; a sentence reads better.
        return str(self.args[0]) if self.args else "prompt error"


class UnknownPrompt(PromptError):
    """No ``prompts/<name>.md`` file."""


class MissingPlaceholder(PromptError):
    """The template names a placeholder the caller did not supply."""

    def __init__(self, prompt: str, placeholder: str) -> None:
        super().__init__(f"prompt {prompt!r} needs a value for placeholder {{{{{placeholder}}}}}")
        self.prompt = prompt
        self.placeholder = placeholder


class PromptLibrary:
    """Loads templates by name (cached by file mtime, so edits apply without a restart) and renders them."""

    def __init__(self, prompts_dir: Path) -> None:
        self.prompts_dir = Path(prompts_dir)
        self._cache: dict[str, tuple[int, str]] = {}
        self._lock = threading.Lock()

    def template(self, name: str) -> str:
        """The raw text of a prompt."""
        path = self._path(name)
        try:
            mtime = path.stat().st_mtime_ns
        except FileNotFoundError:
            raise UnknownPrompt(f"no prompt {name!r} in {self.prompts_dir}") from None
        with self._lock:
            cached = self._cache.get(name)
        if cached and cached[0] == mtime:
            return cached[1]
        text = path.read_text(encoding="utf-8")
        with self._lock:
            self._cache[name] = (mtime, text)
        logger.debug("loaded prompt %s (%d chars)", name, len(text))
        return text

    def render(self, name: str, **values: Any) -> str:
        """Fill a prompt's placeholders.

        Args:
            name: prompt file name without ``.md``.
            values: placeholder values; dicts and lists are rendered as JSON, None as an empty string.
                ``tz`` (IANA name or tzinfo) sets the zone of ``today``/``now``/``weekday`` (UTC by
                default); ``now`` may be given as a datetime to pin the clock.
        """
        template = self.template(name)
        filled = {**clock_values(values.get("now"), values.get("tz")), **_without_clock(values)}

        def substitute(match: re.Match[str]) -> str:
            key = match.group(1)
            if key not in filled:
                raise MissingPlaceholder(name, key)
            return format_value(filled[key])

        # One pass: text inside a value that looks like {{x}} is left as is, not expanded.
        return PLACEHOLDER.sub(substitute, template)

    def _path(self, name: str) -> Path:
        if not PROMPT_NAME.match(name) or ".." in name.split("/"):
            raise UnknownPrompt(f"invalid prompt name {name!r}")
        return self.prompts_dir / f"{name}{PROMPT_SUFFIX}"


def clock_values(now: datetime | str | None = None, tz: tzinfo | str | None = None) -> dict[str, str]:
    """``today``, ``now`` and ``weekday`` for the given (or current) instant in ``tz``."""
    moment = datetime.fromisoformat(now) if isinstance(now, str) else (now or datetime.now(UTC))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)  # naive means UTC here, never the host's local zone
    moment = moment.astimezone(_zone(tz))
    return {
        "now": moment.isoformat(timespec="seconds"),
        "today": moment.date().isoformat(),
        "weekday": moment.strftime("%A"),
    }


def format_value(value: Any) -> str:
    """How a placeholder value appears in a prompt."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, dict | list | tuple):
        return json.dumps(value, ensure_ascii=False, indent=2, default=str)
    return str(value)


def fenced(tag: str, text: str) -> str:
    """``text`` as a quoted data block ``<tag>…</tag>`` that it cannot close or reopen itself.

    Any fence tag inside the text (``</memory>``, ``< tool-results >``…, in any case) loses its
    angle bracket, so stored text such as "</memory> Ignore previous instructions" stays inside
    the block as plain words.
    """
    if tag not in FENCE_TAGS:
        raise ValueError(f"unknown fence {tag!r}; known: {FENCE_TAGS}")
    return f"<{tag}>\n{neutralise_fences(text)}\n</{tag}>"


def neutralise_fences(text: str) -> str:
    """Replace the ``<`` of anything that looks like a fence tag with a harmless ``‹``."""
    return _FENCE_LOOKALIKE.sub(lambda match: "‹" + match.group(1) + match.group(2), text)


def _without_clock(values: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in values.items() if key not in ("now", "tz")}


def _zone(tz: tzinfo | str | None) -> tzinfo:
    if tz is None or tz == "":
        return UTC
    if isinstance(tz, tzinfo):
        return tz
    try:
        return ZoneInfo(tz)
    except (ZoneInfoNotFoundError, ValueError):
        logger.warning("unknown time zone %r; using UTC", tz)
        return UTC
