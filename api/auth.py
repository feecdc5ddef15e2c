"""Bearer-token authentication: a token names its user."""

from __future__ import annotations

import hmac

from flask import current_app, request

from services.errors import Unauthorized


def current_user() -> str:
    """The user making this request; without configured tokens, the single local user."""
    settings = current_app.extensions["engram"].settings
    if not settings.auth_required:
        return settings.default_user
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthorized("missing bearer token: send 'Authorization: Bearer <token>'")
    for known, user in settings.api_tokens.items():
        # Constant-time comparison so response timing does not leak token prefixes.
        if hmac.compare_digest(known.encode(), token.strip().encode()):
            return user
    raise Unauthorized("unknown token")
