"""Vectors follow an import: it returns with the words stored and searchable, the backfill job then
computes exactly the vectors an inline import would, shared by workers, resumable, and queued by the
vector_backfill service while rows wait."""

from __future__ import annotations

import datetime as dt
import json
import threading
import time

import numpy as np
import pytest
from rq import Queue
from rq.job import Job, JobStatus
from rq.registry import FailedJobRegistry
from sqlalchemy import select, text
from sqlalchemy.orm import Session

from services.db import Exchange, make_sessionmaker
from services.embeddings import PairedEmbedder
from services.errors import ModelUnavailable
from services.janitor import recover_abandoned
from services.memory import vocabulary
from services.memory.config import MemoryConfig, RecallConfig
from services.memory.importer import pair_exchanges, parse_lines, store_records
from services.memory.models import ExchangeLine
from services.memory.recall import recall
from services.memory.vectors import (
    BACKFILL_JOB_IDS,
    UNEMBEDDABLE,
    enqueue_backfill,
    fill_all,
    pending_count,
    unembeddable_count,
)
from services.periodic import backfill
from services.periodic.backfill import IDLE
from services.queues import ALL_QUEUES, MEMORY_CHUNKER_QUEUE, lapse_held
from services.service_call import ServiceCall
from services.supervisor import process_key
from tests.fake_embedder import HashEmbedder
from workers.startup import EngramWorker

pytestmark = pytest.mark.integration

START = dt.datetime(2025, 5, 1, 9, 0, tzinfo=dt.UTC)


def _lines(count: int, *, named: bool = True) -> list[str]:
    """``count`` turns: sessions of two named speakers (every other one) and of user/assistant roles."""
    lines = []
    for n in range(count):
        session = n // 6
        speaker = (("Caroline", "Melanie") if named and session % 2 == 0 else ("user", "assistant"))[n % 2]
        lines.append(json.dumps({"session": f"s{session}", "speaker": speaker,
                                 "text": f"turn {n} about the garden, boats and the number {n * 7}",
                                 "timestamp": (START + dt.timedelta(minutes=n)).isoformat(),
                                 "external_id": f"L{n}"}))
    return lines


def _import(sessions, user: str, count: int, *, embed: bool = False, named: bool = True,  # type: ignore[no-untyped-def]
            embedder=None) -> int:
    lines, bad, _ = parse_lines(_lines(count, named=named))
    assert not bad
    return store_records(sessions, embedder or HashEmbedder(), user, pair_exchanges(lines), embed=embed).stored


def _vectors(session: Session, user: str) -> tuple[dict[str, object], dict[str, object]]:
    """Exchange and line vectors by external id."""
    exchanges = {row[0]: row[1] for row in session.execute(
        select(Exchange.external_id, Exchange.embedding).where(Exchange.user_id == user))}
    lines = {row[0]: row[1] for row in session.execute(
        select(ExchangeLine.external_id, ExchangeLine.embedding).where(ExchangeLine.user_id == user))}
    return exchanges, lines


def _same(left: dict, right: dict) -> bool:  # type: ignore[type-arg]
    return left.keys() == right.keys() and all(
        (left[k] is None and right[k] is None)
        or (left[k] is not None and right[k] is not None and np.allclose(left[k], right[k], atol=1e-6)) for k in left)


def test_an_import_returns_with_rows_stored_words_searchable_and_vectors_pending(db_engine):
    sessions = make_sessionmaker(db_engine)
    stored = _import(sessions, "alice", 24)
    with Session(db_engine) as session:
        exchanges, lines = _vectors(session, "alice")
        searchable = session.scalar(text("SELECT count(*) FROM exchange_lines WHERE user_id = 'alice' "
                                         "AND search @@ to_tsquery('english', 'boats')"))
        assert pending_count(session) == stored == len(exchanges) == 12
    assert len(lines) == 24 and all(vector is None for vector in [*exchanges.values(), *lines.values()])
    assert searchable == 24  # every line's words, at once


def test_the_backfill_job_computes_the_vectors_an_inline_import_stores(worker_context, real_redis, run_jobs,
                                                                     db_engine):
    sessions = worker_context.sessions
    _import(sessions, "inline", 36, embed=True)
    _import(sessions, "later", 36)
    assert enqueue_backfill(real_redis) == BACKFILL_JOB_IDS[0]
    assert enqueue_backfill(real_redis) is None  # queued already: never twice
    assert Queue(MEMORY_CHUNKER_QUEUE, connection=real_redis).job_ids == [BACKFILL_JOB_IDS[0]]
    run_jobs((MEMORY_CHUNKER_QUEUE,))
    with Session(db_engine) as session:
        assert pending_count(session) == 0
        inline_exchanges, inline_lines = _vectors(session, "inline")
        later_exchanges, later_lines = _vectors(session, "later")
        models = set(session.scalars(text("SELECT DISTINCT embedding_model FROM exchanges")))
    assert _same(inline_exchanges, later_exchanges) and _same(inline_lines, later_lines)
    assert sum(v is not None for v in later_lines.values()) == 18  # the named speakers' lines, as inline
    assert models == {"hash-embedder"}


