"""Server-Sent Event logs in Redis and the streams that follow them (the fan-out: services/fanout.py).

Every event of a request (or of a user's proactive stream) is appended to a capped Redis
Stream, which gives it a monotonic id, and then announced on pub/sub. The log is the source
of truth: a web process replays it after ``Last-Event-ID`` and reads it again whenever
pub/sub wakes it (or a tick passes), so a missed or late pub/sub message loses nothing.

The pub/sub message carries the event and the id of the entry before it in the log, so a
stream that has delivered exactly that entry sends the event on without reading the log back
(one Redis round trip per event less for the web process); any gap reads the log.
"""

from __future__ import annotations

import json
import logging
import queue
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import redis

from services.errors import Superseded
from services.fanout import FanOut
from services.queues import OUTPUT_KEY
from services.text import as_text

logger = logging.getLogger(__name__)

REQUEST_CHANNEL = "sse:%s"  # sse:{request_id}
USER_CHANNEL = "sse:user:%s"  # sse:user:{user_id}, the proactive stream
LOG_KEY = "events:%s"  # the Redis Stream behind a channel
REQUEST_LOG_MAXLEN = 5000
USER_LOG_MAXLEN = 500
USER_LOG_TTL_S = 7 * 24 * 3600
LOST_MESSAGE = ("Your message was lost while Engram's Redis restarted without its data. "
                "Please send it again.")
ONCE_KEY = "events:once:%s"  # idempotency key of an event → its id in the log
# KEYS: once key, log key; ARGV: event, data, maxlen, log ttl, once ttl, channel.
_PUBLISH_ONCE = """
local existing = redis.call('get', KEYS[1])
if existing then return {existing, 0} end
local id = redis.call('xadd', KEYS[2], 'MAXLEN', '~', ARGV[3], '*', 'event', ARGV[1], 'data', ARGV[2])
redis.call('expire', KEYS[2], ARGV[4])
redis.call('set', KEYS[1], id, 'EX', ARGV[5])
redis.call('publish', ARGV[6], '')
return {id, 1}
"""


# KEYS: log key, ends key; ARGV: event, data, maxlen, log ttl, channel, slot. The previous entry's id and
# the new one are read and written atomically, so the chain in the pub/sub messages has no hole. A request
# channel's ending events take a slot (``_SLOTS``): the first event of a slot is logged, a later one of the
# same slot is not (its caller gets the first one's id), so however many runs of one request reach their
# end (a run handed on while it lived, a retry, a failure callback), its log holds one outcome and one done.
_PUBLISH = """
if ARGV[6] ~= '' then
  local taken = redis.call('hget', KEYS[2], ARGV[6])
  if taken then return taken end
end
local last = redis.call('xrevrange', KEYS[1], '+', '-', 'COUNT', 1)
local prev = ''
if last[1] then prev = last[1][1] end
local id = redis.call('xadd', KEYS[1], 'MAXLEN', '~', ARGV[3], '*', 'event', ARGV[1], 'data', ARGV[2])
redis.call('expire', KEYS[1], ARGV[4])
if ARGV[6] ~= '' then
  redis.call('hset', KEYS[2], ARGV[6], id)
  redis.call('expire', KEYS[2], ARGV[4])
end
redis.call('publish', ARGV[5], prev .. '\\n' .. id .. '\\n' .. ARGV[1] .. '\\n' .. ARGV[2])
return id
"""
# The same, only while KEYS[3] holds ARGV[7] (the run's fence, services.queues.attempt_fence): a
# run another worker has taken over gets nil and writes nothing, in the same round trip.
_PUBLISH_FENCED = "if redis.call('get', KEYS[3]) ~= ARGV[7] then return nil end" + _PUBLISH
ENDS_KEY = "events:ends:%s"  # a request channel's ending events: slot → the id of the one logged
# The events a request's log holds at most one of: its outcome (a reply or an error, never both) and done.
_SLOTS = {"message": "outcome", "error": "outcome", "done": "done"}


@dataclass(frozen=True)
class Event:
    id: str
    event: str
    data: dict[str, Any]

    def to_sse(self) -> str:
        """Render as one SSE frame."""
        return f"id: {self.id}\nevent: {self.event}\ndata: {json.dumps(self.data, separators=(',', ':'))}\n\n"


def request_channel(request_id: str) -> str:
    return REQUEST_CHANNEL % request_id


def user_channel(user_id: str) -> str:
    return USER_CHANNEL % user_id


