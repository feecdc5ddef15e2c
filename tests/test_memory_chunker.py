"""The memory chunker: schema validation, stored chunk + facts, idempotence, failures counted."""

from __future__ import annotations

import json
import logging

import numpy as np
import pytest
from rq import Queue
from sqlalchemy import select
from sqlalchemy.orm import Session

from services.db import Exchange
from services.memory.chunks import ChunkInvalid, validate_chunk
from services.memory.config import MemoryConfig
from services.memory.from_words import chunk_from_words
from services.memory.models import Fact, MemoryChunk
from services.memory.notes import tells_taste
from services.metrics import COUNTERS_KEY
from services.queues import CHUNKER_JOB, MEMORY_CHUNKER_QUEUE, MEMORY_JOB_TIMEOUT_S, job_owner
from tests.fake_embedder import HashEmbedder
from tests.llm_steps import Error, Garbage, Json, Reply
from tests.memory_builders import create_crowding_facts, create_exchange, unit_vector

GOOD_CHUNK = {
    "gists": ["The user moved to Lisbon and asked for cafe tips."],
    "facts": [
        {"text": "The user lives in Lisbon.", "speaker": "user", "confidence": 0.9, "subject": "user",
         "predicate": "lives in", "object": "Lisbon"},
        {"text": "The user likes Cafe Aurora.", "speaker": "assistant", "confidence": 0.4},
    ],
    "entities": [{"name": "Lisbon", "type": "place"}, "Cafe Aurora"],
    "emotion": "excited",
    "salience": 0.7,
    "open_loops": ["find a cafe to work from"],
}


def test_validate_chunk_normalises_a_good_chunk():
    chunk = validate_chunk(GOOD_CHUNK)
    assert chunk["entities"][1] == {"name": "Cafe Aurora", "type": "thing"}
    assert chunk["salience"] == 0.7 and [f["speaker"] for f in chunk["facts"]] == ["user", "assistant"]


@pytest.mark.parametrize("change", [
    {"salience": 7}, {"salience": "high"}, {"salience": None}, {"gists": []}, {"facts": [{"text": "x"}]},
    {"facts": [{"text": "x", "speaker": "narrator", "confidence": 1}]},
    {"facts": [{"text": "x", "speaker": "user", "confidence": 3}]}, {"entities": [{"type": "place"}]},
    {"emotion": 5}, {"open_loops": "call mum"},
])
def test_validate_chunk_refuses_wrong_shapes(change):
    with pytest.raises(ChunkInvalid):
        validate_chunk(GOOD_CHUNK | change)


def _exchange(db_engine, **kwargs) -> int:
    with Session(db_engine) as session, session.begin():
        return create_exchange(session, user_text="I just moved to Lisbon! Any cafe tips?",
                               reply="Welcome! You might like Cafe Aurora.", **kwargs).id


@pytest.fixture
def chunker(worker_context):
    worker_context.embedder = HashEmbedder()
    from workers import memory_chunker

    return memory_chunker


@pytest.mark.integration
def test_chunk_and_user_facts_are_stored_once(chunker, fake_llm, db_engine):
    exchange_id = _exchange(db_engine)
    fake_llm.route("MEMORY CHUNK", Json(GOOD_CHUNK))
    assert chunker.run(exchange_id) == "stored"
    assert chunker.run(exchange_id) == "exists"  # a retried job stores nothing twice
    assert len(fake_llm.requests) == 1
    prompt = fake_llm.requests[0]["messages"][0]["content"]
    assert "I just moved to Lisbon" in prompt and "JSON" in prompt
    with Session(db_engine) as session:
        chunks = session.scalars(select(MemoryChunk)).all()
        facts = session.scalars(select(Fact)).all()
    assert [(c.exchange_id, c.status, c.salience) for c in chunks] == [(exchange_id, "ok", 0.7)]
    assert chunks[0].chunk["open_loops"] == ["find a cafe to work from"]
    # The assistant's guess about the user's taste is not a fact about the user.
    assert [(f.text, f.speaker, f.source_exchange_ids) for f in facts] == [
        ("The user lives in Lisbon.", "user", [exchange_id])]


@pytest.mark.integration
def test_invalid_json_twice_keeps_the_exchange_and_counts_the_failure(chunker, fake_llm, db_engine, real_redis,
                                                                      caplog):
    exchange_id = _exchange(db_engine)
    fake_llm.route("MEMORY CHUNK", Reply("Sure! Here are some notes about the exchange."))
    with caplog.at_level(logging.WARNING, logger="workers.memory_chunker"):
        assert chunker.run(exchange_id) == "failed"
    assert len(fake_llm.requests) == 2  # one retry, then give up
    assert any("without enrichment" in record.getMessage() for record in caplog.records)
    field = json.dumps(["engram_memory_enrichment_failures_total", {"reason": "invalid_json", "stage": "chunker"}],
                       sort_keys=True)
    assert float(real_redis.hget(COUNTERS_KEY, field)) == 1.0
    with Session(db_engine) as session:
        assert session.get(Exchange, exchange_id) is not None
        chunk = session.scalars(select(MemoryChunk)).one()
        assert chunk.status == "failed" and chunk.chunk is None
        assert session.scalars(select(Fact)).all() == []
    assert chunker.run(exchange_id) == "exists"