def test_the_job_queues_its_continuation_while_rows_wait(worker_context, real_redis, run_jobs, monkeypatch):
    import workers.memory_chunker as chunker

    monkeypatch.setattr(chunker, "BACKFILL_BUDGET_S", 0.0)  # one batch per job
    monkeypatch.setattr(chunker, "BACKFILL_LOOPS", 1)
    _import(worker_context.sessions, "alice", 600, named=False)  # 300 exchanges: two batches of 256
    enqueue_backfill(real_redis)
    run_jobs((MEMORY_CHUNKER_QUEUE,))
    queue = Queue(MEMORY_CHUNKER_QUEUE, connection=real_redis)
    results = [queue.fetch_job(job_id).return_value() for job_id in BACKFILL_JOB_IDS]
    # The words of the turns join the vocabulary once no exchange waits (services/memory/vocabulary.py).
    assert results[0] == "embedded 256, 44 waiting; 0 words added"
    assert results[1].startswith("embedded 44, 0 waiting; ") and not results[1].endswith("; 0 words added")
    with worker_context.sessions() as session:
        assert pending_count(session) == 0 and not vocabulary.pending(session)


def test_with_the_expansion_off_no_vocabulary_is_filled_or_waited_for(worker_context, real_redis, run_jobs):
    worker_context.extras["memory_config"] = MemoryConfig(recall=RecallConfig(expansion_words=0))
    _import(worker_context.sessions, "alice", 12)
    enqueue_backfill(real_redis)
    run_jobs((MEMORY_CHUNKER_QUEUE,))
    result = Queue(MEMORY_CHUNKER_QUEUE, connection=real_redis).fetch_job(BACKFILL_JOB_IDS[0]).return_value()
    assert result == "embedded 6, 0 waiting; 0 words added"
    with worker_context.sessions() as session:
        assert vocabulary.pending(session)  # the turns' words are not in: nothing asks for them
        assert session.scalar(text("SELECT count(*) FROM vocabulary")) == 0
    fired = backfill.run(ServiceCall("vector_backfill", "fire-off", worker_context))
    assert fired.reason == IDLE
    assert Queue(MEMORY_CHUNKER_QUEUE, connection=real_redis).job_ids == []


class SlowRecordingEmbedder(HashEmbedder):
    """Records every text it embeds (from any thread) and takes its time, so two workers overlap."""

    def __init__(self) -> None:
        super().__init__(cache_size=0)
        self.texts: list[str] = []
        self.lock = threading.Lock()

    def _encode(self, texts):  # type: ignore[no-untyped-def]
        time.sleep(0.05)
        with self.lock:
            self.texts += texts
        return super()._encode(texts)


