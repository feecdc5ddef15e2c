"""Import: bad lines reported by number, good lines load, idempotent and resumable; enrichment
queued; export → import round trip."""

from __future__ import annotations

import argparse
import json

import numpy as np
import pytest
from rq import Queue
from sqlalchemy import func, select, text
from sqlalchemy.orm import Session

from cli.memory import cmd_export, cmd_import
from services.bundle import export_bundle, import_bundle
from services.db import Exchange, make_sessionmaker
from services.memory.facts import remember_fact
from services.memory.importer import pair_exchanges, parse_lines, store_records
from services.memory.models import Episode, Fact, MemoryChunk
from services.memory.vectors import BACKFILL_JOB_IDS
from services.queues import EPISODIC_QUEUE, MEMORY_CHUNKER_QUEUE
from tests.fake_embedder import HashEmbedder

pytestmark = pytest.mark.integration

LINES = [
    {"session": "s1", "role": "user", "text": "I adopted a beagle called Biscuit", "timestamp": "2026-03-02T10:00:00Z",
     "external_id": "m1"},
    {"session": "s1", "role": "assistant", "text": "Congratulations on Biscuit!", "timestamp": "2026-03-02T10:00:05Z"},
    "this is not json",
    {"session": "s1", "role": "user", "text": "", "timestamp": "2026-03-02T10:01:00Z"},
    {"session": "s1", "role": "user", "text": "He is three months old", "timestamp": "2026-03-02T10:02:00Z"},
    {"session": "s1", "role": "user", "text": "and loves socks", "timestamp": "2026-03-02T10:02:10Z"},
    {"session": "s1", "role": "assistant", "text": "Puppies do love socks.", "timestamp": "2026-03-02T10:02:20Z"},
    {"session": "s2", "speaker": "Caroline", "text": "I went to the pottery class", "timestamp": 1777000000},
    {"session": "s2", "speaker": "Melanie", "text": "How was it?", "timestamp": 1777000060},
    {"session": "s2", "speaker": "Caroline", "text": "I made a bowl", "timestamp": 1777000120},
    {"session": "s3", "role": "user", "text": "hello", "timestamp": "yesterday-ish"},
]


def _write(tmp_path, lines) -> str:
    path = tmp_path / "history.jsonl"
    path.write_text("\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n")
    return str(path)


def _args(file: str, **extra) -> argparse.Namespace:
    return argparse.Namespace(file=file, user=extra.pop("user", "alice"), no_enrich=extra.pop("no_enrich", True),
                              batch_size=extra.pop("batch_size", 256), embed_now=extra.pop("embed_now", False),
                              quiet=True, **extra)


def test_pairing_joins_turns_and_keeps_speaker_names():
    lines, bad, count = parse_lines(json.dumps(line) if not isinstance(line, str) else line for line in LINES)
    assert count == 11 and [b.number for b in bad] == [3, 4, 11]
    records = pair_exchanges(lines)
    assert [(r.user_text, r.reply) for r in records] == [
        ("I adopted a beagle called Biscuit", "Congratulations on Biscuit!"),
        ("He is three months old\nand loves socks", "Puppies do love socks."),
        ("Caroline: I went to the pottery class", "Melanie: How was it?"),
        ("Caroline: I made a bowl", ""),
    ]
    assert records[0].key == "m1" and records[1].key.startswith("h:")


