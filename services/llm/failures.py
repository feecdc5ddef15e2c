"""The openai SDK's exceptions mapped onto the ``LLMError`` tree of ``services.errors``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import openai

from services.errors import LLMError, LLMMalformedOutput, LLMTimeout, LLMUnavailable


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