@pytest.mark.integration
def test_a_wrong_shape_gets_one_more_try(chunker, fake_llm, db_engine):
    exchange_id = _exchange(db_engine)
    fake_llm.script(Json(GOOD_CHUNK | {"salience": 8}), Json(GOOD_CHUNK))
    assert chunker.run(exchange_id) == "stored"
    assert "salience must be between 0 and 1" in fake_llm.requests[1]["messages"][-1]["content"]


@pytest.mark.integration
def test_unreachable_llm_reruns_the_job_later(chunker, fake_llm, db_engine, real_redis):
    exchange_id = _exchange(db_engine)
    fake_llm.route("MEMORY CHUNK", Error(503))
    assert chunker.run(exchange_id) == "retrying"
    scheduled = Queue(MEMORY_CHUNKER_QUEUE, connection=real_redis).scheduled_job_registry.get_job_ids()
    assert scheduled == [f"chunk-{exchange_id}-retry1"]
    assert chunker.run(exchange_id, attempt=3) == "failed"  # backoff list used up


@pytest.mark.integration
def test_the_exchange_is_reindexed_as_the_whole_turn(chunker, fake_llm, db_engine):
    with Session(db_engine) as session, session.begin():
        exchange_id = create_exchange(session, user_text="Where should I eat in Porto?",
                                      reply="Try the francesinha.").id
    fake_llm.script(Garbage(), Garbage())  # the re-index does not depend on the LLM succeeding
    chunker.run(exchange_id)
    with Session(db_engine) as session:
        stored = session.get(Exchange, exchange_id)
        expected = HashEmbedder().embed("Where should I eat in Porto?\nTry the francesinha.")
        assert stored.embedding is not None and list(stored.embedding) == pytest.approx(list(expected), abs=1e-6)


@pytest.mark.integration
def test_known_facts_are_found_when_other_users_crowd_the_index(chunker, worker_context, db_engine):
    rng = np.random.default_rng(11)
    turn = unit_vector(rng.standard_normal(384))
    with Session(db_engine) as session, session.begin():
        exchange = create_exchange(session, user_text="The bees swarmed again", reply="Oh no!")
        exchange.embedding = turn
        session.add(Fact(user_id="alice", text="I keep bees on my roof", speaker="user", confidence=1.0,
                         salience=0.5, embedding=unit_vector(turn + 0.5 * unit_vector(rng.standard_normal(384)))))
        create_crowding_facts(session, near=turn)
        messages = chunker.build_messages(worker_context, session, exchange, MemoryConfig())
    assert "I keep bees on my roof" in messages[0]["content"]
    assert "bob fact" not in messages[0]["content"]


@pytest.mark.integration
def test_a_rerun_on_a_chunked_exchange_leaves_its_embedding_alone(chunker, fake_llm, db_engine):
    exchange_id = _exchange(db_engine)
    fake_llm.route("MEMORY CHUNK", Json(GOOD_CHUNK))
    assert chunker.run(exchange_id) == "stored"
    kept = HashEmbedder().embed("a vector from another model")
    with Session(db_engine) as session, session.begin():
        session.get(Exchange, exchange_id).embedding = kept
    assert chunker.run(exchange_id) == "exists"
    with Session(db_engine) as session:
        assert list(session.get(Exchange, exchange_id).embedding) == pytest.approx(list(kept), abs=1e-6)


@pytest.mark.integration
def test_a_rescheduled_chunk_job_gets_the_memory_job_options(chunker, fake_llm, db_engine, real_redis):
    exchange_id = _exchange(db_engine)
    fake_llm.route("MEMORY CHUNK", Error(503))
    assert chunker.run(exchange_id) == "retrying"
    job = Queue(MEMORY_CHUNKER_QUEUE, connection=real_redis).fetch_job(f"chunk-{exchange_id}-retry1")
    assert job.func_name == CHUNKER_JOB and job.timeout == MEMORY_JOB_TIMEOUT_S
    assert job_owner(job.meta) == "alice"  # the later attempt is still alice's job on the ops page