def test_import_reports_bad_lines_loads_good_ones_and_is_idempotent(settings, db_engine, real_redis, tmp_path,
                                                                   capsys, run_jobs):
    path = _write(tmp_path, LINES)
    assert cmd_import(settings, _args(path), embedder=HashEmbedder()) == 1  # non-zero: some lines were bad
    out, err = capsys.readouterr()
    assert f"{path}: line 3: not JSON" in err and "line 4: missing or empty 'text'" in err and "line 11:" in err
    summary = json.loads(out.strip().splitlines()[-1])
    assert summary["stored"] == 4 and summary["bad_lines"] == 3 and summary["sessions"] == 2
    assert summary["vectors"] == "background" and summary["vectors_pending"] == 4
    assert "4 exchanges stored" in err and "4 waiting" in err
    cmd_import(settings, _args(path), embedder=HashEmbedder())
    again = json.loads(capsys.readouterr()[0].strip().splitlines()[-1])
    assert again["stored"] == 0 and again["already_stored"] == 4
    with Session(db_engine) as session:
        rows = session.scalars(select(Exchange).order_by(Exchange.occurred_at)).all()
        sessions = session.execute(text("SELECT count(*), bool_and(ended_at IS NOT NULL) FROM sessions")).one()
    assert len(rows) == 4 and all(r.embedding is None and r.session_id for r in rows)  # vectors follow
    assert rows[0].external_id == "m1" and rows[0].mode == "IMPORT"
    assert tuple(sessions) == (2, True)
    assert Queue(MEMORY_CHUNKER_QUEUE, connection=real_redis).job_ids == [BACKFILL_JOB_IDS[0]]  # no enrichment
    run_jobs((MEMORY_CHUNKER_QUEUE,))
    with Session(db_engine) as session:
        assert session.scalar(select(func.count()).select_from(Exchange).where(Exchange.embedding.is_(None))) == 0