def test_two_workers_share_the_backfill_and_never_embed_one_exchange_twice(db_engine):
    sessions = make_sessionmaker(db_engine)
    stored = _import(sessions, "alice", 400, named=False)
    embedder = SlowRecordingEmbedder()
    done: list[int] = []
    workers = [threading.Thread(target=lambda: done.append(fill_all(sessions, embedder, limit=10)))
               for _ in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
    assert sum(done) == stored == 200 and all(count > 0 for count in done)  # both worked, on different rows
    assert len(embedder.texts) == len(set(embedder.texts)) == stored  # each exchange embedded exactly once
    with Session(db_engine) as session:
        assert pending_count(session) == 0


class WorkerKilled(BaseException):
    """Stands for SIGKILL: nothing in the job may catch it."""


class KilledOnSecondBatch(HashEmbedder):
    def __init__(self) -> None:
        super().__init__(cache_size=0)
        self.calls = 0

    def _encode(self, texts):  # type: ignore[no-untyped-def]
        self.calls += 1
        if self.calls == 2:
            raise WorkerKilled("worker killed mid-backfill")
        return super()._encode(texts)


class FailingOn(HashEmbedder):
    """A model that cannot embed one particular text (a poison row), and for a while fails whole batches."""

    def __init__(self, poison: str, flaky_calls: int = 0) -> None:
        super().__init__(cache_size=0)
        self.poison, self.flaky_calls, self.calls = poison, flaky_calls, 0

    def _encode(self, texts):  # type: ignore[no-untyped-def]
        self.calls += 1
        if self.calls <= self.flaky_calls or any(self.poison in text for text in texts):
            raise RuntimeError("the model choked")
        return super()._encode(texts)


def test_a_backfill_interrupted_half_way_is_finished_by_the_next_run(db_engine):
    sessions = make_sessionmaker(db_engine)
    _import(sessions, "alice", 60, named=False)
    embedder = KilledOnSecondBatch()
    with pytest.raises(WorkerKilled):
        fill_all(sessions, embedder, limit=8)
    with Session(db_engine) as session:
        assert pending_count(session) == 30 - 8  # the first batch committed, the second rolled back
    assert fill_all(sessions, embedder, limit=8) == 22
    with Session(db_engine) as session:
        rows = session.execute(select(Exchange.user_text, Exchange.reply, Exchange.embedding)).all()
    for row in rows:
        expected = HashEmbedder(cache_size=0).embed(f"{row.user_text}\n{row.reply}".strip())
        assert np.allclose(np.asarray(row.embedding, dtype=np.float32), expected, atol=1e-5)


def test_an_exchange_the_model_fails_on_is_set_aside_and_every_other_gets_its_vector(db_engine, caplog):
    sessions = make_sessionmaker(db_engine)
    _import(sessions, "alice", 40, named=False)  # 20 exchanges
    embedder = FailingOn("turn 14 ")
    assert fill_all(sessions, embedder, limit=8) == 20  # all off the wait: 19 embedded, one set aside
    with Session(db_engine) as session:
        assert pending_count(session) == 0 and unembeddable_count(session) == 1
        rows = session.execute(select(Exchange.user_text, Exchange.embedding, Exchange.embedding_model)).all()
    poison = [row for row in rows if row.embedding is None]
    assert len(poison) == 1 and "turn 14 " in poison[0].user_text and poison[0].embedding_model == UNEMBEDDABLE
    assert all(row.embedding is not None for row in rows if row is not poison[0])
    assert "exchange" in caplog.text and "cannot be embedded" in caplog.text
    assert fill_all(sessions, embedder, limit=8) == 0  # the next run does not try it again


def test_a_passing_model_failure_sets_nothing_aside(db_engine):
    sessions = make_sessionmaker(db_engine)
    _import(sessions, "alice", 16, named=False)  # 8 exchanges
    assert fill_all(sessions, FailingOn("never in any text", flaky_calls=3), limit=8) == 8
    with Session(db_engine) as session:
        assert pending_count(session) == 0 and unembeddable_count(session) == 0



def test_a_memory_model_that_will_not_load_sets_nothing_aside_and_the_next_run_fills_every_row(db_engine):
    # The default embedder loads its memory graph on first use, inside the job: a failure there is the model's, not
    # any text's, so no exchange may be marked unembeddable and none may be half-written.
    sessions = make_sessionmaker(db_engine)
    _import(sessions, "alice", 16, named=False)  # 8 exchanges
    loads = []

    def memory_graph() -> HashEmbedder:
        loads.append(1)
        if len(loads) == 1:
            raise OSError("no space left on device")
        return HashEmbedder(cache_size=0)

    pair = PairedEmbedder(memory_graph, lambda: HashEmbedder(cache_size=0), model_id="hash-embedder")
    with pytest.raises(ModelUnavailable):
        fill_all(sessions, pair, limit=4)
    with Session(db_engine) as session:
        assert pending_count(session) == 8 and unembeddable_count(session) == 0
    assert fill_all(sessions, pair, limit=4) == 8
    with Session(db_engine) as session:
        assert pending_count(session) == 0 and unembeddable_count(session) == 0

def test_the_periodic_service_queues_the_backfill_while_rows_wait(worker_context, real_redis, run_jobs):
    def fire() -> object:
        return backfill.run(ServiceCall("vector_backfill", f"fire-{time.monotonic()}", worker_context))

    assert fire().reason == IDLE
    _import(worker_context.sessions, "alice", 12)
    result = fire()
    assert (result.outcome, result.details) == ("ran", {"pending": 6, "job": BACKFILL_JOB_IDS[0]})
    assert fire().reason == "the backfill is queued or running already"
    assert Queue(MEMORY_CHUNKER_QUEUE, connection=real_redis).job_ids == [BACKFILL_JOB_IDS[0]]
    run_jobs((MEMORY_CHUNKER_QUEUE,))
    assert fire().reason == IDLE
    _import(worker_context.sessions, "bob", 12)  # a later import: the finished job's id is used again
    assert fire().details == {"pending": 6, "job": BACKFILL_JOB_IDS[0]}
    run_jobs((MEMORY_CHUNKER_QUEUE,))
    assert fire().reason == IDLE


def _failed_without_a_reason(connection) -> list[str]:  # type: ignore[no-untyped-def]
    """Jobs some failed registry lists whose record does not say why they failed (bench/chaos_checks.py)."""
    return [job.id for name in ALL_QUEUES for job in Job.fetch_many(
        FailedJobRegistry(name, connection=connection).get_job_ids(), connection=connection)
        if job is not None and not (job.exc_info or job.meta.get("reason"))]


def test_a_backfill_whose_worker_died_fails_with_its_reason_and_the_next_run_fills_every_row(
        worker_context, real_redis, run_jobs):
    """The chaos soak's kill of a memory worker mid-backfill: RQ fails the abandoned job, the periodic service
    queues the backfill again under the same id, and that run finishes the rows. The failed registry must not
    keep listing the id once a later run has replaced its record (the soak found it there, its reason gone)."""
    _import(worker_context.sessions, "alice", 12)
    job_id = enqueue_backfill(real_redis)
    queue = Queue(MEMORY_CHUNKER_QUEUE, connection=real_redis)
    worker = EngramWorker([queue], connection=real_redis)
    job, _ = Queue.dequeue_any([queue], None, connection=real_redis)
    worker.prepare_job_execution(job, remove_from_intermediate_queue=True)  # started, with its lease...
    lapse_held(real_redis, process_key())  # ...and its process killed: its supervisor lapses the lease
    assert recover_abandoned(real_redis, (MEMORY_CHUNKER_QUEUE,)) == [job_id]
    assert job_id in queue.failed_job_registry and not _failed_without_a_reason(real_redis)
    with worker_context.sessions() as session:
        assert pending_count(session) == 6
    fired = backfill.run(ServiceCall("vector_backfill", "fire-after-the-kill", worker_context))
    assert fired.details == {"pending": 6, "job": job_id}  # the same id: one backfill queued at a time
    assert queue.job_ids == [job_id] and enqueue_backfill(real_redis) is None
    run_jobs((MEMORY_CHUNKER_QUEUE,))
    with worker_context.sessions() as session:
        assert pending_count(session) == 0
    assert queue.fetch_job(job_id).get_status() == JobStatus.FINISHED
    assert not _failed_without_a_reason(real_redis)


MEMORIES = [
    ("I adopted a beagle puppy and named him Biscuit", "What a lovely name for a puppy!"),
    ("My sister moved to Lisbon for a new job in March", "Lisbon is a beautiful city."),
    ("I have been learning to play the cello on weekends", "Strings take patience, keep going."),
    ("We repainted the kitchen a pale yellow colour", "That sounds bright and cheerful."),
    ("I started training for a half marathon in the autumn", "Good luck with the training!"),
]


@pytest.mark.slow
def test_recall_finds_an_imported_turn_by_its_words_before_the_backfill_and_by_meaning_after(db_engine):
    from services.embeddings import load_embedder

    minilm = load_embedder("auto")
    sessions = make_sessionmaker(db_engine)
    lines = []
    for n, (said, reply) in enumerate(MEMORIES):
        at = START + dt.timedelta(days=n)
        lines += [json.dumps({"session": f"s{n}", "role": "user", "text": said, "timestamp": at.isoformat(),
                              "external_id": f"M{n}"}),
                  json.dumps({"session": f"s{n}", "role": "assistant", "text": reply,
                              "timestamp": (at + dt.timedelta(seconds=5)).isoformat()})]
    parsed, _, _ = parse_lines(lines)
    store_records(sessions, minilm, "alice", pair_exchanges(parsed))
    by_words, by_meaning = "Biscuit the beagle", "Which animal did I get as a pet?"
    with sessions() as session:
        words = recall(session, minilm, "alice", by_words, k=3, reinforce=False)
        meaning_before = recall(session, minilm, "alice", by_meaning, k=3, reinforce=False)
    assert words and words[0].external_ids[0] == "M0"
    assert words[0].signals["vector"] == 0.0  # found by its words alone: no vector yet
    assert "M0" not in {i for hit in meaning_before for i in hit.external_ids}  # no word in common
    assert fill_all(sessions, minilm) == len(MEMORIES)
    with sessions() as session:
        meaning_after = recall(session, minilm, "alice", by_meaning, k=3, reinforce=False)
    assert meaning_after and meaning_after[0].external_ids[0] == "M0"


def test_the_ops_json_and_metrics_show_how_many_exchanges_wait_for_a_vector(client, db_engine):
    _import(make_sessionmaker(db_engine), "alice", 12)
    assert client.get("/ops/queues").json["vectors_pending"] == 6
    assert client.get("/ops/queues").json["vectors_unembeddable"] == 0
    metrics = client.get("/metrics").get_data(as_text=True)
    assert "engram_vectors_pending 6.0" in metrics and "engram_vectors_unembeddable 0.0" in metrics
