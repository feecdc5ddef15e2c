"""User-facing replies that never fail: one retry, then a fixed apology (the design's error table)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from contextlib import suppress
from dataclasses import replace
from typing import Protocol

from services.errors import EchoedMessage, LLMError, LLMMalformedOutput, LLMTimeout, LLMUnavailable, NamesRefused
from services.llm.client import LLMClient
from services.llm.completion import Completion
from services.llm.output import Message, StopStream

logger = logging.getLogger(__name__)

FALLBACK_REPLY = "I had trouble thinking just now. Please try again in a moment."
# A 429's Retry-After is honoured up to this long: a person is waiting for the reply, and a
# longer wait than this is better answered with the apology than with silence.
MAX_RETRY_AFTER_S = 10.0
# Before the retry of a reply that only repeated the person's message (a small model's habit with a
# plain statement such as "I work as a nurse"): said just before the message, where it is read.
ECHO_NOTE = "Do not repeat the person's message. Answer it in your own words, briefly and warmly."
# After a reply that offered what the person refused ("You can't stand mushrooms" in the notes, and a mushroom risotto
# suggested), the retry shows the model its offer and the person turning it down, as a person would. A note that
# named the thing drew the 1.5B to it ("do not mention toast" → toast, 3 of 12); one that named nothing and did not
# show the offer got the same offer again (4 of 17 suggestions of bench.answers' tuning people).
REFUSED_NOTE = "Not that, it has something I never have. Suggest something different."
# When the retry offered it again: saying so is true and useful, where the apology would be neither (the thing is not
# named: the person never saw the withheld offer).
REFUSED_REPLY = ("Everything I was going to suggest has something you told me isn't for you. "
                 "What do you feel like?")
# When the retry said the message back too: what was said is taken in (the chunker stores it), and saying
# so is a true reply, where the apology would tell the person to repeat something that was understood.
NOTED_REPLY = "Thanks for telling me, I'll remember that."
# ... unless the message was a question ("Who was I supposed to ring tomorrow?" said back twice): thanking the
# person for telling would be false; not knowing is the truth the two attempts showed.
UNSURE_REPLY = "I'm not sure I know that. Could you tell me again?"


class ReplyGuard(Protocol):
    def __call__(self, chunk: str) -> None: ...

    def finish(self, text: str) -> str: ...

    rewritten: bool  # finish's text does not continue what the guard sent


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
    refused: NamesRefused | None = None
    for attempt in (1, 2):
        try:
            checker = guard(on_delta) if guard is not None else None
            completion = _generate(client, role, messages, checker or on_delta)
            if checker is not None:
                completion = replace(completion, text=checker.finish(completion.text))
                if checker.rewritten:  # cut back before text that went out: void it, send the reply whole
                    if on_retry is not None:
                        on_retry()
                    with suppress(StopStream):
                        on_delta(completion.text)
            return replace(completion, attempts=attempts + completion.attempts), False
        except (LLMTimeout, LLMUnavailable, LLMMalformedOutput) as exc:
            attempts, error = attempts + 1, f"{type(exc).__name__}: {exc}"
            refused = exc if isinstance(exc, NamesRefused) else None
            logger.warning("llm %s: attempt %d failed: %s", role, attempt, exc)
            if isinstance(exc, NamesRefused) and exc.offered.strip():
                messages = [*messages, {"role": "assistant", "content": exc.offered.strip()},
                            {"role": "user", "content": REFUSED_NOTE}]
            elif isinstance(exc, EchoedMessage) and messages and messages[-1].get("role") == "user":
                messages = [*messages[:-1], {"role": "system", "content": ECHO_NOTE}, messages[-1]]
            if attempt == 1:
                _wait_as_asked(exc)
                if on_retry is not None:
                    on_retry()
        except LLMError as exc:
            attempts, error = attempts + 1, f"{type(exc).__name__}: {exc}"
            logger.error("llm %s: %s; not retrying", role, exc)
            break
    elapsed = time.monotonic() - started
    said = _after_echoes(messages) if error.startswith(EchoedMessage.__name__) else (
        REFUSED_REPLY if refused is not None else None)
    if said is not None:
        if on_retry is not None:
            on_retry()  # whatever of the echo (or the offer) went out is void
        with suppress(StopStream):
            on_delta(said)
        return Completion(said, client.role(role).model, 0, 0, 0, elapsed, attempts=attempts,
                          error=error[:300]), False
    return Completion(FALLBACK_REPLY, client.role(role).model, 0, 0, 0, elapsed, attempts=attempts,
                      error=error[:300]), True


def _after_echoes(messages: list[Message]) -> str:
    asked = str(messages[-1].get("content") or "") if messages and messages[-1].get("role") == "user" else ""
    return UNSURE_REPLY if asked.rstrip().endswith("?") else NOTED_REPLY


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
