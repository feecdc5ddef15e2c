"""OpenAI-compatible LLM client with per-role settings (``configs/agents.toml``).

Every call names a *role* (respond, clarify, act, memory_chunker, ...); the role picks the model,
sampling, token cap and timeout. Endpoint failures surface as the ``LLMError`` tree of
``services.errors``; ``services.llm.fallback.generate_with_fallback`` turns them into a fixed apology for the
user-facing modes, as the design's error table asks.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import openai

from services.errors import LLMMalformedOutput
from services.llm.completion import Completion, ToolStep, measured_completion
from services.llm.failures import translated_errors
from services.llm.output import (
    Message,
    StopStream,
    actions_from_text,
    native_call,
    parse_json_object,
    with_note,
)
from services.llm.roles import BACKGROUND_ROLES, DEFAULT_MODEL, RoleConfig

logger = logging.getLogger(__name__)

JSON_RETRY_NOTE = "Your previous answer was not valid JSON. Answer with one JSON object only, nothing else."
MODEL_DISCOVERY_TIMEOUT_S = 5.0


class LLMClient:
    """Chat completions against one OpenAI-compatible endpoint, configured per role."""

    def __init__(self, *, base_url: str, api_key: str | None, roles: dict[str, RoleConfig],
                 observer: Callable[[str, Completion], None] | None = None,
                 before_background: Callable[[str], None] | None = None) -> None:
        """Store the configuration; no request is made until the first call. A call is tried once: the one retry
        policy is ``services.llm.fallback``'s (the SDK's own retries stay off).

        Args:
            observer: called with (role, completion) after every successful call (metrics).
            before_background: called with the role before each background request (chat priority: it
                waits while a chat turn is generating).
        """
        # Local servers ignore the key, but the SDK insists on one.
        self._openai = openai.OpenAI(base_url=base_url, api_key=api_key or "not-needed", max_retries=0)
        self.roles = dict(roles)
        self._observer = observer
        self._before_background = before_background
        self._served_model: str | None = None  # the endpoint's first model id, asked once it answers

    def role(self, name: str) -> RoleConfig:
        """The configuration of a role; unknown roles get ``default``."""
        return self.roles.get(name) or self.roles.get("default") or RoleConfig()

    def close(self) -> None:
        """Close the HTTP connection pools."""
        self._openai.close()

    def _endpoint(self, role: str) -> openai.OpenAI:
        if role in BACKGROUND_ROLES and self._before_background is not None:
            self._before_background(role)
        return self._openai

    def stream(self, role: str, messages: list[Message], on_delta: Callable[[str], None]) -> Completion:
        """Streamed completion; ``on_delta`` gets each text chunk as it arrives."""
        return self._observed(role, self._stream_once(role, messages, on_delta))

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

    def tool_step(self, role: str, messages: list[Message], tools: list[dict[str, Any]]) -> ToolStep:
        """One ACT step: text plus requested tool calls (native, or an ``{"actions": [...]}`` object in the text)."""
        extra: dict[str, Any] = {"tools": tools} if tools else {}
        completion, message = self._complete(role, messages, extra, allow_empty=True)
        native = getattr(message, "tool_calls", None) or []
        if native:
            return ToolStep(completion.text, [native_call(call) for call in native], completion)
        data, calls = actions_from_text(completion.text)
        return ToolStep(completion.text, calls, completion, data)

    def _complete(self, role: str, messages: list[Message], extra: dict[str, Any],
                  allow_empty: bool = False) -> tuple[Completion, Any]:
        completion, message = self._complete_once(role, messages, extra, allow_empty)
        return self._observed(role, completion), message

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
        completion = measured_completion(messages, text, response.model, response.usage, started, None,
                                         choice.finish_reason)
        return completion, choice.message

    def _stream_once(self, role: str, messages: list[Message], on_delta: Callable[[str], None]) -> Completion:
        endpoint = self._endpoint(role)
        started = time.monotonic()
        first_token_s, parts, usage, model, finish = None, [], None, "", None
        params = self._params(role, messages, {"stream": True, "stream_options": {"include_usage": True}})
        with translated_errors(role):
            with _open_stream(endpoint, params) as chunks:
                try:
                    for chunk in chunks:
                        chunk_model, chunk_usage, chunk_finish, content = _stream_event(role, chunk)
                        model, usage, finish = chunk_model or model, chunk_usage or usage, chunk_finish or finish
                        if content:
                            first_token_s = first_token_s or time.monotonic() - started
                            parts.append(content)
                            on_delta(content)
                except StopStream:
                    finish = "stop"  # the caller has what it wants; leaving the block closes the stream
        text = "".join(parts)
        if not text.strip():
            raise LLMMalformedOutput(f"LLM role {role}: empty stream")
        if finish is None:
            # Every compatible server ends a stream with a finish_reason; a body that just stops
            # is a connection cut mid-reply, and its text is a fragment.
            raise LLMMalformedOutput(f"LLM role {role}: stream cut off after {len(text)} characters")
        return measured_completion(messages, text, model, _usage(usage), started, first_token_s, finish)

    def _params(self, role: str, messages: list[Message], extra: dict[str, Any]) -> dict[str, Any]:
        cfg = self.role(role)
        params: dict[str, Any] = {
            "model": self._model(cfg),
            "messages": messages, "temperature": cfg.temperature,
            # max_tokens rather than max_completion_tokens: the one every compatible server knows.
            "max_tokens": cfg.max_tokens, "timeout": cfg.timeout_s,
        }
        if cfg.json_output:
            params["response_format"] = {"type": "json_object"}
        return params | extra

    def _model(self, cfg: RoleConfig) -> str:
        if cfg.model != DEFAULT_MODEL:
            return cfg.model
        if self._served_model is None:
            self._served_model = self._discover_model(self._openai)
        return self._served_model or DEFAULT_MODEL

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

    def _observed(self, role: str, completion: Completion) -> Completion:
        if self._observer is not None:
            try:
                self._observer(role, completion)
            except Exception:  # metrics must never break a reply
                logger.warning("LLM observer failed for role %s", role, exc_info=True)
        return completion


def _open_stream(endpoint: openai.OpenAI, params: dict[str, Any]) -> openai.Stream[object]:
    """POST a streamed chat completion through the SDK; its events come back as plain dicts.

    ``chat.completions.create`` costs ~10 ms of CPU per chat turn on this path: it transforms the
    request through the SDK's typed-dict machinery and builds a pydantic model per chunk. The
    client's own ``post`` (the SDK's documented way to send a request it has no method for) keeps
    everything else of the SDK — auth headers, timeouts, HTTP status errors, the SSE decoder, error
    events inside the stream — and ``Stream[object]`` hands over each event's JSON as it is.
    """
    body = dict(params)
    timeout = body.pop("timeout", None)
    return endpoint.post("/chat/completions", cast_to=object, body=body, stream=True,
                         stream_cls=_KeptAliveStream,
                         options={"timeout": timeout, "security": {"bearer_auth": True}})


class _KeptAliveStream(openai.Stream[object]):
    """``openai.Stream`` that reads the body to its end after ``[DONE]``, so the connection is kept alive.

    The synchronous SDK (3.52) stops at ``[DONE]`` and closes the response before the HTTP/1.1 body's
    last chunk is read, and httpx then drops the connection rather than pool it: every chat turn
    paid a new TCP (or TLS) handshake. What follows ``[DONE]`` is only the chunked body's terminator.
    """

    def _iter_events(self) -> Iterator[Any]:
        events = super()._iter_events()
        for event in events:
            if event.data.startswith("[DONE]"):
                try:
                    for _ in events:
                        pass
                except openai.APIConnectionError:  # the answer is whole; only this connection is lost
                    logger.info("LLM stream broke after [DONE]; its connection is not reused")
            yield event


def _stream_event(role: str, chunk: Any) -> tuple[str | None, Any, str | None, str | None]:
    """Model, usage, finish reason and text of one stream event (only the first choice is read)."""
    if not isinstance(chunk, dict):
        raise LLMMalformedOutput(f"LLM role {role}: stream event is not a JSON object")
    choices = chunk.get("choices") or []
    choice = choices[0] if isinstance(choices, list) and choices else {}
    delta = choice.get("delta") if isinstance(choice, dict) else None
    if not isinstance(choice, dict) or not isinstance(delta, dict | None):
        raise LLMMalformedOutput(f"LLM role {role}: stream event of the wrong shape")
    content = (delta or {}).get("content")
    text = content if isinstance(content, str) else None
    return chunk.get("model"), chunk.get("usage"), choice.get("finish_reason"), text


class _Usage:
    """The ``usage`` object of a stream event, as ``measured_completion`` reads it."""

    def __init__(self, raw: dict[str, Any]) -> None:
        self.prompt_tokens = raw.get("prompt_tokens")
        self.completion_tokens = raw.get("completion_tokens")


def _usage(raw: Any) -> _Usage | None:
    return _Usage(raw) if isinstance(raw, dict) else None
