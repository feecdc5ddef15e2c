"""Chat before housekeeping: background LLM requests wait while a chat turn is generating.

Digest workers mark each turn's generation in a Redis sorted set (member: request id, score: the
time the mark expires, so a crashed worker cannot block housekeeping for long). Background roles
(chunker, episodes, periodic services) call ``wait_for_chat`` before each LLM request: on 2 cores a
background generation running beside a chat reply roughly halves the reply's speed.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import redis

logger = logging.getLogger(__name__)

CHAT_IN_FLIGHT_KEY = "llm:chat_in_flight"
MARK_TTL_S = 120.0  # longer than a streamed reply takes even on a loaded machine
MAX_WAIT_S = 60.0  # housekeeping is never starved for good by a stream of chats
POLL_S = 0.1


class ChatPriority:
    """Marks chat turns in flight and lets background work wait for them."""

    def __init__(self, connection: redis.Redis, *, clock: Callable[[], float] = time.time) -> None:
        self.redis = connection
        self.clock = clock

    def mark(self, pipeline: redis.client.Pipeline, request_id: str) -> None:
        """Queue the turn's in-flight mark on the caller's pipeline (the digest's opening transaction)."""
        pipeline.zadd(CHAT_IN_FLIGHT_KEY, {request_id: self.clock() + MARK_TTL_S})

    def clear(self, request_id: str, pipeline: redis.client.Pipeline | None = None) -> None:
        """Drop the turn's mark: queued on ``pipeline`` when given, else now (a Redis error is only logged)."""
        if pipeline is not None:
            pipeline.zrem(CHAT_IN_FLIGHT_KEY, request_id)
            return
        try:
            self.redis.zrem(CHAT_IN_FLIGHT_KEY, request_id)
        except redis.RedisError:
            logger.warning("could not clear the in-flight mark of chat turn %s", request_id)

    def chats_in_flight(self) -> int:
        """Chat turns generating right now (expired marks are dropped)."""
        now = self.clock()
        pipe = self.redis.pipeline()
        pipe.zremrangebyscore(CHAT_IN_FLIGHT_KEY, "-inf", now)
        pipe.zcard(CHAT_IN_FLIGHT_KEY)
        return int(pipe.execute()[1])

    def wait_for_chat(self, role: str) -> float:
        """Block while a chat turn is generating (at most ``MAX_WAIT_S``); returns the seconds waited."""
        started = time.monotonic()
        try:
            while self.chats_in_flight() and time.monotonic() - started < MAX_WAIT_S:
                time.sleep(POLL_S)
        except redis.RedisError:
            logger.warning("chat priority unknown (Redis error); %s goes ahead", role)
        waited = time.monotonic() - started
        if waited >= POLL_S:
            logger.info("llm %s waited %.1f s for chat turns", role, waited)
        return waited
