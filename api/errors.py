"""One place that turns errors into JSON responses."""

from __future__ import annotations

import logging

import redis
from flask import Flask, jsonify, request
from sqlalchemy import exc as sa_exc
from werkzeug.exceptions import HTTPException

from services.errors import BadRequest
from services.storable import unstorable_reason

logger = logging.getLogger(__name__)

# How long a client should wait before trying again while a dependency is down: the supervisor
# restarts an embedded server within a second or two; an external one may take longer.
RETRY_AFTER_S = 5
DEPENDENCY_NAMES = {"redis": "Redis", "postgres": "PostgreSQL"}


def error_response(status: int, code: str, message: str, **details: object):  # type: ignore[no-untyped-def]
    body = {"error": {"code": code, "message": message, **details}}
    return jsonify(body), status


def unavailable_response(dependency: str):  # type: ignore[no-untyped-def]
    """503 + Retry-After naming the dependency that is down; nothing was accepted."""
    name = DEPENDENCY_NAMES[dependency]
    message = (f"{name} is unavailable right now, so Engram cannot take this request (nothing was queued). "
               f"Try again in {RETRY_AFTER_S} seconds.")
    body, status = error_response(503, "dependency_unavailable", message, dependency=dependency,
                                  retry_after_s=RETRY_AFTER_S)
    return body, status, {"Retry-After": str(RETRY_AFTER_S)}


def init_app(app: Flask) -> None:
    @app.before_request
    def _storable_query() -> None:
        # Query values and the path's ids reach SQL and Redis: refuse NUL and lone surrogates in any of them,
        # on every route (a NUL in /threads/<thread_id> reached PostgreSQL and answered 500).
        for key, value in request.args.items(multi=True):
            reason = unstorable_reason(key, "a query parameter name") or unstorable_reason(value, f"'{key}'")
            if reason:
                raise BadRequest(reason)
        for key, value in (request.view_args or {}).items():
            reason = unstorable_reason(value, f"the path's {key}")
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

    # ConnectionError covers refused connections and a server still loading its data (BusyLoadingError).
    @app.errorhandler(redis.ConnectionError)
    @app.errorhandler(redis.TimeoutError)
    def _redis_down(error: redis.RedisError):  # type: ignore[no-untyped-def]
        logger.warning("Redis unavailable: %s", error)
        return unavailable_response("redis")

    # OperationalError: refused, restarting ("the database system is starting up") or a dropped
    # connection; TimeoutError: no pooled connection could be had.
    @app.errorhandler(sa_exc.OperationalError)
    @app.errorhandler(sa_exc.InterfaceError)
    @app.errorhandler(sa_exc.TimeoutError)
    def _postgres_down(error: Exception):  # type: ignore[no-untyped-def]
        logger.warning("PostgreSQL unavailable: %s", str(error).splitlines()[0] if str(error) else error)
        return unavailable_response("postgres")

    @app.errorhandler(Exception)
    def _unexpected(error: Exception):  # type: ignore[no-untyped-def]
        logger.exception("unhandled error in request")
        return error_response(500, "internal_error", "Something went wrong on our side; nothing was queued.")
