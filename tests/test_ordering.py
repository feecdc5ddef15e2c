"""Per-thread ordering, lease takeover and thread state (fakeredis)."""

from __future__ import annotations

import threading
import time

import fakeredis
import pytest

from services.errors import ThreadBusy
from services.queues import PENDING_KEY, REQUEST_KEY, ChatRequest, ThreadLease, pending_head
from services.streams import EventLog
from services.threads import ThreadStore, blend_confidence, blended_topic_confidence, history_text
from workers.ordering import process_in_order


@pytest.fixture
def redis_client():
    return fakeredis.FakeRedis()


def make_request(redis_client, n: int, thread: str = "t1") -> ChatRequest:
    request = ChatRequest(f"r{n}", "alice", thread, f"message {n}", "text", time.time())
    redis_client.set(REQUEST_KEY % request.request_id, request.to_json())
    redis_client.rpush(PENDING_KEY % thread, request.request_id)
    return request


def recorder(events: EventLog, processed: list[str]):
    def process(request: ChatRequest) -> None:
        processed.append(request.request_id)
        events.set_output(request.request_id, {"status": "ok"})

    return process


def test_a_later_job_processes_earlier_messages_first(redis_client):
    events = EventLog(redis_client)
    first, second = make_request(redis_client, 1), make_request(redis_client, 2)
    processed: list[str] = []
    result = process_in_order(redis_client, events, second, recorder(events, processed), wait_s=2)
    assert result == "processed"
    assert processed == ["r1", "r2"]
    # The earlier job then finds its message finished and does nothing twice.
    assert process_in_order(redis_client, events, first, recorder(events, processed), wait_s=2) == "already-finished"
    assert processed == ["r1", "r2"]
    assert pending_head(redis_client, "t1") is None


def test_jobs_of_one_thread_never_overlap(redis_client):
    events = EventLog(redis_client)
    requests = [make_request(redis_client, n) for n in range(6)]
    active, overlaps, order = [0], [0], []
    lock = threading.Lock()

    def process(request: ChatRequest) -> None:
        with lock:
            active[0] += 1
            overlaps[0] = max(overlaps[0], active[0])
            order.append(request.request_id)
        time.sleep(0.02)
        with lock:
            active[0] -= 1
        events.set_output(request.request_id, {"status": "ok"})

    threads = [threading.Thread(target=process_in_order, args=(redis_client, events, r, process),
                                kwargs={"wait_s": 10}) for r in reversed(requests)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=15)
    assert overlaps[0] == 1
    assert order == [r.request_id for r in requests]


def test_waits_for_a_held_lease_then_gives_up(redis_client):
    events = EventLog(redis_client)
    request = make_request(redis_client, 1)
    assert ThreadLease(redis_client, "t1", "another-host:1", ttl_ms=10_000).claim("r0")[0]
    with pytest.raises(ThreadBusy):
        process_in_order(redis_client, events, request, recorder(events, []), wait_s=0.2)


def test_takes_over_when_a_dead_holders_lease_lapses(redis_client):
    events = EventLog(redis_client)
    request = make_request(redis_client, 1)
    assert ThreadLease(redis_client, "t1", "another-host:1", ttl_ms=200).claim("r0")[0]  # a worker that died holding it
    processed: list[str] = []
    assert process_in_order(redis_client, events, request, recorder(events, processed), wait_s=5) == "processed"
    assert processed == ["r1"]


def test_lease_release_only_by_its_holder(redis_client):
    mine, theirs = ThreadLease(redis_client, "t9", "host-a:1"), ThreadLease(redis_client, "t9", "host-b:2")
    assert mine.claim("r1")[0]
    assert not theirs.claim("r1")[0]
    theirs.release()
    assert redis_client.exists("thread:lease:t9")
    mine.release()
    assert theirs.claim("r1")[0]


def test_confidence_blends_halfway():
    assert blend_confidence(0.2, 1.0) == pytest.approx(0.6)
    assert blend_confidence(0.8, 0.0) == pytest.approx(0.4)


def test_thread_store_records_each_exchange_once(redis_client):
    store = ThreadStore(redis_client, ttl_s=60, working_memory_size=3)
    for n in range(5):
        entry = {"request_id": f"r{n}", "user": f"u{n}", "reply": f"a{n}", "mode": "RESPOND"}
        assert store.record_exchange("t1", "alice", entry, now=1000.0 + n)
    assert not store.record_exchange("t1", "alice", {"request_id": "r4", "user": "u4", "mode": "RESPOND"})
    memory = store.working_memory("t1")
    assert [m["request_id"] for m in memory] == ["r2", "r3", "r4"]
    state = store.state("t1")
    assert state.turns == 5 and state.last_mode == "RESPOND" and state.user_id == "alice"
    assert state.started == 1000.0 and state.last_active == 1004.0  # when it began (the small model's block)
    assert redis_client.ttl("thread:wm:t1") > 0


def test_topic_confidence_blends_on_same_topic_and_resets_on_switch(redis_client):
    store = ThreadStore(redis_client, ttl_s=60)

    def turn(n: int, topic: str, confidence: float) -> float:
        """A turn as the digest stores it: the blended confidence written with the exchange."""
        blended = blended_topic_confidence(store.state("t1"), topic, confidence)
        store.record_exchange("t1", "alice", {"request_id": f"r{n}", "mode": "RESPOND"}, topic=(topic, blended))
        return store.state("t1").topic_confidence

    assert turn(1, "cooking", 0.8) == pytest.approx(0.8)
    assert turn(2, "cooking", 0.4) == pytest.approx(0.6)
    assert turn(3, "travel", 0.9) == pytest.approx(0.9)


def test_history_text_renders_turns():
    text = history_text([{"user": "hi", "reply": "hello"}, {"user": "how are you?", "reply": ""}])
    assert text == "User: hi\nEngram: hello\nUser: how are you?"
    assert "no earlier messages" in history_text([])
