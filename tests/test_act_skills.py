"""Each innate skill against PostgreSQL: what it does, and that bad arguments leave nothing half-written."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest
from sqlalchemy import func, select

from services.act.config import ActConfig, SkillLimits
from services.act.models import Goal, ListItem, NamedList, ScheduledItem
from services.act.skills import forget
from services.act.skills.base import SessionGate, SkillContext
from services.act.turn import innate_dispatcher
from services.act.when import zone_of
from services.db import Exchange, RoutingDecision, User
from services.memory.facts import remember_fact
from services.memory.models import Episode, ExchangeAccess, Fact, MemoryChunk
from services.memory.recall import recall
from tests.memory_builders import create_exchange, create_user

pytestmark = pytest.mark.integration

USER = "bo"
ZONE = "Asia/Tokyo"
NOW = dt.datetime(2030, 1, 15, 3, 0, tzinfo=dt.UTC)  # Tuesday 12:00 in Tokyo


@pytest.fixture
def person(db_engine):
    with db_engine.begin() as connection:
        connection.execute(User.__table__.insert().values(id=USER, timezone=ZONE))
    return USER


@pytest.fixture
def skill(worker_context, person, hash_embedder):
    """Run one action in its own committed transaction, as a turn would; returns the ActionResult."""

    def run(name, arguments, *, config=None, embedder=hash_embedder):
        config = config or ActConfig()
        dispatcher = innate_dispatcher(config)
        with worker_context.sessions.begin() as session:
            ctx = SkillContext(user_id=USER, thread_id="t", request_id="req-1", user_text="", zone=zone_of(ZONE),
                               zone_name=ZONE, now=NOW, config=config, gate=SessionGate(session), embedder=embedder,
                               catalog=dispatcher.catalog())
            return dispatcher.dispatch(name, arguments, ctx)

    return run


@pytest.fixture
def preview(worker_context, person, hash_embedder):
    """The read-only resolution the critic runs before asking to confirm; returns the ActionResult."""

    def run(name, arguments):
        config = ActConfig()
        dispatcher = innate_dispatcher(config)
        skill = dispatcher.skills[name]
        with worker_context.sessions.begin() as session:
            ctx = SkillContext(user_id=USER, thread_id="t", request_id="req-1", user_text="", zone=zone_of(ZONE),
                               zone_name=ZONE, now=NOW, config=config, gate=SessionGate(session),
                               embedder=hash_embedder, catalog=dispatcher.catalog())
            return dispatcher.run(f"{name}.preview", lambda action: skill.preview(action, arguments), ctx)

    return run


def count(db_engine, model) -> int:
    with db_engine.connect() as connection:
        return connection.execute(select(func.count()).select_from(model)).scalar_one()


def items(db_engine) -> list[tuple[str, bool]]:
    with db_engine.connect() as connection:
        return [tuple(row) for row in connection.execute(select(ListItem.text, ListItem.checked)
                                                         .order_by(ListItem.position))]


# --- list -----------------------------------------------------------------------------------------

def test_list_lifecycle(skill, db_engine):
    added = skill("list", {"operation": "add", "name": "My Shopping List", "items": ["milk", "eggs"]})
    assert added.ok and added.result["list"] == "shopping" and added.result["added"] == ["milk", "eggs"]
    again = skill("list", {"operation": "add", "name": "shopping", "items": ["Milk", "bread"]})
    assert again.result["already_there"] == ["Milk"] and again.result["added"] == ["bread"]
    assert skill("list", {"operation": "check", "name": "shopping", "items": ["egg"]}).ok  # unique partial match
    assert skill("list", {"operation": "remove", "name": "shopping", "items": ["bread"]}).ok
    assert items(db_engine) == [("milk", False), ("eggs", True)]
    assert skill("list", {"operation": "uncheck", "name": "shopping", "items": ["eggs"]}).ok
    view = skill("list", {"operation": "view", "name": "shopping"}).result
    assert view["items"] == [{"text": "milk", "checked": False}, {"text": "eggs", "checked": False}]
    assert skill("list", {"operation": "view"}).result == {"lists": [{"name": "shopping", "items": 2}]}
    assert skill("list", {"operation": "delete", "name": "shopping"}).result["deleted"] is True
    assert count(db_engine, NamedList) == 0 and count(db_engine, ListItem) == 0


@pytest.mark.parametrize(("arguments", "code"), [
    ({"operation": "juggle", "name": "x"}, "invalid_arguments"),
    ({"operation": "add", "name": "shopping"}, "needs_info"),
    ({"operation": "add", "items": ["milk"]}, "needs_info"),
    ({"operation": "add", "name": "my list", "items": ["milk"]}, "needs_info"),
    ({"operation": "add", "name": "shopping", "items": ["   "]}, "invalid_arguments"),
    ({"operation": "add", "name": "shopping", "items": "milk"}, "invalid_arguments"),
    ({"operation": "view", "name": "nowhere"}, "not_found"),
    ({"operation": "add", "name": "shopping", "items": ["milk"], "colour": "red"}, "invalid_arguments"),
])
def test_list_bad_arguments_write_nothing(skill, db_engine, arguments, code):
    result = skill("list", arguments)
    assert not result.ok and result.error["code"] == code and result.error["message"]
    assert count(db_engine, NamedList) == 0


def test_list_change_with_one_unknown_item_changes_none(skill, db_engine):
    skill("list", {"operation": "add", "name": "packing", "items": ["socks", "charger"]})
    result = skill("list", {"operation": "remove", "name": "packing", "items": ["socks", "passport"]})
    assert result.error["code"] == "not_found" and result.error["available"] == ["socks", "charger"]
    assert items(db_engine) == [("socks", False), ("charger", False)]


def test_a_full_list_rolls_back_the_whole_action(skill, db_engine):
    config = dataclasses.replace(ActConfig(), skills=SkillLimits(max_list_items=2))
    result = skill("list", {"operation": "add", "name": "todo", "items": ["a", "b", "c"]}, config=config)
    assert result.error["code"] == "full"
    assert count(db_engine, NamedList) == 0 and count(db_engine, ListItem) == 0  # even the new list is gone


# --- schedule ---------------------------------------------------------------------------------------

def test_schedule_create_list_move_cancel(skill, db_engine):
    created = skill("schedule", {"operation": "create", "text": "call the dentist", "due": "tomorrow at 9",
                                 "recurrence": "weekdays"})
    view = created.result["created"]
    assert view["due_local"] == "2030-01-16T09:00+09:00" and view["due_utc"] == "2030-01-16T00:00+00:00"
    assert view["recurrence"] == "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR"
    with db_engine.connect() as connection:
        row = connection.execute(select(ScheduledItem)).one()
    assert row.due_at == dt.datetime(2030, 1, 16, 0, 0, tzinfo=dt.UTC) and row.timezone == ZONE
    assert row.created_request_id == "req-1"
    skill("schedule", {"operation": "create", "kind": "prompt", "text": "plan my week", "due": "2030-01-20T18:00"})
    listed = skill("schedule", {"operation": "list"}).result["items"]
    assert [item["text"] for item in listed] == ["call the dentist", "plan my week"]
    moved = skill("schedule", {"operation": "move", "match": "dentist", "due": "in 2 hours"}).result["moved"]
    assert moved["due_utc"] == "2030-01-15T05:00+00:00"
    cancelled = skill("schedule", {"operation": "cancel", "item_id": row.id}).result["cancelled"]
    assert cancelled["status"] == "cancelled"
    assert [item["text"] for item in skill("schedule", {"operation": "list"}).result["items"]] == ["plan my week"]


@pytest.mark.parametrize(("arguments", "code"), [
    ({"operation": "create", "text": "x", "due": "yesterday at 9"}, "invalid"),
    ({"operation": "create", "text": "x", "due": "2020-01-01T09:00"}, "invalid"),
    ({"operation": "create", "text": "x", "due": "friday"}, "needs_info"),
    ({"operation": "create", "text": "x"}, "needs_info"),
    ({"operation": "create", "due": "tomorrow at 9"}, "needs_info"),
    ({"operation": "create", "text": "x", "due": "tomorrow at 9", "recurrence": "sometimes"}, "invalid"),
    ({"operation": "create", "text": "x", "due": "tomorrow at 9", "kind": "alarm"}, "invalid_arguments"),
    ({"operation": "cancel", "item_id": 999}, "not_found"),
    ({"operation": "cancel"}, "needs_info"),
    ({"operation": "move", "match": "dentist"}, "needs_info"),
])
def test_schedule_bad_arguments_write_nothing(skill, db_engine, arguments, code):
    result = skill("schedule", arguments)
    assert not result.ok and result.error["code"] == code, result
    assert count(db_engine, ScheduledItem) == 0


def test_schedule_ambiguous_match_changes_nothing(skill, db_engine):
    for text in ("call mum", "call dad"):
        skill("schedule", {"operation": "create", "text": text, "due": "tomorrow at 9"})
    result = skill("schedule", {"operation": "cancel", "match": "call"})
    assert result.error["code"] == "ambiguous" and sorted(result.error["candidates"]) == ["call dad", "call mum"]
    with db_engine.connect() as connection:
        assert set(connection.execute(select(ScheduledItem.status)).scalars()) == {"active"}


def test_schedule_by_id_finds_only_the_persons_active_items(skill, db_engine, worker_context):
    with worker_context.sessions.begin() as session:
        create_user(session, user_id="someone-else")
        theirs = ScheduledItem(user_id="someone-else", text="their reminder", due_at=NOW + dt.timedelta(days=1))
        session.add(theirs)
        session.flush()
        theirs_id = theirs.id
    mine = skill("schedule", {"operation": "create", "text": "water the plants", "due": "tomorrow at 9"})
    mine_id = mine.result["created"]["id"]
    foreign = skill("schedule", {"operation": "cancel", "item_id": theirs_id})
    assert foreign.error["code"] == "not_found" and [item["id"] for item in foreign.error["available"]] == [mine_id]
    assert skill("schedule", {"operation": "cancel", "item_id": mine_id}).result["cancelled"]["id"] == mine_id
    assert skill("schedule", {"operation": "cancel", "item_id": mine_id}).error["code"] == "not_found"  # not active
    with db_engine.connect() as connection:
        assert connection.execute(select(ScheduledItem.status).where(ScheduledItem.id == theirs_id)).scalar_one() \
            == "active"


# --- goal -------------------------------------------------------------------------------------------

def test_goal_create_update_list(skill):
    created = skill("goal", {"operation": "create", "text": "Run a marathon in spring"}).result["created"]
    assert created["state"] == "active"
    updated = skill("goal", {"operation": "update", "match": "marathon", "note": "ran 10 km", "state": "paused"})
    assert updated.result["updated"]["state"] == "paused"
    assert updated.result["updated"]["progress"][0]["note"] == "ran 10 km"
    assert [g["text"] for g in skill("goal", {"operation": "list"}).result["goals"]] == ["Run a marathon in spring"]


@pytest.mark.parametrize(("arguments", "code"), [
    ({"operation": "create"}, "needs_info"),
    ({"operation": "create", "text": "x", "state": "finished"}, "invalid_arguments"),
    ({"operation": "update", "goal_id": 5, "note": "progress"}, "not_found"),
    ({"operation": "update", "goal_id": 5}, "needs_info"),
    ({"operation": "update", "goal_id": "five", "note": "x"}, "invalid_arguments"),
])
def test_goal_bad_arguments_write_nothing(skill, db_engine, arguments, code):
    result = skill("goal", arguments)
    assert not result.ok and result.error["code"] == code
    assert count(db_engine, Goal) == 0


def test_goal_by_id_finds_only_the_persons_goals(skill, db_engine, worker_context):
    with worker_context.sessions.begin() as session:
        create_user(session, user_id="someone-else")
        theirs = Goal(user_id="someone-else", text="their goal")
        session.add(theirs)
        session.flush()
        theirs_id = theirs.id
    mine_id = skill("goal", {"operation": "create", "text": "Learn Portuguese"}).result["created"]["id"]
    foreign = skill("goal", {"operation": "update", "goal_id": theirs_id, "state": "done"})
    assert foreign.error["code"] == "not_found" and [goal["id"] for goal in foreign.error["available"]] == [mine_id]
    assert skill("goal", {"operation": "update", "goal_id": mine_id, "state": "done"}).result["updated"]["state"] == \
        "done"
    with db_engine.connect() as connection:
        assert connection.execute(select(Goal.state).where(Goal.id == theirs_id)).scalar_one() == "active"


# --- memory skills ----------------------------------------------------------------------------------

def test_memorize_then_recall_and_introspect(skill):
    stored = skill("memorize", {"text": "My sister is called Priya"})
    assert stored.ok and stored.result["action"] == "inserted"
    assert skill("memorize", {"text": "My sister is called Priya"}).result["action"] == "merged"
    found = skill("recall", {"query": "sister Priya", "kinds": ["fact"]}).result["items"]
    assert found[0]["kind"] == "fact" and found[0]["text"] == "My sister is called Priya"
    assert found[0]["id"] == stored.result["fact_id"]
    skill("list", {"operation": "add", "name": "shopping", "items": ["milk"]})
    known = skill("introspect", {}).result
    assert known["person"]["facts"] == ["My sister is called Priya"]
    assert known["person"]["lists"] == [{"name": "shopping", "items": 1}]
    assert "schedule" in {entry["name"] for entry in known["assistant"]["skills"]}


@pytest.mark.parametrize(("name", "arguments", "code"), [
    ("memorize", {"text": "You promised to call", "speaker": "assistant"}, "rejected"),
    ("memorize", {"text": "  "}, "invalid_arguments"),
    ("memorize", {"text": "x", "confidence": 2}, "invalid_arguments"),
    ("recall", {"query": "x", "k": 0}, "invalid_arguments"),
    ("recall", {}, "invalid_arguments"),
    ("introspect", {"about": "everything"}, "invalid_arguments"),
    ("associate", {}, "invalid_arguments"),
    ("forget", {}, "needs_info"),
    ("forget", {"fact_ids": [12345]}, "not_found"),
    ("forget", {"query": "my pet giraffe"}, "not_found"),
])
def test_memory_skills_bad_arguments(skill, db_engine, name, arguments, code):
    result = skill(name, arguments)
    assert not result.ok and result.error["code"] == code
    assert count(db_engine, Fact) == 0


def test_memorize_without_the_embedding_model_is_a_clear_error(skill, db_engine):
    result = skill("memorize", {"text": "I like tea"}, embedder=None)
    assert result.error["code"] == "unavailable" and count(db_engine, Fact) == 0


def test_forget_removes_only_the_matching_fact(skill, worker_context, hash_embedder, db_engine):
    with worker_context.sessions.begin() as session:
        remember_fact(session, hash_embedder, USER, "I live in Paris")
        remember_fact(session, hash_embedder, USER, "I work at Acme")
    result = skill("forget", {"query": "where I live, Paris"})
    assert [fact["text"] for fact in result.result["forgotten"]["facts"]] == ["I live in Paris"]
    with db_engine.connect() as connection:
        assert connection.execute(select(Fact.text)).scalars().all() == ["I work at Acme"]


def test_associate_spreads_from_the_seed(skill, worker_context, hash_embedder):
    with worker_context.sessions.begin() as session:
        for text in ("I run marathons with my sister", "My sister lives in Lisbon", "Lisbon has great coffee"):
            remember_fact(session, hash_embedder, USER, text)
    result = skill("associate", {"concept": "marathons"}).result
    concepts = {entry["concept"]: entry["activation"] for entry in result["associations"]}
    assert result["seeds"] == ["marathon"] and "marathon" not in concepts
    assert concepts["sister"] > concepts["lisbon"] > concepts.get("coffee", 0.0)  # decays with every hop
    assert result["associations"][0]["sources"][0].startswith("fact:")
    unknown = skill("associate", {"concept": "volcanoes"}).result
    assert unknown["associations"] == [] and "nothing in memory" in unknown["note"]


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
    texts = [hit.text for hit in after] + [turn.get("text", "") for hit in after for turn in hit.neighbours]
    texts += [str(turn.get(key, "")) for hit in after for turn in hit.neighbours for key in ("user_text", "reply")]
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
