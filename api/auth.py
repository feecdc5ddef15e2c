"""Bearer-token authentication (a token names its user) and the per-token rate limit."""

from __future__ import annotations

import hmac
import logging
import math
from dataclasses import dataclass

import redis
from flask import current_app, request

from services.errors import TooManyRequests, Unauthorized
from services.limits import fingerprint

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Caller:
    user_id: str
    key: str  # what rate limits count by: the token's fingerprint, or the user without tokens


def current_caller() -> Caller:
    """Who makes this request, resolved once per request."""
    # Kept in the WSGI environ, not flask.g: an app context (and its g) can outlive one request
    # while a stream is open, but the environ is this request's alone.
    caller = request.environ.get("engram.caller")
    if caller is None:
        caller = request.environ["engram.caller"] = _authenticate()
    return caller


def current_user() -> str:
    """The user making this request; without configured tokens, the single local user."""
    return current_caller().user_id


def _authenticate() -> Caller:
    settings = current_app.extensions["engram"].settings
    if not settings.auth_required:
        return Caller(settings.default_user, "user:" + fingerprint(settings.default_user))
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        raise Unauthorized("missing bearer token: send 'Authorization: Bearer <token>'")
    presented = token.encode()
    user = None
    for known, owner in settings.api_tokens.items():
        # Constant-time comparison, and no early exit, so timing leaks neither a prefix nor which token matched.
        if hmac.compare_digest(known.encode(), presented) and user is None:
            user = owner
    if user is None:
        raise Unauthorized("unknown token")
    return Caller(user, "token:" + fingerprint(token))


def enforce_rate_limit(scope: str) -> None:
    """Count this request against the caller's budget for ``scope`` (``chat`` or ``memory``); 429 when spent."""
    caller = current_caller()
    limits = current_app.extensions["engram.limits"]
    limiter = current_app.extensions["engram.limiter"]
    try:
        wait_s = limiter.wait_s(scope, caller.key, getattr(limits, scope))
    except redis.RedisError as exc:
        # Failing open: a limiter outage must not take the API down with it (Redis health is /healthz's job).
        logger.warning("rate limiter unavailable (%s); request allowed", type(exc).__name__)
        return
    if wait_s > 0:
        retry_after = max(1, math.ceil(wait_s))
        raise TooManyRequests(f"too many {scope} requests for this token; retry in {retry_after} s",
                              retry_after=retry_after)