class EventLog:
    """Append and read the event log of channels; publishing is always log-then-notify."""

    def __init__(self, redis_client: redis.Redis, *, ttl_s: int = 3600) -> None:
        self.redis = redis_client
        self.ttl_s = ttl_s
        self._publish = redis_client.register_script(_PUBLISH)  # EVALSHA; reloaded after a Redis restart
        self._publish_fenced = redis_client.register_script(_PUBLISH_FENCED)

    def publish(self, channel: str, event: str, data: dict[str, Any], *, fence: tuple[str, str] | None = None) -> str:
        """Append an event to the channel's log and wake its listeners; returns the event id.

        With ``fence`` (key, value) the event is written only while that key holds that value;
        otherwise nothing is written and ``Superseded`` is raised.
        """
        args = self._args(channel, event, data)
        keys = [LOG_KEY % channel, ENDS_KEY % channel]
        # One round trip, atomic: the entry is in the log before any listener hears of it.
        if fence is None:
            return as_text(self._publish(keys=keys, args=args))
        event_id = self._publish_fenced(keys=[*keys, fence[0]], args=[*args, fence[1]])
        if event_id is None:
            raise Superseded(f"{channel}: another run holds {fence[0]}")
        return as_text(event_id)

    def publish_all(self, channel: str, events: list[tuple[str, dict[str, Any]]], *,
                    fence: tuple[str, str] | None = None) -> list[str]:
        """``publish`` each (event, data) in order, all in one round trip (a pipeline of the same script)."""
        script = self._publish if fence is None else self._publish_fenced
        keys = [LOG_KEY % channel, ENDS_KEY % channel, *([] if fence is None else [fence[0]])]
        extra = [] if fence is None else [fence[1]]

        def send() -> list[Any]:
            # MULTI/EXEC: all of them run at one moment, so a missing script fails all or none.
            pipe = self.redis.pipeline(transaction=True)
            for event, data in events:  # plain EVALSHA: a registered script would cost a SCRIPT EXISTS first
                pipe.evalsha(script.sha, len(keys), *keys, *self._args(channel, event, data), *extra)
            return pipe.execute()

        try:
            ids = send()
        except redis.exceptions.NoScriptError:  # a restarted Redis forgot the script: none of them ran
            self.redis.script_load(script.script)
            ids = send()
        if any(event_id is None for event_id in ids):
            raise Superseded(f"{channel}: another run holds {keys[-1]}")
        return [as_text(event_id) for event_id in ids]

    def _args(self, channel: str, event: str, data: dict[str, Any]) -> list[Any]:
        """ARGV of the publish scripts (the fence value aside)."""
        is_user = channel.startswith(USER_CHANNEL % "")
        maxlen = USER_LOG_MAXLEN if is_user else REQUEST_LOG_MAXLEN
        payload = json.dumps(data, separators=(",", ":"))
        slot = "" if is_user else _SLOTS.get(event, "")  # a user's stream has many reminders, many dones
        return [event, payload, maxlen, USER_LOG_TTL_S if is_user else self.ttl_s, channel, slot]

    def log_first(self, pipeline: redis.client.Pipeline, channel: str, event: str, data: dict[str, Any]) -> None:
        """Queue a request channel's first event on the caller's transaction (its result is the event id).

        The first event has no entry before it and nobody to wake: the one stream that can know the
        request id subscribes before the request is submitted and is handed this event directly
        (``follow(first=…, wakeups=…)``). So it is a plain append, no script and no pub/sub message.
        """
        pipeline.xadd(LOG_KEY % channel, {"event": event, "data": json.dumps(data, separators=(",", ":"))},
                      maxlen=REQUEST_LOG_MAXLEN, approximate=True)
        pipeline.expire(LOG_KEY % channel, self.ttl_s)

    def publish_once(self, channel: str, event: str, data: dict[str, Any], key: str) -> tuple[str, bool]:
        """Publish unless an event with this ``key`` was already published; returns (event id, new?).

        The check and the append are one Lua script, which Redis runs atomically: a crash can
        leave the event published or not, never published twice or marked without being sent.
        """
        is_user = channel.startswith(USER_CHANNEL % "")
        payload = json.dumps(data, separators=(",", ":"))
        result = self.redis.eval(_PUBLISH_ONCE, 2, ONCE_KEY % key, LOG_KEY % channel, event, payload,
                                 USER_LOG_MAXLEN if is_user else REQUEST_LOG_MAXLEN,
                                 USER_LOG_TTL_S if is_user else self.ttl_s, USER_LOG_TTL_S, channel)
        event_id, fresh = result
        return as_text(event_id), bool(fresh)

    def read_after(self, channel: str, last_id: str | None, count: int = 500) -> list[Event]:
        """Events strictly after ``last_id`` (all of them when None)."""
        start = "-" if not last_id else f"({last_id}"
        try:
            rows = self.redis.xrange(LOG_KEY % channel, min=start, max="+", count=count)
        except redis.ResponseError:
            # A malformed Last-Event-ID from a client: replay from the start rather than fail.
            rows = self.redis.xrange(LOG_KEY % channel, min="-", max="+", count=count)
        return [_row_to_event(row) for row in rows]

    def exists(self, channel: str) -> bool:
        """Does the channel's log exist? Written before a request is queued, so a missing one means lost data."""
        return bool(self.redis.exists(LOG_KEY % channel))

    def logged_kinds(self, channel: str) -> set[str]:
        """The event names logged on the channel so far (a retried job asks: was ``message`` sent?)."""
        return {entry.event for entry in self.read_after(channel, None, count=REQUEST_LOG_MAXLEN)}

    def set_output(self, request_id: str, output: dict[str, Any], *, pipeline: Any = None) -> None:
        """Record the request's outcome for late readers (queued on ``pipeline`` when given)."""
        (pipeline if pipeline is not None else self.redis).set(OUTPUT_KEY % request_id, json.dumps(output),
                                                              ex=self.ttl_s)

    def get_output(self, request_id: str) -> dict[str, Any] | None:
        raw = self.redis.get(OUTPUT_KEY % request_id)
        return json.loads(raw) if raw else None


