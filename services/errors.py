"""Engram's exceptions, one tree per concern.

    EngramError
    ├── BadRequest            client input is unusable (→ 4xx JSON)
    │   ├── PayloadTooLarge   text over the configured limit (→ 413)
    │   ├── UnsupportedMediaType  not application/json (→ 415)
    │   ├── Unauthorized      missing or unknown bearer token (→ 401)
    │   ├── NotFound          unknown id, or one owned by another user (→ 404)
    │   └── TooManyRequests   the token's rate limit is spent (→ 429 with Retry-After)
    ├── PipelineError         a stage of the digest job failed
    │   ├── LLMError
    │   │   ├── LLMTimeout
    │   │   ├── LLMUnavailable     connection refused, 5xx, 429 after retries
    │   │   └── LLMMalformedOutput empty stream, invalid JSON, wrong shape
    │   │       └── EchoedMessage  the reply only repeated the person's message
    │   ├── EmbeddingError
    │   ├── ModelUnavailable  the embedding model would not load (mid-job: a pair's second graph)
    │   ├── ThreadBusy        another job of the same thread kept the lock too long
    │   └── Superseded        another run of the same request took over (this one stops quietly)
    └── EmbeddedServerError   the embedded PostgreSQL / Redis / LLM could not start
"""

from __future__ import annotations


class EngramError(Exception):
    """Base of every error Engram raises on purpose."""


class BadRequest(EngramError):
    status_code = 400
    code = "bad_request"


class PayloadTooLarge(BadRequest):
    status_code = 413
    code = "payload_too_large"


class UnsupportedMediaType(BadRequest):
    status_code = 415
    code = "unsupported_media_type"


class Unauthorized(BadRequest):
    status_code = 401
    code = "unauthorized"


class NotFound(BadRequest):
    status_code = 404
    code = "not_found"


class TooManyRequests(BadRequest):
    status_code = 429
    code = "rate_limited"

    def __init__(self, message: str, *, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class PipelineError(EngramError):
    """A stage of the pipeline failed; RQ may retry the job."""


class LLMError(PipelineError):
    pass


class LLMTimeout(LLMError):
    pass


class LLMUnavailable(LLMError):
    """Connection refused, 5xx, 429; ``retry_after_s`` is the endpoint's ``Retry-After`` when it sent one."""

    def __init__(self, message: str, retry_after_s: float | None = None) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class LLMMalformedOutput(LLMError):
    pass


class EchoedMessage(LLMMalformedOutput):
    """A small model wrote the person's message back as its reply (retried once with a note against it)."""


class NamesRefused(LLMMalformedOutput):
    """A reply offered something the person said they never want (retried once, told what to leave out)."""

    def __init__(self, thing: str, offered: str = "") -> None:
        super().__init__(f"the reply offered {thing!r}, which the person refused")
        self.thing = thing
        self.offered = offered  # the reply up to the thing (shown to the model when it writes it again)


class EmbeddingError(PipelineError):
    pass


class ModelUnavailable(PipelineError):
    """The embedding model could not be loaded: no text is to blame (unlike ``EmbeddingError``), so nothing is set
    aside; the job fails and RQ runs it again."""


class ThreadBusy(PipelineError):
    pass


class Superseded(PipelineError):
    """A later run of the same request started while this one was still alive; this one must stop.

    It happens when a worker's job lease lapses although the worker lives (Redis was unreachable
    for longer than the lease), so the job was handed to another worker.
    """


class EmbeddedServerError(EngramError):
    pass
