"""The forget skill against PostgreSQL: facts, episodes and earlier exchanges, and nothing else."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select, text

from services.act.skills import forget
from services.db import Exchange, RoutingDecision
from services.memory.facts import remember_fact
from services.memory.models import Episode, ExchangeAccess, Fact, MemoryChunk
from services.memory.recall import recall
from tests.act_fixtures import NOW, USER, count
from tests.memory_builders import create_exchange, create_user

pytestmark = pytest.mark.integration

# --- forget: facts, episodes and earlier exchanges -----------------------------------------------

OTHER = "cy"
PARIS = ("I live in Paris now", "Lovely, Paris suits you.")


def _memories(session, embedder, user) -> dict[str, int]:
    """One matching and one unrelated row of each kind, with the matching exchange's chunk and access count."""
    create_user(session, user_id=user)
    ids = {"fact": remember_fact(session, embedder, user, "I live in Paris").fact_id,
           "other_fact": remember_fact(session, embedder, user, "I work at Acme").fact_id}
    for key, title, gist, summary in (
            ("episode", "Moving to Paris", "Settling into a new flat", "The person said they live in Paris now."),
            ("other_episode", "Dentist visit", "Booked a cleaning", "A check-up next Tuesday.")):
        episode = Episode(user_id=user, session_id=f"s-{user}-{key}", title=title, gist=gist, summary=summary,
                          salience=0.5, exchange_ids=[], embedding=embedder.embed(f"{title} {gist} {summary}"))
        session.add(episode)
        session.flush()
        ids[key] = episode.id
    exchange = create_exchange(session, user_id=user, user_text=PARIS[0], reply=PARIS[1], embedder=embedder)
    other = create_exchange(session, user_id=user, user_text="I work at Acme", reply="Good to know.",
                            thread_id=exchange.thread_id, embedder=embedder)
    session.add_all([MemoryChunk(user_id=user, exchange_id=exchange.id, status="ok", chunk={"gists": ["Paris"]}),
                     ExchangeAccess(exchange_id=exchange.id, user_id=user, access_count=2),
                     RoutingDecision(request_id=f"route-{exchange.id}", user_id=user, thread_id=exchange.thread_id,
                                     exchange_id=exchange.id, mode="RESPOND")])
    session.flush()
    ids.update(exchange=exchange.id, other_exchange=other.id)
    return ids


@pytest.fixture
def memories(worker_context, person, hash_embedder) -> dict[str, dict[str, int]]:
    with worker_context.sessions.begin() as session:
        return {user: _memories(session, hash_embedder, user) for user in (USER, OTHER)}


def _ids_of(db_engine, model, user) -> set[int]:
    with db_engine.connect() as connection:
        return set(connection.execute(select(model.id).where(model.user_id == user)).scalars())


def _recalled(worker_context, hash_embedder, query) -> list:
    with worker_context.sessions() as session:
        return recall(session, hash_embedder, USER, query, k=20, now=NOW, reinforce=False)


def test_forget_preview_lists_every_kind(preview, memories):
    mine = memories[USER]
    shown = preview("forget", {"query": "that I live in Paris"})
    assert shown.ok
    assert shown.result["arguments"] == {"fact_ids": [mine["fact"]], "episode_ids": [mine["episode"]],
                                         "exchange_ids": [mine["exchange"]]}
    assert shown.result["facts"] == ["I live in Paris"]
    assert shown.result["episodes"] == ["Moving to Paris: Settling into a new flat"]
    assert shown.result["exchanges"] == [PARIS[0]]
    description = forget.describe({**shown.result["arguments"], **shown.result})
    assert 'fact "I live in Paris"' in description and 'episode "Moving to Paris' in description
    assert f'earlier message "{PARIS[0]}"' in description and "Acme" not in description