def _row_to_event(row: tuple[Any, dict[Any, Any]]) -> Event:
    raw_id, fields = row
    decoded = {as_text(k): as_text(v) for k, v in fields.items()}
    return Event(id=as_text(raw_id), event=decoded["event"], data=json.loads(decoded["data"]))


@dataclass(frozen=True)
class StreamLimits:
    keepalive_s: float = 15.0
    still_working_s: float = 20.0
    cap_s: float | None = 360.0
    poll_s: float = 1.0


def follow(
    log: EventLog,
    fanout: FanOut,
    channel: str,
    last_event_id: str | None,
    limits: StreamLimits,
    *,
    terminal_event: str | None = "done",
    check_lost: bool = False,
    first: Event | None = None,
    wakeups: queue.Queue[str] | None = None,
) -> Iterator[str]:
    """Yield SSE frames for a channel: replay after ``last_event_id``, then follow live.

    Ends after ``terminal_event``, or at the cap with an ``error`` + ``done``. Frames the web
    process makes itself (still_working, the cap) reuse the last delivered id, so a client
    that resumes with that id misses nothing that was logged. While Redis is unreachable the
    stream stays open (keepalives, the cap still counts) and picks up where it was once Redis
    is back; with ``check_lost``, a channel whose log did not survive the outage (a Redis that
    came back empty) ends with an ``error`` within a keepalive period instead of waiting for the cap.
    ``first``: the channel's first event, just logged by the caller, sent without reading it back.
    ``wakeups``: the caller's subscription to the channel, made before ``first`` was logged: then
    nothing can have been published that the subscription did not hear, and the log is not read
    until pub/sub leaves a gap (or a tick passes).
    """
    # None: read the log (the first pass, a tick, a gap); [] chains on from ``first``.
    heard: list[str] | None = [] if wakeups is not None and first is not None else None
    wakeups = wakeups or fanout.subscribe(channel)
    started = last_sent = last_logged = time.monotonic()
    last_id = last_event_id
    outage = False
    try:
        if first is not None:
            last_id = first.id
            yield first.to_sse()
        while True:
            fresh = _next_events(log, channel, heard, last_id)
            if fresh is None:
                if not outage:
                    logger.warning("stream %s: Redis unreachable; holding the stream open", channel)
                outage, fresh = True, []
            elif outage:
                outage = False
                if check_lost and not fresh and _log_lost(log, channel):
                    continue  # the error and done just logged are read on the next pass
            if fresh:
                # Everything that arrived together goes out in one write (a `message` and its `done`
                # usually do): each write is a send() and a wake-up of the client.
                delivered = _through_terminal(fresh, terminal_event)
                last_id = delivered[-1].id
                last_sent = last_logged = time.monotonic()
                yield "".join(event.to_sse() for event in delivered)
                if delivered[-1].event == terminal_event:
                    return
            now = time.monotonic()
            if limits.cap_s is not None and now - started >= limits.cap_s:
                yield from _give_up(last_id, now - started)
                return
            if terminal_event and now - last_logged >= limits.still_working_s:
                last_logged = last_sent = now
                yield Event(last_id or "0-0", "status", {"stage": "still_working"}).to_sse()
            elif now - last_sent >= limits.keepalive_s:
                last_sent = now
                # A quiet stream also checks, at keepalive pace, that its log still exists: a
                # Redis restarted without its data within the client's retries looks like silence.
                if check_lost and _log_lost(log, channel):
                    continue
                yield ": keepalive\n\n"
            heard = _wait(wakeups, limits, now, started, last_sent)
    finally:
        fanout.unsubscribe(channel, wakeups)


