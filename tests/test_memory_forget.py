"""Forget: after `engram forget`, no row or key of that user remains anywhere; others keep theirs."""

from __future__ import annotations

import argparse
import datetime as dt
import json
from dataclasses import replace

import pytest
from rq import Queue
from rq.job import Job
from sqlalchemy import text
from sqlalchemy.orm import Session

from cli.memory import cmd_forget
from services.memory.facts import remember_fact
from services.memory.forget import UserFootprint, purge_jobs
from services.memory.models import Episode, ExchangeAccess, MemoryChunk
from services.queues import CHUNKER_JOB, EPISODE_JOB, EPISODIC_QUEUE, MEMORY_CHUNKER_QUEUE, PROMPT_QUEUE, enqueue
from tests.fake_embedder import HashEmbedder
from tests.llm_steps import Reply

pytestmark = pytest.mark.integration

USER = "forget-me-7f3a"
TOKENS = {"forget-token-123": USER, "keeper-token-456": "keeper"}


@pytest.fixture
def client(settings, db_engine, real_redis):
    from api import WebDeps, create_app

    app_settings = replace(settings, api_tokens=TOKENS)
    deps = WebDeps.build(app_settings)
    app = create_app(app_settings, deps)
    app.config["TESTING"] = True
    yield app.test_client()
    deps.fanout.stop()
    deps.engine.dispose()


def _chat(client, token: str, text_: str, thread_id: str | None = None):
    body = {"text": text_} | ({"thread_id": thread_id} if thread_id else {})
    return client.post("/chat", data=json.dumps(body), content_type="application/json", buffered=False,
                       headers={"Authorization": f"Bearer {token}"})


def _live_everywhere(client, token: str, user: str, run_jobs, db_engine, real_redis) -> dict[str, set]:
    """A user with a stored conversation, memory rows, queued and scheduled jobs and a pending request."""
    first = _chat(client, token, f"My name is {user} and I like rowing")
    thread_id = first.headers["X-Thread-ID"]
    run_jobs((PROMPT_QUEUE,))
    list(first.response)
    embedder = HashEmbedder()
    with Session(db_engine) as session, session.begin():
        exchange_id, request_id = session.execute(text("SELECT id, request_id FROM exchanges WHERE user_id = :u"),
                                                  {"u": user}).one()
        remember_fact(session, embedder, user, "I like rowing", source_exchange_id=exchange_id)
        session.add(MemoryChunk(user_id=user, exchange_id=exchange_id, status="ok", chunk={"gists": ["x"]},
                                salience=0.5))
        session.add(ExchangeAccess(exchange_id=exchange_id, user_id=user, access_count=1))
        session.add(Episode(user_id=user, session_id=f"sess-{user}", title="Rowing", salience=0.5, exchange_ids=[]))
    enqueue(real_redis, MEMORY_CHUNKER_QUEUE, "workers.memory_chunker.run", exchange_id, job_id=f"chunk-{exchange_id}")
    Queue(EPISODIC_QUEUE, connection=real_redis).enqueue_in(dt.timedelta(hours=1), "workers.episodic_memory.run",
                                                            f"sess-{user}", 1, job_id=f"episode-sess-{user}-retry1")
    pending = _chat(client, token, "And one more thing", thread_id)  # queued, never processed
    return {"threads": {thread_id}, "requests": {request_id, pending.headers["X-Request-ID"]},
            "exchanges": {exchange_id}}


def test_forget_leaves_nothing_of_the_user_anywhere(client, settings, run_jobs, fake_llm, db_engine, real_redis,
                                                    capsys):
    fake_llm.script(Reply("Nice to meet you."), Reply("Hello keeper."))
    gone = _live_everywhere(client, "forget-token-123", USER, run_jobs, db_engine, real_redis)
    kept = _live_everywhere(client, "keeper-token-456", "keeper", run_jobs, db_engine, real_redis)
    assert cmd_forget(settings, argparse.Namespace(user=USER, yes=True)) == 0
    report = json.loads(capsys.readouterr()[0].strip().splitlines()[-1])
    assert report["postgres_rows"]["users"] == 1 and report["postgres_rows"]["facts"] == 1
    assert report["jobs_removed"] >= 3 and report["redis_keys"] > 0
    with db_engine.connect() as connection:
        tables = connection.execute(text(
            "SELECT table_name FROM information_schema.columns WHERE table_schema = 'public' "
            "AND column_name = 'user_id'")).scalars().all()
        for table in tables:
            left = connection.execute(text(f'SELECT count(*) FROM "{table}" WHERE user_id = :u'), {"u": USER})
            assert left.scalar_one() == 0, table
        assert connection.execute(text("SELECT count(*) FROM users WHERE id = :u"), {"u": USER}).scalar_one() == 0
        assert connection.execute(text("SELECT count(*) FROM exchanges WHERE user_id = 'keeper'")).scalar_one() == 1
    needles = {USER} | gone["threads"] | gone["requests"]
    keys = [key.decode() for key in real_redis.scan_iter(count=1000)]
    assert not [key for key in keys if any(needle in key for needle in needles)]
    for key in keys:  # no value left that names the user either (request payloads, thread state, streams)
        kind = real_redis.type(key).decode()
        if kind == "string":
            assert USER.encode() not in (real_redis.get(key) or b""), key
        elif kind == "hash" and not key.startswith("rq:job:"):
            assert not any(USER.encode() in v for v in real_redis.hvals(key)), key
        elif kind == "list":
            assert not any(any(n.encode() in v for n in needles) for v in real_redis.lrange(key, 0, -1)), key
    for key in keys:
        if key.startswith("rq:job:"):
            job = Job.fetch(key.removeprefix("rq:job:"), connection=real_redis)
            args = set(job.args)
            assert not (args & gone["requests"]) and f"sess-{USER}" not in args, job.id
            if job.func_name == "workers.memory_chunker.run":
                assert job.args[0] not in gone["exchanges"], job.id
    assert any(any(request in key for request in kept["requests"]) for key in keys)  # the other user is untouched


class CountingFootprint(UserFootprint):
    calls = 0

    def strings(self) -> set[str]:
        CountingFootprint.calls += 1
        return super().strings()


def test_purging_jobs_builds_the_users_id_set_once(real_redis):
    for n in range(20):
        enqueue(real_redis, MEMORY_CHUNKER_QUEUE, CHUNKER_JOB, 1000 + n, job_id=f"chunk-{1000 + n}")
        enqueue(real_redis, EPISODIC_QUEUE, EPISODE_JOB, f"sess-{n}", job_id=f"episode-sess-{n}")
    footprint = CountingFootprint(USER, sessions={"sess-3"}, exchanges={1004})
    assert purge_jobs(real_redis, footprint) == (2, 0)
    assert CountingFootprint.calls == 1