@pytest.mark.integration
def test_enriching_an_imported_exchange_before_the_backfill_gives_its_speakers_lines_their_vectors(
        chunker, worker_context, fake_llm, db_engine):
    from services.memory.importer import pair_exchanges, parse_lines, store_records
    from services.memory.models import ExchangeLine
    from services.memory.vectors import pending_count

    lines, _, _ = parse_lines(json.dumps({"session": "s1", "speaker": name, "text": text,
                                          "timestamp": f"2026-03-02T10:0{n}:00Z", "external_id": f"D1:{n}"})
                              for n, (name, text) in enumerate([("Caroline", "I moved to Lisbon"),
                                                                ("Melanie", "Lovely city!")]))
    report = store_records(worker_context.sessions, HashEmbedder(), "alice", pair_exchanges(lines))
    exchange_id = report.ids_by_key["D1:0"]
    fake_llm.script(Garbage(), Garbage())
    chunker.run(exchange_id)
    with Session(db_engine) as session:
        vectors = session.scalars(select(ExchangeLine.embedding).where(ExchangeLine.exchange_id == exchange_id)
                                  .order_by(ExchangeLine.position)).all()
        assert pending_count(session) == 0
    assert [list(v) == pytest.approx(list(HashEmbedder().embed(t)), abs=1e-6) for v, t in
            zip(vectors, ["Caroline: I moved to Lisbon", "Melanie: Lovely city!"], strict=True)] == [True, True]


@pytest.mark.integration
def test_from_words_an_imported_talk_between_two_people_gives_each_their_own_facts(chunker, worker_context,
                                                                                    fake_llm, db_engine):
    """Under the compact profile's enrichment from words (no model call), an imported conversation between two
    named people: what each says of themselves is a fact named for them, never "the user"."""
    from dataclasses import replace

    from services.llm.profile import load_profile
    from services.memory.importer import pair_exchanges, parse_lines, store_records

    worker_context.extras["llm_profile"] = load_profile(replace(worker_context.settings, llm_profile="compact"))
    said = [("Caroline", "I moved to Lisbon last spring."), ("Melanie", "Lovely! I'm painting a lake these days.")]
    lines, _, _ = parse_lines(json.dumps({"session": "s1", "speaker": name, "text": text,
                                          "timestamp": f"2026-03-02T10:0{n}:00Z", "external_id": f"D1:{n}"})
                              for n, (name, text) in enumerate(said))
    report = store_records(worker_context.sessions, HashEmbedder(), "alice", pair_exchanges(lines))
    assert chunker.run(report.ids_by_key["D1:0"]) == "stored"
    assert fake_llm.requests == []
    with Session(db_engine) as session:
        facts = sorted(session.scalars(select(Fact.text).where(Fact.user_id == "alice")).all())
    assert facts == ["Caroline moved to Lisbon last spring", "Melanie is painting a lake these days"]


@pytest.mark.integration
def test_from_words_a_things_owner_comes_from_the_message_before(chunker, worker_context, fake_llm, db_engine):
    """"The party is on Saturday April 18th" after "… because Ada's party is coming up" is Ada's party: alone, the
    fact lost Ada, and "when is Ada's party?" was answered with the date of a reminder about Ada's cake. A thing
    whose owner was never said stays as told."""
    import datetime as dt
    from dataclasses import replace

    from services.llm.profile import load_profile

    worker_context.extras["llm_profile"] = load_profile(replace(worker_context.settings, llm_profile="compact"))
    said = ["Create a party list with balloons and plates, because Ada's party is coming up",
            "The party is on Saturday April 18th at 2pm at the house",
            "The cake is my job, I bake it every year"]
    start = dt.datetime(2026, 3, 2, 10, tzinfo=dt.UTC)
    with Session(db_engine) as session, session.begin():
        ids = [create_exchange(session, user_text=text, reply="Noted.", thread_id="t-ada",
                               occurred_at=start + dt.timedelta(minutes=n)).id for n, text in enumerate(said)]
    assert [chunker.run(exchange_id) for exchange_id in ids[1:]] == ["stored", "stored"]
    assert fake_llm.requests == []
    with Session(db_engine) as session:
        facts = sorted(session.scalars(select(Fact.text).where(Fact.user_id == "alice")).all())
    assert facts == ["Ada's party is on Saturday April 18th at 2pm at the house", "The cake is the user's job",
                     "The user bake it every year"]


def test_what_the_person_cannot_have_or_is_not_into_is_a_taste_even_without_its_i() -> None:
    """Chat leaves out "I am": "allergic to nuts" and "not a fan of horror movies" were no facts at all, and "please
    don't suggest fast food" none either (it names no one); "no more caffeine for me" and "lactose intolerant" were
    facts the note before an ask for ideas did not say again."""
    told = {"allergic to nuts": "The user is allergic to nuts",
            "not a fan of horror movies": "The user is not a fan of horror movies",
            "please don't suggest fast food": "Please don't suggest fast food",
            "I'm lactose intolerant": "The user is lactose intolerant",
            "no more caffeine for me": "No more caffeine for the user"}
    for message, fact in told.items():
        assert [found["text"] for found in chunk_from_words(message)["facts"]] == [fact]
        assert tells_taste(fact)
    assert chunk_from_words("Not into it")["facts"] == []
    assert [fact["text"] for fact in chunk_from_words("Into town on Saturday for the market")["facts"]] == [
        "Into town on Saturday for the market"]  # a day's plan, not a taste
