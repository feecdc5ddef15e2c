"""Event log and SSE following (fakeredis; the fan-out runs as a real thread)."""

from __future__ import annotations

import json
import threading
import time

import fakeredis
import pytest

from services.errors import Superseded
from services.fanout import FanOut
from services.streams import Event, EventLog, StreamLimits, follow, request_channel, user_channel


@pytest.fixture
def redis_client():
    return fakeredis.FakeRedis()


@pytest.fixture
def log(redis_client):
    return EventLog(redis_client, ttl_s=60)


def parse(frame: str) -> dict:
    fields = {}
    for line in frame.strip().splitlines():
        key, _, value = line.partition(": ")
        fields[key] = value
    return fields


def test_publish_assigns_increasing_ids_and_ttl(log, redis_client):
    channel = request_channel("r1")
    first = log.publish(channel, "status", {"stage": "processing"})
    second = log.publish(channel, "delta", {"text": "hi"})
    assert first < second or first.split("-")[0] <= second.split("-")[0]
    events = log.read_after(channel, None)
    assert [e.event for e in events] == ["status", "delta"]
    assert redis_client.ttl(f"events:{channel}") > 0


def test_read_after_returns_only_later_events(log):
    channel = request_channel("r2")
    ids = [log.publish(channel, "delta", {"text": str(i)}) for i in range(5)]
    later = log.read_after(channel, ids[2])
    assert [e.data["text"] for e in later] == ["3", "4"]


def test_malformed_last_event_id_replays_everything(log):
    channel = request_channel("r3")
    log.publish(channel, "status", {"stage": "processing"})
    assert len(log.read_after(channel, "not-an-id")) == 1


def test_output_roundtrip(log):
    assert log.get_output("x") is None
    log.set_output("x", {"status": "ok", "text": "hello"})
    assert log.get_output("x")["text"] == "hello"


def test_event_frame_format():
    frame = Event("1-0", "message", {"text": "a\nb"}).to_sse()
    assert frame.startswith("id: 1-0\nevent: message\ndata: ")
    assert frame.endswith("\n\n")
    assert json.loads(parse(frame)["data"]) == {"text": "a\nb"}


def frames_of(writes) -> list[str]:
    """The SSE frames in a stream's writes (events that arrive together share one write)."""
    return [frame + "\n\n" for write in writes for frame in write.split("\n\n") if frame]


def _collect(log, fanout, channel, last_id, limits, out, terminal="done"):
    for write in follow(log, fanout, channel, last_id, limits, terminal_event=terminal):
        out.extend(frames_of([write]))


def _live_reader(log, fanout, channel, frames):
    """A stream following ``channel`` from its first event (``status``, published here), already listening."""
    log.publish(channel, "status", {"stage": "processing"})
    limits = StreamLimits(keepalive_s=5, still_working_s=20, cap_s=10, poll_s=0.05)
    reader = threading.Thread(target=_collect, args=(log, fanout, channel, None, limits, frames))
    reader.start()
    time.sleep(0.2)
    return reader


def test_follow_replays_then_streams_live_until_done(log, redis_client):
    fanout = FanOut(redis_client)
    channel = request_channel("r4")
    frames: list[str] = []
    reader = _live_reader(log, fanout, channel, frames)
    log.publish(channel, "delta", {"text": "he"})
    log.publish(channel, "message", {"text": "hello"})
    log.publish(channel, "done", {"duration_ms": 3})
    reader.join(timeout=5)
    fanout.stop()
    assert not reader.is_alive()
    assert [parse(f)["event"] for f in frames] == ["status", "delta", "message", "done"]
    assert all("id" in parse(f) for f in frames)


def test_follow_resumes_after_last_event_id(log, redis_client):
    fanout = FanOut(redis_client)
    channel = request_channel("r5")
    first = log.publish(channel, "status", {"stage": "processing"})
    log.publish(channel, "delta", {"text": "x"})
    log.publish(channel, "done", {"duration_ms": 1})
    log.publish(channel, "status", {"stage": "after the end"})
    writes = list(follow(log, fanout, channel, first, StreamLimits(cap_s=5, poll_s=0.05)))
    assert len(writes) == 1  # logged together, sent together: one send() and one wake-up of the client
    assert [parse(f)["event"] for f in frames_of(writes)] == ["delta", "done"]  # nothing after `done`


