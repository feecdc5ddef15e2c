"""What one LLM call gave back: the text, the model, token usage and timings."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

from services.llm.output import Message, ToolCall

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Completion:
    text: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    latency_s: float
    first_token_s: float | None = None
    attempts: int = 1
    usage_estimated: bool = False
    finish_reason: str | None = None
    error: str | None = None  # why a fallback reply replaced the model's (the last LLM error)


@dataclass(frozen=True)
class ToolStep:
    text: str
    calls: list[ToolCall]
    completion: Completion
    data: dict[str, Any] | None = None  # the JSON object parsed from text when the calls came from it


def measured_completion(messages: list[Message], text: str, model: str, usage: Any, started: float,
                first_token_s: float | None, finish_reason: str | None) -> Completion:
    """A ``Completion`` timed from ``started``; usage estimated from the text when the endpoint gave none."""
    latency = time.monotonic() - started
    if usage is not None and usage.prompt_tokens is not None and usage.completion_tokens is not None:
        prompt, done, estimated = usage.prompt_tokens, usage.completion_tokens, False
    else:
        prompt_text = "\n".join(str(message.get("content") or "") for message in messages)
        # No usage from the endpoint: ~4 characters per token is close enough for budgets and metrics.
        prompt, done, estimated = (len(prompt_text) + 3) // 4, (len(text) + 3) // 4, True
    if finish_reason == "length":
        logger.info("llm answer hit max_tokens (%d tokens)", done)
    return Completion(text, model or "", prompt, done, prompt + done, latency, first_token_s,
                      usage_estimated=estimated, finish_reason=finish_reason)