class FailingOnce(HashEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def _encode(self, texts):
        self.calls += 1
        if self.calls == 2:
            raise RuntimeError("killed mid-import")
        return super()._encode(texts)


def test_an_interrupted_import_resumes_without_duplicates(db_engine):
    lines, _, _ = parse_lines(json.dumps({"session": f"s{n}", "role": "user", "text": f"fact number {n}",
                                          "timestamp": f"2026-01-01T00:{n:02d}:00Z"}) for n in range(10))
    records = pair_exchanges(lines)
    sessions = make_sessionmaker(db_engine)
    embedder = FailingOnce()
    with pytest.raises(Exception, match="killed mid-import"):
        store_records(sessions, embedder, "alice", records, batch_size=4, embed=True)
    with Session(db_engine) as session:
        assert session.scalar(select(func.count()).select_from(Exchange)) == 4  # the first batch committed
    report = store_records(sessions, embedder, "alice", records, batch_size=4, embed=True)
    assert (report.stored, report.skipped) == (6, 4)
    with Session(db_engine) as session:
        assert session.scalar(select(func.count(func.distinct(Exchange.external_id)))) == 10


def test_an_import_embedded_on_several_threads_stores_each_exchange_with_its_own_vector(db_engine):
    lines, _, _ = parse_lines(json.dumps({"session": f"s{n % 7}", "role": "user" if n % 2 == 0 else "assistant",
                                          "text": ("and more words " * (n % 9)) + f"turn number {n}",
                                          "timestamp": f"2026-01-01T{n // 60:02d}:{n % 60:02d}:00Z"})
                              for n in range(300))
    records = pair_exchanges(lines)
    embedder = HashEmbedder()
    report = store_records(make_sessionmaker(db_engine), embedder, "alice", records, batch_size=32, embed_threads=3,
                           embed=True)
    assert report.stored == len(records) > 100
    with Session(db_engine) as session:
        rows = session.execute(select(Exchange.user_text, Exchange.reply, Exchange.embedding)).all()
    assert len(rows) == len(records)
    for row in rows:
        expected = HashEmbedder(cache_size=0).embed(f"{row.user_text}\n{row.reply}".strip())
        assert np.allclose(np.asarray(row.embedding, dtype=np.float32), expected, atol=1e-5)


def test_enrichment_is_queued_unless_disabled(settings, db_engine, real_redis, tmp_path, capsys):
    path = _write(tmp_path, LINES[:2])
    cmd_import(settings, _args(path, no_enrich=False), embedder=HashEmbedder())
    with Session(db_engine) as session:
        exchange_id = session.scalar(select(Exchange.id))
        session_id = session.scalar(select(Exchange.session_id))
    assert Queue(MEMORY_CHUNKER_QUEUE, connection=real_redis).job_ids == [f"chunk-{exchange_id}", BACKFILL_JOB_IDS[0]]
    assert Queue(EPISODIC_QUEUE, connection=real_redis).job_ids == [f"episode-{session_id}"]


def test_export_then_import_round_trips_into_another_user(settings, db_engine, tmp_path, capsys):
    embedder = HashEmbedder()
    path = _write(tmp_path, LINES)
    cmd_import(settings, _args(path), embedder=embedder)
    sessions = make_sessionmaker(db_engine)
    with sessions.begin() as session:
        first = session.scalars(select(Exchange).order_by(Exchange.id)).first()
        old = remember_fact(session, embedder, "alice", "I live in Porto", source_exchange_id=first.id)
        remember_fact(session, embedder, "alice", "I live in Lisbon")
        session.add(MemoryChunk(user_id="alice", exchange_id=first.id, status="ok", salience=0.7,
                                chunk={"gists": ["adopted Biscuit"]}))
        session.add(Episode(user_id="alice", session_id=first.session_id, title="Biscuit arrives", gist="A puppy",
                            summary="Adopted a beagle.", salience=0.9, exchange_ids=[first.id]))
    out = tmp_path / "bundle.json"
    assert cmd_export(settings, argparse.Namespace(user="alice", out=str(out))) == 0
    bundle = json.loads(out.read_text())
    assert bundle["format"] == "engram-memory-bundle" and bundle["version"] == 1
    assert cmd_import(settings, _args(str(out), user="carol"), embedder=embedder) == 0
    cmd_import(settings, _args(str(out), user="carol"), embedder=embedder)  # twice: still no duplicates
    with sessions() as session:
        again = export_bundle(session, "carol")
        facts = session.scalars(select(Fact).where(Fact.user_id == "carol").order_by(Fact.id)).all()
    for key in ("exchanges", "chunks", "facts", "episodes"):
        assert len(again[key]) == len(bundle[key]), key
    assert [e["user_text"] for e in again["exchanges"]] == [e["user_text"] for e in bundle["exchanges"]]
    porto = next(f for f in facts if f.text == "I live in Porto")
    assert porto.superseded_at is not None and porto.superseded_by == facts[-1].id
    assert porto.source_exchange_ids and all(f.embedding is not None for f in facts)
    assert again["episodes"][0]["exchange_keys"] == bundle["episodes"][0]["exchange_keys"]
    assert old.fact_id not in {f.id for f in facts}
    with sessions() as session:  # importing alice's own bundle back into alice changes nothing
        report = import_bundle(sessions, embedder, "alice", bundle)
        assert report.stored == 0
        assert session.scalar(select(func.count()).select_from(Fact).where(Fact.user_id == "alice")) == 2


@pytest.mark.parametrize(("bundle", "message"), [
    ({"format": "engram-memory-bundle", "version": 99, "exchanges": []}, "unsupported bundle version 99"),
    ({"format": "engram-memory-bundle", "version": 1, "exchanges": [{"user_text": "hi"}]}, "exchanges[0] lacks 'key'"),
])
def test_a_bad_bundle_is_one_clear_error_before_anything_starts(tmp_path, monkeypatch, capsys, bundle, message):
    import consumer

    path = tmp_path / "bundle.json"
    path.write_text(json.dumps(bundle))
    monkeypatch.setenv("ENGRAM_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("DATABASE_URL", "postgresql://127.0.0.1:1/nowhere")  # never reached
    assert consumer.main(["import", str(path), "--user", "u1"]) == 2
    assert f"engram import: {path}: {message}" in capsys.readouterr().err
    assert not (tmp_path / "data").exists()


def test_embed_now_stores_every_vector_before_the_command_returns(settings, db_engine, real_redis, tmp_path, capsys):
    path = _write(tmp_path, LINES)
    cmd_import(settings, _args(path, embed_now=True), embedder=HashEmbedder())
    out, err = capsys.readouterr()
    summary = json.loads(out.strip().splitlines()[-1])
    assert summary["stored"] == 4 and "vectors_pending" not in summary and "background" not in err
    with Session(db_engine) as session:
        assert session.scalar(select(func.count()).select_from(Exchange).where(Exchange.embedding.is_(None))) == 0
        named = session.scalar(text("SELECT count(*) FROM exchange_lines WHERE embedding IS NOT NULL"))
    assert named == 3  # Caroline's and Melanie's lines
    assert Queue(MEMORY_CHUNKER_QUEUE, connection=real_redis).job_ids == []