def test_forget_removes_the_fact_episode_and_exchange_and_nothing_else(skill, memories, db_engine, worker_context,
                                                                       hash_embedder):
    mine, theirs = memories[USER], memories[OTHER]
    before = _recalled(worker_context, hash_embedder, "where I live, Paris")
    assert {("episode", mine["episode"]), ("exchange", mine["exchange"])} <= {(hit.kind, hit.id) for hit in before}
    result = skill("forget", {"query": "where I live, Paris"})
    assert result.ok
    forgotten = result.result["forgotten"]
    assert [(item["id"], item["text"]) for item in forgotten["facts"]] == [(mine["fact"], "I live in Paris")]
    assert [item["id"] for item in forgotten["episodes"]] == [mine["episode"]]
    assert [item["id"] for item in forgotten["exchanges"]] == [mine["exchange"]]
    assert _ids_of(db_engine, Fact, USER) == {mine["other_fact"]}
    assert _ids_of(db_engine, Episode, USER) == {mine["other_episode"]}
    assert _ids_of(db_engine, Exchange, USER) == {mine["other_exchange"]}
    # The deleted exchange's chunk, access count and routing decision went with it (ON DELETE CASCADE).
    for model in (MemoryChunk, ExchangeAccess, RoutingDecision):
        with db_engine.connect() as connection:
            assert connection.execute(select(func.count()).select_from(model)
                                      .where(model.user_id == USER)).scalar_one() == 0
    # The other person's identical memories are untouched.
    assert _ids_of(db_engine, Fact, OTHER) == {theirs["fact"], theirs["other_fact"]}
    assert _ids_of(db_engine, Episode, OTHER) == {theirs["episode"], theirs["other_episode"]}
    assert _ids_of(db_engine, Exchange, OTHER) == {theirs["exchange"], theirs["other_exchange"]}
    assert count(db_engine, MemoryChunk) == 1

    after = _recalled(worker_context, hash_embedder, "where I live, Paris")
    gone = {("fact", mine["fact"]), ("episode", mine["episode"]), ("exchange", mine["exchange"])}
    assert not {(hit.kind, hit.id) for hit in after} & gone
    texts = [hit.text for hit in after] + [line.get("text", "") for hit in after for line in hit.lines]
    assert not any("Paris" in text for text in texts)


def test_forget_by_ids_of_each_kind(skill, memories, db_engine):
    mine = memories[USER]
    result = skill("forget", {"episode_ids": [mine["episode"]], "exchange_ids": [mine["exchange"]]})
    assert result.ok and result.result["forgotten"]["facts"] == []
    assert _ids_of(db_engine, Fact, USER) == {mine["fact"], mine["other_fact"]}
    assert _ids_of(db_engine, Episode, USER) == {mine["other_episode"]}
    assert _ids_of(db_engine, Exchange, USER) == {mine["other_exchange"]}


@pytest.mark.parametrize(("arguments", "unknown"), [
    (lambda mine, theirs: {"fact_ids": [987654]}, lambda mine, theirs: {"fact_ids": [987654]}),
    (lambda mine, theirs: {"episode_ids": [mine["episode"], 987654]}, lambda mine, theirs: {"episode_ids": [987654]}),
    (lambda mine, theirs: {"exchange_ids": [theirs["exchange"]]},
     lambda mine, theirs: {"exchange_ids": [theirs["exchange"]]}),
    (lambda mine, theirs: {"fact_ids": [mine["fact"]], "episode_ids": [theirs["episode"]]},
     lambda mine, theirs: {"episode_ids": [theirs["episode"]]}),
])
def test_forget_unknown_or_foreign_ids_delete_nothing(skill, preview, memories, db_engine, arguments, unknown):
    mine, theirs = memories[USER], memories[OTHER]
    wanted = arguments(mine, theirs)
    for attempt in (preview("forget", wanted), skill("forget", wanted)):
        assert not attempt.ok and attempt.error["code"] == "not_found"
        assert attempt.error["unknown"] == unknown(mine, theirs)
    assert count(db_engine, Fact) == 4 and count(db_engine, Episode) == 4 and count(db_engine, Exchange) == 4


@pytest.mark.parametrize(("arguments", "code"), [
    ({"query": "that"}, "needs_info"),  # no words to match: every memory would
    ({"query": "my pet giraffe"}, "not_found"),
])
def test_forget_vague_or_unmatched_query_deletes_nothing(skill, memories, db_engine, arguments, code):
    result = skill("forget", arguments)
    assert not result.ok and result.error["code"] == code
    assert count(db_engine, Fact) == 4 and count(db_engine, Episode) == 4 and count(db_engine, Exchange) == 4


