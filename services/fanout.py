"""The per-process pub/sub fan-out that wakes every open SSE stream of a channel (logs: services/streams.py)."""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable

import redis

from services.text import as_text

logger = logging.getLogger(__name__)

CHANNEL_PREFIX = "sse:"  # every request's and person's channel: services/streams.py publishes on it

REPORT_EVERY_S = 15.0  # metrics drop a process's stream count after 60 s without a report
RECONNECT_PAUSE_S = 0.5


class FanOut:
    """One pub/sub connection per web process, waking every open stream of a channel.

    A stream registers a ``queue.Queue``; the listener puts the event id on it. Under
    gunicorn's gevent worker the thread and queue are green, so thousands of streams share
    one Redis connection instead of exhausting redis-py's pool of 100.
    """

    def __init__(self, redis_client: redis.Redis, on_change: Callable[[int], None] | None = None, *,
                 min_report_s: float = 0.0) -> None:
        """``on_change`` gets the number of open streams when it changes and every few seconds.

        With ``min_report_s``, changes are reported at most that often (the listener sends the latest
        count within about a second): a chat opens and closes a stream, and each report is a round trip.
        """
        self.redis = redis_client
        self.on_change = on_change
        self.min_report_s = min_report_s
        self._reported_at = float("-inf")
        self._unreported = False
        self._subscribers: dict[str, set[queue.Queue[str]]] = {}
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self._failures = 0  # failed connection attempts in the current outage

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="sse-fanout", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stopping.set()

    def subscribe(self, channel: str) -> queue.Queue[str]:
        wakeups: queue.Queue[str] = queue.Queue()
        with self._lock:
            self._subscribers.setdefault(channel, set()).add(wakeups)
        self.start()
        self._report()
        return wakeups

    def unsubscribe(self, channel: str, wakeups: queue.Queue[str]) -> None:
        with self._lock:
            subscribers = self._subscribers.get(channel)
            if subscribers is not None:
                subscribers.discard(wakeups)
                if not subscribers:
                    del self._subscribers[channel]
        self._report()

    @property
    def open_streams(self) -> int:
        with self._lock:
            return sum(len(s) for s in self._subscribers.values())

    def _run(self) -> None:
        # Whatever goes wrong with Redis, the listener must come back: a dead fan-out would leave
        # every stream of this process to its one-second log poll until the process restarts.
        while not self._stopping.is_set():
            try:
                self._listen()
            except (redis.RedisError, OSError) as exc:
                self._failures += 1
                if self._failures == 1:  # once per outage, not twice a second while it lasts
                    logger.warning("sse fan-out lost its Redis connection (%s); reconnecting", exc)
                self._stopping.wait(RECONNECT_PAUSE_S)

    def _connected(self) -> None:
        if self._failures:
            logger.warning("sse fan-out reconnected to Redis after %d failed attempt(s)", self._failures)
        self._failures = 0
        # Wake-ups published while we were away are lost: every stream re-reads its log now.
        self._wake_all()

    def _listen(self) -> None:
        pubsub = self.redis.pubsub(ignore_subscribe_messages=True)
        pubsub.psubscribe(CHANNEL_PREFIX + "*")
        self._connected()
        reported = time.monotonic()
        try:
            while not self._stopping.is_set():
                message = pubsub.get_message(timeout=1.0)
                if message is not None:
                    self._dispatch(as_text(message["channel"]), as_text(message["data"]))
                if time.monotonic() - reported >= REPORT_EVERY_S:  # keeps long-lived streams in the gauge
                    reported = time.monotonic()
                    self._report(force=True)
                elif self._unreported:
                    self._report()
        finally:
            pubsub.close()

    def _wake_all(self) -> None:
        with self._lock:
            targets = [(channel, wakeups) for channel, queues in self._subscribers.items() for wakeups in queues]
        for _channel, wakeups in targets:
            wakeups.put("")  # no event: read the log

    def _dispatch(self, channel: str, payload: str) -> None:
        with self._lock:
            targets = list(self._subscribers.get(channel, ()))
        for wakeups in targets:
            wakeups.put(payload)

    def _report(self, *, force: bool = False) -> None:
        if self.on_change is None:
            return
        now = time.monotonic()
        if not force and now - self._reported_at < self.min_report_s:
            self._unreported = True  # the listener reports it on its next pass
            return
        self._reported_at, self._unreported = now, False
        try:
            self.on_change(self.open_streams)
        except redis.RedisError:
            logger.warning("could not report the open-stream count")