def test_follow_sends_keepalive_still_working_and_gives_up_at_cap(log, redis_client):
    fanout = FanOut(redis_client)
    channel = request_channel("r6")
    last = log.publish(channel, "status", {"stage": "processing"})
    limits = StreamLimits(keepalive_s=0.1, still_working_s=0.25, cap_s=0.6, poll_s=0.05)
    frames = frames_of(follow(log, fanout, channel, None, limits))
    kinds = [parse(f).get("event", "comment") for f in frames]
    assert ": keepalive\n\n" in frames
    assert "status" in kinds[1:]  # still_working after the first status
    assert kinds[-2:] == ["error", "done"]
    error = json.loads(parse(frames[-2])["data"])
    assert error["recoverable"] is True
    # Frames the web process makes reuse the last logged id, so resuming loses nothing.
    assert parse(frames[-1])["id"] == last
    assert fanout.open_streams == 0


def test_proactive_stream_has_no_cap(log, redis_client):
    fanout = FanOut(redis_client)
    channel = "sse:user:alice"
    log.publish(channel, "reminder", {"text": "call the dentist"})
    limits = StreamLimits(keepalive_s=0.05, still_working_s=float("inf"), cap_s=None, poll_s=0.02)
    stream = follow(log, fanout, channel, None, limits, terminal_event=None)
    first = next(stream)
    second = next(stream)
    stream.close()
    assert parse(first)["event"] == "reminder"
    assert second == ": keepalive\n\n"


def test_fanout_reports_the_open_stream_count_as_it_changes(redis_client):
    reported: list[int] = []
    fanout = FanOut(redis_client, on_change=reported.append)
    first = fanout.subscribe("sse:a")
    second = fanout.subscribe("sse:b")
    fanout.unsubscribe("sse:a", first)
    fanout.stop()
    assert reported[-3:] == [1, 2, 1]
    fanout.unsubscribe("sse:b", second)
    assert reported[-1] == 0


def test_open_streams_gauge_sums_live_processes(redis_client):
    from prometheus_client import CollectorRegistry, generate_latest

    from services.metrics import SSE_OPEN_KEY, Metrics, RedisCollector

    Metrics(redis_client).set_open_streams(3)
    redis_client.hset(SSE_OPEN_KEY, "gone-host:1", f"5|{time.time() - 3600}")  # a process that stopped reporting
    registry = CollectorRegistry()
    registry.register(RedisCollector(redis_client))
    assert "engram_sse_open_streams 3.0" in generate_latest(registry).decode()


@pytest.mark.integration
def test_fanout_wakes_every_stream_after_it_reconnects(redis_server):
    """Events published while the listener was reconnecting are read at once, not at the next poll."""
    import redis

    client = redis.Redis.from_url(redis_server.url)
    fanout = FanOut(client)
    wakeups = fanout.subscribe("sse:user:alice")
    try:
        assert wakeups.get(timeout=5) == ""  # the first subscribe wakes it too ("" carries no event: read the log)
        # Drop the listener's connection server-side, as a Redis restart or a network blip would.
        deadline = time.monotonic() + 5
        while not client.client_kill_filter(_type="pubsub") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert wakeups.get(timeout=10) == "", "no wake-up after the fan-out reconnected"
    finally:
        fanout.stop()
        time.sleep(1.5)  # the listener notices the stop within its 1 s read timeout
        client.close()


def test_throttled_fanout_reports_the_latest_count_within_a_second(redis_client):
    """A chat opens and closes a stream: reports are capped, but the final count arrives anyway."""
    reported: list[int] = []
    fanout = FanOut(redis_client, on_change=reported.append, min_report_s=1.0)
    first = fanout.subscribe("sse:a")
    second = fanout.subscribe("sse:b")
    fanout.unsubscribe("sse:a", first)
    assert reported == [1]  # the two changes after it were within the second
    deadline = time.monotonic() + 5
    while reported[-1] != 1 or len(reported) < 2:
        assert time.monotonic() < deadline, f"the latest count was never reported: {reported}"
        time.sleep(0.05)
    fanout.unsubscribe("sse:b", second)
    fanout.stop()


@pytest.mark.integration
def test_a_stream_gets_every_event_in_order_when_pub_sub_skips_one(redis_server):
    """Events ride on pub/sub; one logged without a pub/sub message (a gap in the chain) is read from the log."""
    import redis

    client = redis.Redis.from_url(redis_server.url)
    log, fanout = EventLog(client, ttl_s=60), FanOut(client)
    channel = request_channel("gap")
    first = Event(log.publish(channel, "status", {"stage": "processing"}), "status", {"stage": "processing"})
    frames = follow(log, fanout, channel, None, StreamLimits(keepalive_s=30, poll_s=30, cap_s=20), first=first)
    received = [next(frames)]
    try:
        def publish_rest() -> None:
            time.sleep(0.3)
            log.publish(channel, "delta", {"text": "one"})
            client.xadd(f"events:{channel}", {"event": "delta", "data": json.dumps({"text": "two"})})  # no pub/sub
            log.publish(channel, "delta", {"text": "three"})
            log.publish(channel, "done", {"duration_ms": 1})

        publisher = threading.Thread(target=publish_rest)
        publisher.start()
        started = time.monotonic()
        received += frames_of(frames)
        publisher.join()
        assert time.monotonic() - started < 5, "waited for the 30 s poll instead of reading the log at the gap"
    finally:
        fanout.stop()
    texts = [json.loads(frame.split("data: ", 1)[1])["text"] for frame in received if "event: delta" in frame]
    assert texts == ["one", "two", "three"]
    assert received[-1].startswith("id: ") and "event: done" in received[-1]


