"""OpenAI-compatible LLM client with per-role settings (``configs/agents.toml``).

Every call names a *role* (respond, clarify, act, memory_chunker, ...); the role picks the model,
sampling, token cap and timeout. Endpoint failures surface as the ``LLMError`` tree of
``services.errors``; ``generate_with_fallback`` turns them into a fixed apology for the
user-facing modes, as the design's error table asks.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol, TypeVar

import httpx
import openai

from services.config_files import parse_section, read_toml
from services.errors import LLMError, LLMMalformedOutput, LLMTimeout, LLMUnavailable
from services.llm_output import (
    Message,
    StopStream,
    ToolCall,
    actions_from_text,
    native_call,
    parse_json_object,
    with_note,
)
from services.settings import SettingsError

logger = logging.getLogger(__name__)

FALLBACK_REPLY = "I had trouble thinking just now. Please try again in a moment."
DEFAULT_MODEL = "default"
ROLES = ("respond", "clarify", "acknowledge", "act", "tiebreaker", "memory_chunker", "episodic_memory", "background")
# Off the hot path: these go to the background endpoint when there is one, and wait for chat turns.
BACKGROUND_ROLES = frozenset({"memory_chunker", "episodic_memory", "background"})
JSON_RETRY_NOTE = "Your previous answer was not valid JSON. Answer with one JSON object only, nothing else."
# A 429's Retry-After is honoured up to this long: a person is waiting for the reply, and a
# longer wait than this is better answered with the apology than with silence.
MAX_RETRY_AFTER_S = 10.0
MODEL_DISCOVERY_TIMEOUT_S = 5.0

T = TypeVar("T")


class ReplyGuard(Protocol):
    def __call__(self, chunk: str) -> None: ...

    def finish(self, text: str) -> str: ...


@dataclass(frozen=True)
class RoleConfig:
    model: str = DEFAULT_MODEL
    temperature: float = 0.7
    max_tokens: int = 512
    timeout_s: float = 60.0
    json_output: bool = False
    stream: bool = False
    context_window: int = 4096


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


def load_role_configs(configs_dir: Path, default_model: str | None = None) -> dict[str, RoleConfig]:
    """Read ``agents.toml``: ``[default]`` plus per-role overrides; every known role is present.

    Args:
        configs_dir: folder holding ``agents.toml`` (missing file → built-in defaults).
        default_model: replaces the model name ``default`` (e.g. a model the operator chose).
    """
    path = Path(configs_dir) / "agents.toml"
    data = read_toml(path)
    if data is None:
        logger.warning("no %s; using built-in LLM role defaults", path)
        data = {}
    base = _role_from_table(RoleConfig(), data.get("default", {}), "default")
    names = dict.fromkeys([*ROLES, *(key for key in data if key != "default")])
    roles = {"default": base} | {name: _role_from_table(base, data.get(name, {}), name) for name in names}
    if default_model:
        roles = {name: replace(cfg, model=default_model) if cfg.model == DEFAULT_MODEL else cfg
                 for name, cfg in roles.items()}
    return roles


def with_overrides(roles: dict[str, RoleConfig], overrides: dict[str, Any], label: str) -> dict[str, RoleConfig]:
    """``roles`` with some keys of some roles replaced (a profile's ``[<profile>.roles.<role>]`` tables)."""
    changed = dict(roles)
    for name, table in overrides.items():
        changed[name] = _role_from_table(roles.get(name) or roles["default"], table, f"{label}.{name}")
    return changed


def _role_from_table(base: RoleConfig, table: Any, name: str) -> RoleConfig:
    if not isinstance(table, dict):
        raise SettingsError(f"agents.toml: [{name}] must be a table")
    cfg = parse_section("agents.toml", name, base, table)
    if cfg.max_tokens < 1 or cfg.timeout_s <= 0 or cfg.temperature < 0 or cfg.context_window <= cfg.max_tokens:
        raise SettingsError(f"agents.toml: [{name}] needs max_tokens ≥ 1, timeout_s > 0, temperature ≥ 0 "
                            "and context_window > max_tokens")
    return cfg


class LLMClient:
    """Chat completions against one OpenAI-compatible endpoint, configured per role."""

    def __init__(self, *, base_url: str, api_key: str | None, roles: dict[str, RoleConfig], max_retries: int = 0,
                 observer: Callable[[str, Completion], None] | None = None, background_base_url: str | None = None,
                 before_background: Callable[[str], None] | None = None) -> None:
        """Store the configuration; no request is made until the first call.

        Args:
            max_retries: extra tries on timeouts / unavailability inside one call (the SDK's own
                retries stay off so there is exactly one retry policy).
            observer: called with (role, completion) after every successful call (metrics).
            background_base_url: endpoint for ``BACKGROUND_ROLES`` (default: ``base_url``).
            before_background: called with the role before each background request (chat priority: it
                waits while a chat turn is generating).
        """
        # Local servers ignore the key, but the SDK insists on one.
        self._openai = openai.OpenAI(base_url=base_url, api_key=api_key or "not-needed", max_retries=0)
        self._background = (openai.OpenAI(base_url=background_base_url, api_key=api_key or "not-needed",
                                          max_retries=0) if background_base_url else self._openai)
        self.roles = dict(roles)
        self.max_retries = max_retries
        self._observer = observer
        self._before_background = before_background
        self._served_models: dict[int, str | None] = {}

    def role(self, name: str) -> RoleConfig:
        """The configuration of a role; unknown roles get ``default``."""
        return self.roles.get(name) or self.roles.get("default") or RoleConfig()

    def close(self) -> None:
        """Close the HTTP connection pools."""
        self._openai.close()
        if self._background is not self._openai:
            self._background.close()

    def _endpoint(self, role: str) -> openai.OpenAI:
        if role not in BACKGROUND_ROLES:
            return self._openai
        if self._before_background is not None:
            self._before_background(role)
        return self._background

    def stream(self, role: str, messages: list[Message], on_delta: Callable[[str], None]) -> Completion:
        """Streamed completion; ``on_delta`` gets each text chunk as it arrives."""
        emitted = False

        def deliver(text: str) -> None:
            nonlocal emitted
            emitted = True
            on_delta(text)

        # A retry after text reached the caller would repeat it, so only retry before the first chunk.
        completion, attempts = self._retrying(role, lambda: self._stream_once(role, messages, deliver),
                                              can_retry=lambda: not emitted)
        return self._observed(role, replace(completion, attempts=attempts))

    def complete(self, role: str, messages: list[Message]) -> Completion:
        """Non-streamed completion; empty output raises ``LLMMalformedOutput``."""
        return self._complete(role, messages, {})[0]

    def complete_json(self, role: str, messages: list[Message],
                      schema: dict[str, Any] | None = None) -> tuple[dict[str, Any], Completion]:
        """A JSON object answer; one retry on invalid JSON, then ``LLMMalformedOutput``.

        Args:
            schema: JSON schema, sent inside ``response_format`` as llama.cpp's server expects.
        """
        response_format: dict[str, Any] = {"type": "json_object"}
        if schema is not None:
            response_format["schema"] = schema
        try:
            return self._json_once(role, messages, response_format, 0)
        except LLMMalformedOutput as exc:
            logger.warning("llm %s: invalid JSON (%s); retrying once", role, exc)
        return self._json_once(role, with_note(messages, JSON_RETRY_NOTE), response_format, 1)

    def _json_once(self, role: str, messages: list[Message], response_format: dict[str, Any],
                   earlier_attempts: int) -> tuple[dict[str, Any], Completion]:
        completion, _ = self._complete(role, messages, {"response_format": response_format})
        return parse_json_object(completion.text), replace(completion, attempts=earlier_attempts + completion.attempts)

    def tool_step(self, role: str, messages: list[Message], tools: list[dict[str, Any]],
                  tool_choice: str | dict[str, Any] | None = None) -> ToolStep:
        """One ACT step: text plus requested tool calls (native, or an ``{"actions": [...]}`` object in the text)."""
        extra: dict[str, Any] = {"tools": tools} if tools else {}
        if tool_choice is not None:
            extra["tool_choice"] = tool_choice
        completion, message = self._complete(role, messages, extra, allow_empty=True)
        native = getattr(message, "tool_calls", None) or []
        if native:
            return ToolStep(completion.text, [native_call(call) for call in native], completion)
        data, calls = actions_from_text(completion.text)
        return ToolStep(completion.text, calls, completion, data)

    def _complete(self, role: str, messages: list[Message], extra: dict[str, Any],
                  allow_empty: bool = False) -> tuple[Completion, Any]:
        (completion, message), attempts = self._retrying(
            role, lambda: self._complete_once(role, messages, extra, allow_empty))
        return self._observed(role, replace(completion, attempts=attempts)), message

    def _complete_once(self, role: str, messages: list[Message], extra: dict[str, Any],
                       allow_empty: bool) -> tuple[Completion, Any]:
        endpoint = self._endpoint(role)
        started = time.monotonic()
        with translated_errors(role):
            response = endpoint.chat.completions.create(**self._params(role, messages, extra))
        if not response.choices:
            raise LLMMalformedOutput(f"LLM role {role}: answer without choices")
        choice = response.choices[0]
        text = choice.message.content or ""
        if not allow_empty and not text.strip():
            raise LLMMalformedOutput(f"LLM role {role}: empty answer")
        completion = _completion(messages, text, response.model, response.usage, started, None, choice.finish_reason)
        return completion, choice.message

    def _stream_once(self, role: str, messages: list[Message], on_delta: Callable[[str], None]) -> Completion:
        endpoint = self._endpoint(role)
        started = time.monotonic()
        first_token_s, parts, usage, model, finish = None, [], None, "", None
        params = self._params(role, messages, {"stream": True, "stream_options": {"include_usage": True}})
        with translated_errors(role):
            with endpoint.chat.completions.create(**params) as chunks:
                try:
                    for chunk in chunks:
                        model, usage = chunk.model or model, chunk.usage or usage
                        for choice in chunk.choices[:1]:
                            finish = choice.finish_reason or finish
                            if choice.delta.content:
                                first_token_s = first_token_s or time.monotonic() - started
                                parts.append(choice.delta.content)
                                on_delta(choice.delta.content)
                except StopStream:
                    finish = "stop"  # the caller has what it wants; leaving the block closes the stream
        text = "".join(parts)
        if not text.strip():
            raise LLMMalformedOutput(f"LLM role {role}: empty stream")
        if finish is None:
            # Every compatible server ends a stream with a finish_reason; a body that just stops
            # is a connection cut mid-reply, and its text is a fragment.
            raise LLMMalformedOutput(f"LLM role {role}: stream cut off after {len(text)} characters")
        return _completion(messages, text, model, usage, started, first_token_s, finish)

    def _params(self, role: str, messages: list[Message], extra: dict[str, Any]) -> dict[str, Any]:
        cfg = self.role(role)
        params: dict[str, Any] = {
            "model": self._model(cfg, self._background if role in BACKGROUND_ROLES else self._openai),
            "messages": messages, "temperature": cfg.temperature,
            # max_tokens rather than max_completion_tokens: the one every compatible server knows.
            "max_tokens": cfg.max_tokens, "timeout": cfg.timeout_s,
        }
        if cfg.json_output:
            params["response_format"] = {"type": "json_object"}
        return params | extra

    def _model(self, cfg: RoleConfig, endpoint: openai.OpenAI) -> str:
        if cfg.model != DEFAULT_MODEL:
            return cfg.model
        if self._served_models.get(id(endpoint)) is None:
            self._served_models[id(endpoint)] = self._discover_model(endpoint)
        return self._served_models[id(endpoint)] or DEFAULT_MODEL

    def _discover_model(self, endpoint: openai.OpenAI) -> str | None:
        """The endpoint's first model id; "" when it has no usable list, None when unreachable (ask again)."""
        try:
            models = endpoint.models.list(timeout=MODEL_DISCOVERY_TIMEOUT_S)
        except openai.APIConnectionError as exc:  # includes timeouts; the next call asks again
            logger.warning("model discovery failed: %s", exc)
            return None
        except openai.OpenAIError as exc:
            logger.warning("endpoint lists no models (%s); sending model %r", exc, DEFAULT_MODEL)
            return ""
        ids = [model.id for model in models.data if getattr(model, "id", None)]
        logger.info("endpoint serves %s; using %s", ids, ids[0] if ids else DEFAULT_MODEL)
        return ids[0] if ids else ""

    def _retrying(self, role: str, call: Callable[[], T],
                  can_retry: Callable[[], bool] = lambda: True) -> tuple[T, int]:
        attempt = 1
        while True:
            try:
                return call(), attempt
            except (LLMTimeout, LLMUnavailable) as exc:
                if attempt > self.max_retries or not can_retry():
                    raise
                logger.warning("llm %s: %s; retry %d of %d", role, exc, attempt, self.max_retries)
                attempt += 1

    def _observed(self, role: str, completion: Completion) -> Completion:
        if self._observer is not None:
            try:
                self._observer(role, completion)
            except Exception:  # metrics must never break a reply
                logger.warning("LLM observer failed for role %s", role, exc_info=True)
        return completion


def generate_with_fallback(client: LLMClient, role: str, messages: list[Message], on_delta: Callable[[str], None],
                           on_retry: Callable[[], None] | None = None, *,
                           guard: Callable[[Callable[[str], None]], ReplyGuard] | None = None
                           ) -> tuple[Completion, bool]:
    """Generate a user-facing reply; never raises ``LLMError``.

    Retries once on timeout, unavailability or malformed output (calling ``on_retry`` first, so the
    caller can tell the client that partial text is void); then returns ``FALLBACK_REPLY`` with
    fallback=True. Other endpoint errors (4xx: bad request, auth, unknown model) skip the retry.
    The fallback text is not sent through ``on_delta``: the caller publishes it as the final message.

    Args:
        guard: wraps ``on_delta`` for each attempt (e.g. ``ScaffoldGuard``): it filters the stream, may
            stop it, and its ``finish`` gives the final text or raises ``LLMMalformedOutput`` (→ retry).
    """
    started, attempts, error = time.monotonic(), 0, ""
    for attempt in (1, 2):
        try:
            checker = guard(on_delta) if guard is not None else None
            completion = _generate(client, role, messages, checker or on_delta)
            if checker is not None:
                completion = replace(completion, text=checker.finish(completion.text))
            return replace(completion, attempts=attempts + completion.attempts), False
        except (LLMTimeout, LLMUnavailable, LLMMalformedOutput) as exc:
            attempts, error = attempts + 1, f"{type(exc).__name__}: {exc}"
            logger.warning("llm %s: attempt %d failed: %s", role, attempt, exc)
            if attempt == 1:
                _wait_as_asked(exc)
                if on_retry is not None:
                    on_retry()
        except LLMError as exc:
            attempts, error = attempts + 1, f"{type(exc).__name__}: {exc}"
            logger.error("llm %s: %s; not retrying", role, exc)
            break
    elapsed = time.monotonic() - started
    return Completion(FALLBACK_REPLY, client.role(role).model, 0, 0, 0, elapsed, attempts=attempts,
                      error=error[:300]), True


def _wait_as_asked(exc: Exception) -> None:
    """Before the one retry: wait as long as a 429's Retry-After asks (capped)."""
    retry_after = getattr(exc, "retry_after_s", None)
    if retry_after:
        time.sleep(min(retry_after, MAX_RETRY_AFTER_S))


def _generate(client: LLMClient, role: str, messages: list[Message], on_delta: Callable[[str], None]) -> Completion:
    if client.role(role).stream:
        return client.stream(role, messages, on_delta)
    completion = client.complete(role, messages)
    with suppress(StopStream):  # a guard that cuts the text keeps what came before the cut
        on_delta(completion.text)
    return completion


@contextmanager
def translated_errors(role: str) -> Iterator[None]:
    """Map openai SDK exceptions (and unparseable bodies) onto the ``LLMError`` tree."""
    try:
        yield
    except openai.APITimeoutError as exc:
        raise LLMTimeout(f"LLM role {role}: timed out") from exc
    except openai.APIConnectionError as exc:
        raise LLMUnavailable(f"LLM role {role}: cannot reach the endpoint ({exc})") from exc
    except openai.APIStatusError as exc:
        raise status_error(role, exc) from exc
    except openai.APIResponseValidationError as exc:
        raise LLMMalformedOutput(f"LLM role {role}: invalid response ({exc})") from exc
    except openai.APIError as exc:  # an error event inside a stream
        raise LLMUnavailable(f"LLM role {role}: endpoint error ({exc})") from exc
    except httpx.TransportError as exc:  # a streamed body broken off mid-read reaches us unwrapped
        raise LLMUnavailable(f"LLM role {role}: connection broke mid-answer ({exc})") from exc
    except json.JSONDecodeError as exc:  # the SDK lets a non-JSON body or stream event through raw
        raise LLMMalformedOutput(f"LLM role {role}: answer is not JSON ({exc})") from exc


def status_error(role: str, exc: openai.APIStatusError) -> LLMError:
    """The ``LLMError`` for an HTTP error status: 429/5xx are transient, 408 a timeout, other 4xx our fault."""
    message = f"LLM role {role}: HTTP {exc.status_code}: {str(exc)[:200]}"
    if exc.status_code == 429 or exc.status_code >= 500:
        return LLMUnavailable(message, retry_after_s=retry_after(exc.response.headers.get("retry-after")))
    if exc.status_code == 408:
        return LLMTimeout(message)
    return LLMError(message)


def retry_after(raw: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds form; an HTTP date or junk → None)."""
    try:
        seconds = float(raw) if raw is not None else None
    except ValueError:
        return None
    return seconds if seconds is not None and seconds >= 0 else None


def _completion(messages: list[Message], text: str, model: str, usage: Any, started: float,
                first_token_s: float | None, finish_reason: str | None) -> Completion:
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