def test_forget_never_touches_the_current_turns_exchange(skill, worker_context, person, hash_embedder, db_engine):
    with worker_context.sessions.begin() as session:
        current = create_exchange(session, user_id=USER, user_text="Forget that I live in Paris", reply="")
        current.request_id = "req-1"  # the request id the skill runs under
        earlier = create_exchange(session, user_id=USER, user_text=PARIS[0], reply=PARIS[1])
        # Shares only the request's verb with it: the verb is not part of the memory.
        decoy = create_exchange(session, user_id=USER, user_text="Forget the Paris trip", reply="Okay.")
        ids = {"current": current.id, "earlier": earlier.id, "decoy": decoy.id}
    result = skill("forget", {"query": "forget that I live in Paris"})
    assert [item["id"] for item in result.result["forgotten"]["exchanges"]] == [ids["earlier"]]
    assert _ids_of(db_engine, Exchange, USER) == {ids["current"], ids["decoy"]}
    assert skill("forget", {"exchange_ids": [ids["current"]]}).error["code"] == "not_found"


def test_forget_caps_each_kind_and_says_how_many_stay(skill, preview, worker_context, person, hash_embedder,
                                                      db_engine):
    with worker_context.sessions.begin() as session:
        for n in range(forget.MAX_MATCHES + 2):
            create_exchange(session, user_id=USER, user_text=f"Paris trip number {n}", reply="Fun!")
    shown = preview("forget", {"query": "Paris trips"})
    assert len(shown.result["arguments"]["exchange_ids"]) == forget.MAX_MATCHES
    assert shown.result["more"] == {"exchanges": 2}
    assert "2 more matching would stay" in forget.describe({**shown.result["arguments"], **shown.result})
    result = skill("forget", shown.result["arguments"])
    assert len(result.result["forgotten"]["exchanges"]) == forget.MAX_MATCHES and "more" not in result.result
    assert count(db_engine, Exchange) == 2


def test_forget_scans_at_most_scan_limit_of_the_newest_matching_facts(preview, worker_context, person, hash_embedder,
                                                                      monkeypatch):
    with worker_context.sessions.begin() as session:
        ids = [remember_fact(session, hash_embedder, USER, text).fact_id
               for text in ("My cousin lives near Paris", "Paris bakeries open early", "I ran the Paris marathon")]
        remember_fact(session, hash_embedder, USER, "I work at Acme")
    monkeypatch.setattr(forget, "SCAN_LIMIT", 2)
    shown = preview("forget", {"query": "Paris"})
    assert sorted(shown.result["arguments"]["fact_ids"]) == sorted(ids[1:]) and "more" not in shown.result


def test_forget_takes_the_words_only_the_forgotten_turns_said_out_of_the_vocabulary(skill, memories, worker_context,
                                                                                  hash_embedder, db_engine):
    from services.memory import vocabulary

    with worker_context.sessions.begin() as session:
        kept = create_exchange(session, user_id=USER, user_text="Lovely weather today", reply="Enjoy the sun.",
                               embedder=hash_embedder)
    vocabulary.fill_all(worker_context.sessions, hash_embedder)

    def words(user: str) -> set[str]:
        with db_engine.connect() as connection:
            found = connection.execute(text("SELECT word FROM vocabulary WHERE user_id = :u"), {"u": user})
            return set(found.scalars())

    before, theirs = words(USER), words(OTHER)
    assert {"paris", "live", "lovely", "suits", "acme"} <= before
    assert skill("forget", {"query": "where I live, Paris"}).ok
    assert _ids_of(db_engine, Exchange, USER) == {memories[USER]["other_exchange"], kept.id}
    after = words(USER)
    # What only the forgotten exchange said is gone; a word a remaining turn also says stays.
    assert not {"paris", "live", "suits"} & after
    assert {"lovely", "acme", "work", "weather"} <= after
    assert after == before - {"paris", "live", "suits"}
    assert words(OTHER) == theirs  # the other person's identical words are theirs