def _through_terminal(events: list[Event], terminal_event: str | None) -> list[Event]:
    """``events`` up to and including the first ``terminal_event`` (nothing after it is sent)."""
    for index, event in enumerate(events):
        if event.event == terminal_event:
            return events[: index + 1]
    return events


def _next_events(log: EventLog, channel: str, heard: list[str] | None, last_id: str | None) -> list[Event] | None:
    """What pub/sub brought when it chains on, else the log's new events (None while Redis is unreachable)."""
    chained = _chained(heard, last_id) if heard is not None else None
    return chained if chained is not None else _read_safely(log, channel, last_id)


def _read_safely(log: EventLog, channel: str, last_id: str | None) -> list[Event] | None:
    """The channel's new events, or None while Redis cannot be reached."""
    try:
        return log.read_after(channel, last_id)
    except (redis.ConnectionError, redis.TimeoutError, OSError):
        return None


def _log_lost(log: EventLog, channel: str) -> bool:
    """After an outage: if the channel's log is gone, log an error + done for it; True when it did."""
    try:
        if log.exists(channel):
            return False
        logger.error("stream %s: its event log did not survive the Redis restart", channel)
        log.publish(channel, "error", {"message": LOST_MESSAGE, "recoverable": True})
        log.publish(channel, "done", {"duration_ms": 0})
    except (redis.ConnectionError, redis.TimeoutError, OSError):
        return False  # down again: the next successful read checks once more
    return True


def _wait(wakeups: queue.Queue[str], limits: StreamLimits, now: float, started: float,
          last_sent: float) -> list[str] | None:
    """The pub/sub messages that arrived (None when none did before the tick)."""
    timeout = min(limits.poll_s, max(0.01, limits.keepalive_s - (now - last_sent)))
    if limits.cap_s is not None:
        timeout = min(timeout, max(0.01, limits.cap_s - (now - started)))
    try:
        heard = [wakeups.get(timeout=timeout)]
        while not wakeups.empty():  # several events may have landed
            heard.append(wakeups.get_nowait())
    except queue.Empty:
        return None
    return heard


def _chained(heard: list[str], last_id: str | None) -> list[Event] | None:
    """The heard events that follow ``last_id`` without a gap, or None when the log must be read."""
    if last_id is None:
        return None
    events: list[Event] = []
    for payload in heard:
        prev, sep, rest = payload.partition("\n")
        event_id, _, rest = rest.partition("\n")
        name, _, data = rest.partition("\n")
        if not sep or not data:
            return None  # a bare wake-up (reconnect, publish_once): read the log
        if _stream_id(event_id) <= _stream_id(last_id):
            continue  # already delivered by an earlier log read
        if prev != last_id:
            return None  # something in between that this stream has not heard: read the log
        events.append(Event(event_id, name, json.loads(data)))
        last_id = event_id
    return events


def _stream_id(event_id: str) -> tuple[int, int]:
    millis, _, sequence = event_id.partition("-")
    try:
        return int(millis), int(sequence or 0)
    except ValueError:
        return (-1, -1)


def _give_up(last_id: str | None, waited_s: float) -> Iterator[str]:
    event_id = last_id or "0-0"
    message = f"No reply after {int(waited_s)} s; it may still arrive: reconnect to this request's events."
    yield Event(event_id, "error", {"message": message, "recoverable": True}).to_sse()
    yield Event(event_id, "done", {"duration_ms": int(waited_s * 1000)}).to_sse()