def test_heard_events_chain_only_from_the_last_delivered_id() -> None:
    from services.streams import _chained

    def heard(prev: str, event_id: str, text_: str) -> str:
        return f"{prev}\n{event_id}\ndelta\n" + json.dumps({"text": text_})

    chain = [heard("1-0", "2-0", "a"), heard("2-0", "3-0", "b")]
    assert [e.id for e in _chained(chain, "1-0")] == ["2-0", "3-0"]
    assert [e.id for e in _chained(chain, "2-0")] == ["3-0"]  # 2-0 was already read from the log
    assert _chained(chain, "3-0") == []
    assert _chained(chain, "0-5") is None  # something between 0-5 and 2-0 was not heard
    assert _chained(["", *chain], "1-0") is None  # a bare wake-up means: read the log
    assert _chained(chain, None) is None


def test_publish_all_sends_its_events_in_order_to_a_live_stream_even_after_a_script_flush(log, redis_client):
    fanout = FanOut(redis_client)
    channel = request_channel("r-all")
    frames: list[str] = []
    reader = _live_reader(log, fanout, channel, frames)
    log.publish(channel, "delta", {"text": "hel"})
    redis_client.script_flush()  # a Redis that restarted without its scripts
    ids = log.publish_all(channel, [("delta", {"text": "lo"}), ("message", {"text": "hello"}),
                                    ("done", {"duration_ms": 3})])
    reader.join(timeout=5)
    fanout.stop()
    assert not reader.is_alive()
    assert [parse(f)["event"] for f in frames] == ["status", "delta", "delta", "message", "done"]
    assert [parse(f)["id"] for f in frames[2:]] == ids
    assert "".join(e.data["text"] for e in log.read_after(channel, None) if e.event == "delta") == "hello"


def test_publish_all_of_a_run_taken_over_writes_nothing(log, redis_client):
    channel = request_channel("r-fenced")
    redis_client.set("attempts:r-fenced", "2")  # a later run of the request started
    with pytest.raises(Superseded):
        log.publish_all(channel, [("message", {"text": "late"}), ("done", {"duration_ms": 1})],
                        fence=("attempts:r-fenced", "1"))
    assert log.read_after(channel, None) == []
    assert log.publish_all(channel, [("message", {"text": "mine"})], fence=("attempts:r-fenced", "2"))
    assert [e.event for e in log.read_after(channel, None)] == ["message"]


def test_a_request_log_holds_one_outcome_and_one_done_whoever_publishes(log, redis_client):
    """However many runs of one request reach their end (a run handed on while it lived, a retry that read
    the log before the other's message, a failure callback after a message), its log ends once."""
    channel = request_channel("r-ends")
    redis_client.set("attempts:r-ends", "1")
    log.publish(channel, "delta", {"text": "hi"})
    first = log.publish_all(channel, [("message", {"text": "hi"}), ("done", {"duration_ms": 1})],
                            fence=("attempts:r-ends", "1"))
    assert log.publish(channel, "message", {"text": "again"}) == first[0]  # the first one's id
    assert log.publish(channel, "error", {"message": "failed", "recoverable": True}) == first[0]
    assert log.publish_all(channel, [("message", {"text": "third"}), ("done", {"duration_ms": 2})]) == first
    assert [(e.event, e.data.get("text")) for e in log.read_after(channel, None)] == [
        ("delta", "hi"), ("message", "hi"), ("done", None)]


def test_an_error_first_is_the_outcome_and_a_users_stream_is_not_limited(log, redis_client):
    channel = request_channel("r-error")
    log.publish(channel, "error", {"message": "the LLM failed", "recoverable": True})
    log.publish(channel, "message", {"text": "late"})
    assert [e.event for e in log.read_after(channel, None)] == ["error"]
    user = user_channel("u1")
    for n in range(3):
        log.publish(user, "done", {"n": n})
    assert len(log.read_after(user, None)) == 3
