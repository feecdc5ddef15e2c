"""Topic classifier against real PostgreSQL + pgvector; sessions and their episode jobs."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest
from rq import Queue
from sqlalchemy import select, text
from sqlalchemy.orm import Session

from services.db import ConversationSession, Exchange, Thread, Topic, User
from services.sessions import close_quiet_sessions, place_in_session
from services.topics import (
    ABSORB,
    GENERAL,
    TopicClassifier,
    TopicConfig,
    absorb_params,
    blend_centroid,
    keywords,
    topic_name,
)

pytestmark = pytest.mark.integration


def unit(*values: float) -> np.ndarray:
    vector = np.zeros(384, dtype=np.float32)
    vector[: len(values)] = values
    return vector / np.linalg.norm(vector)


def classify(db: Session, classifier: TopicClassifier, *args):  # type: ignore[no-untyped-def]
    """As a turn does: classify, then write the matched topic's centroid (the digest's part)."""
    result = classifier.classify(db, *args)
    if result.update is not None:
        db.execute(ABSORB, absorb_params(result.update))
    return result


@pytest.fixture
def db(db_engine):  # type: ignore[no-untyped-def]
    with Session(db_engine) as session:
        session.add_all([User(id="alice"), User(id="bob")])
        session.flush()
        session.add_all([Thread(id="t1", user_id="alice"), Thread(id="t2", user_id="bob")])
        session.commit()
        yield session


def test_keywords_and_readable_names():
    assert keywords("Can you help me plan a trip to Lisbon in May?") == ["plan", "trip", "lisbon"]
    assert topic_name("Can you help me plan a trip to Lisbon in May?", []) == "plan-trip-lisbon"
    assert topic_name("the dentist appointment", ["dentist-appointment"]) == "dentist-appointment-2"


def test_centroid_is_a_capped_running_mean():
    a, b = unit(1, 0), unit(0, 1)
    once = blend_centroid(a, b, count=1, cap=50)
    assert np.isclose(np.linalg.norm(once), 1.0)
    assert np.isclose(once[0], once[1])  # halfway after two messages
    capped = blend_centroid(a, b, count=1000, cap=10)
    assert capped[1] == pytest.approx(0.1 / np.linalg.norm([0.9, 0.1]), rel=1e-4)


def test_new_topic_then_match_then_switch(db):
    classifier = TopicClassifier(TopicConfig())
    first = classify(db, classifier, "alice", "planning a hiking trip to Norway", unit(1, 0.1), None)
    assert first.is_new and first.topic == "planning-hiking-norway"
    same = classify(db, classifier, "alice", "which trail near Bergen is best", unit(1, 0.2), first.topic)
    assert same.topic == first.topic and not same.is_new and not same.switched
    assert same.confidence > 0.9
    other = classify(db, classifier, "alice", "my sourdough starter smells odd", unit(0, 0, 1), first.topic)
    assert other.is_new and other.switched and other.topic != first.topic
    count = db.scalar(select(Topic.message_count).where(Topic.name == first.topic))
    assert count == 2


def test_recent_topic_bonus_keeps_a_borderline_message(db):
    classifier = TopicClassifier(TopicConfig(match_threshold=0.5, recent_bonus=0.2))
    borderline = unit(1, 2)  # cosine 0.447 to the topic: below the threshold alone, above with the bonus
    for user in ("alice", "bob"):
        base = classify(db, classifier, user, "budget spreadsheet for the household", unit(1, 0), None)
        recent = base.topic if user == "alice" else None
        result = classify(db, classifier, user, "groceries electricity rent numbers", borderline, recent)
        if user == "alice":
            assert result.topic == base.topic and not result.is_new
        else:
            assert result.is_new


def test_embedding_failure_is_general_with_low_confidence(db):
    result = classify(db, TopicClassifier(TopicConfig()), "alice", "anything at all", None, None)
    assert result.topic == GENERAL and result.confidence <= 0.1


def test_phatic_messages_do_not_found_topics(db):
    classifier = TopicClassifier(TopicConfig())
    result = classify(db, classifier, "alice", "ok thanks!", unit(0.3, 0.3, 0.3), "cooking")
    assert result.topic == "cooking" and not result.is_new
    assert db.scalar(select(Topic.id)) is None


def test_topics_are_per_user(db):
    classifier = TopicClassifier(TopicConfig())
    alice = classify(db, classifier, "alice", "quantum computing lecture notes", unit(1, 0), None)
    bob = classify(db, classifier, "bob", "quantum computing lecture notes", unit(1, 0), None)
    assert alice.is_new and bob.is_new
    assert db.scalar(select(Topic.user_id).where(Topic.name == alice.topic, Topic.user_id == "bob")) == "bob"


def test_nearest_topic_query_uses_the_hnsw_index(db):
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(3000, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    db.execute(
        Topic.__table__.insert(),
        [{"user_id": "alice", "name": f"t{n}", "centroid": v, "message_count": 1} for n, v in enumerate(vectors)],
    )
    db.execute(text("ANALYZE topics"))
    probe = unit(1, 0)
    plan = db.execute(
        text("EXPLAIN SELECT id FROM topics WHERE user_id = 'alice' ORDER BY centroid <=> CAST(:v AS vector) LIMIT 5"),
        {"v": str(probe.tolist())},
    ).scalars().all()
    assert any("ix_topics_centroid" in line for line in plan), plan


def test_sessions_continue_switch_and_go_quiet(db, db_engine, real_redis):
    now = dt.datetime.now(dt.UTC)
    first = place_in_session(db, "alice", "t1", "hiking", switched=True, now=now, idle_after_s=600)
    assert first.closed_session_id is None
    same = place_in_session(db, "alice", "t1", "hiking", switched=False, now=now, idle_after_s=600)
    assert same.session_id == first.session_id
    db.add(Exchange(request_id="r1", user_id="alice", thread_id="t1", user_text="x", reply="y", mode="RESPOND",
                    session_id=first.session_id))
    switched = place_in_session(db, "alice", "t1", "cooking", switched=True, now=now, idle_after_s=600)
    assert switched.closed_session_id == first.session_id and switched.close_reason == "topic_switch"
    later = now + dt.timedelta(hours=2)
    quiet = place_in_session(db, "alice", "t1", "cooking", switched=False, now=later, idle_after_s=600)
    assert quiet.close_reason == "inactivity" and quiet.closed_session_id == switched.session_id
    db.commit()
    from sqlalchemy.orm import sessionmaker

    db.add(Exchange(request_id="r2", user_id="alice", thread_id="t1", user_text="a", reply="b", mode="RESPOND",
                    session_id=quiet.session_id))
    db.commit()
    closed = close_quiet_sessions(sessionmaker(db_engine), real_redis, idle_after_s=60,
                                  now=later + dt.timedelta(minutes=5))
    assert closed == [quiet.session_id]
    job = Queue("episodic-memory-queue", connection=real_redis).fetch_job(f"episode-{quiet.session_id}")
    assert job is not None and job.args == (quiet.session_id,) and job.meta["exchange_ids"]
    assert job.meta["user_id"] == "alice"
    assert db.scalar(select(ConversationSession.ended_at).where(ConversationSession.id == quiet.session_id))


def test_topic_config_is_read_strictly(tmp_path):
    from services.settings import SettingsError

    assert TopicConfig.load(tmp_path) == TopicConfig()
    (tmp_path / "topics.toml").write_text("[classifier]\nmatch_threshold = 1\n")
    assert TopicConfig.load(tmp_path).match_threshold == 1.0
    (tmp_path / "topics.toml").write_text("[classifier]\nmatch_treshold = 0.5\n")
    with pytest.raises(SettingsError, match="unknown key"):
        TopicConfig.load(tmp_path)
    (tmp_path / "topics.toml").write_text("[classifier]\ncandidates = true\n")
    with pytest.raises(SettingsError, match="candidates"):
        TopicConfig.load(tmp_path)


def test_shipped_topic_config_matches_the_defaults():
    from pathlib import Path

    assert TopicConfig.load(Path(__file__).resolve().parents[1] / "configs") == TopicConfig()


def test_a_threads_open_session_is_found_through_its_thread_not_by_scanning_all_open_sessions(db):
    from sqlalchemy.dialects import postgresql

    from services.sessions import PLACE_IN_SESSION

    db.execute(text("INSERT INTO threads (id, user_id) SELECT 'other-' || g, 'bob' FROM generate_series(1, 3000) g"))
    db.execute(text("INSERT INTO sessions (id, user_id, thread_id, topic, started_at, last_active_at) "
                    "SELECT 's-' || g, 'bob', 'other-' || g, 'x', now(), now() FROM generate_series(1, 3000) g"))
    db.execute(text("ANALYZE sessions"))
    statement = str(PLACE_IN_SESSION.compile(dialect=postgresql.psycopg.dialect())).replace("%(", ":").replace(")s", "")
    plan = db.execute(text("EXPLAIN " + statement), {
        "switched": False, "topic": "x", "cutoff": dt.datetime(2000, 1, 1, tzinfo=dt.UTC), "thread_id": "t1",
        "now": dt.datetime.now(dt.UTC), "opened": "new", "user_id": "alice"}).scalars().all()
    assert any("ix_sessions_thread_open" in line for line in plan), plan
    db.rollback()
