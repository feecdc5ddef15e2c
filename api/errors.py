"""One place that turns errors into JSON responses."""

from __future__ import annotations

import logging

from flask import Flask, jsonify, request
from werkzeug.exceptions import HTTPException

from services.errors import BadRequest
from services.storable import unstorable_reason

logger = logging.getLogger(__name__)


def error_response(status: int, code: str, message: str, **details: object):  # type: ignore[no-untyped-def]
    body = {"error": {"code": code, "message": message, **details}}
    return jsonify(body), status


def init_app(app: Flask) -> None:
    @app.before_request
    def _storable_query() -> None:
        # Query values reach SQL and Redis: refuse NUL and lone surrogates in any of them, on every route.
        for key, value in request.args.items(multi=True):
            reason = unstorable_reason(key, "a query parameter name") or unstorable_reason(value, f"'{key}'")
            if reason:
                raise BadRequest(reason)

    @app.errorhandler(BadRequest)
    def _bad_request(error: BadRequest):  # type: ignore[no-untyped-def]
        retry_after = getattr(error, "retry_after", None)
        if retry_after is None:
            return error_response(error.status_code, error.code, str(error))
        body, status = error_response(error.status_code, error.code, str(error), retry_after_s=retry_after)
        body.headers["Retry-After"] = str(retry_after)
        return body, status

    @app.errorhandler(HTTPException)
    def _http(error: HTTPException):  # type: ignore[no-untyped-def]
        code = (error.name or "error").lower().replace(" ", "_")
        return error_response(error.code or 500, code, error.description or error.name)

    @app.errorhandler(Exception)
    def _unexpected(error: Exception):  # type: ignore[no-untyped-def]
        logger.exception("unhandled error in request")
        return error_response(500, "internal_error", "Something went wrong on our side; nothing was queued.")
