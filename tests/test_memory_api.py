"""Memory REST scoped to the token's user; CLI recall isolation; the web process loads no model."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import shutil
import subprocess
import sys
from dataclasses import replace

import pytest
from rq import Queue
from sqlalchemy import select
from sqlalchemy.orm import Session

from cli.memory import cmd_recall
from services.memory.facts import remember_fact
from services.memory.models import Episode, Fact
from services.queues import MEMORY_CHUNKER_QUEUE
from services.settings import PROJECT_ROOT
from tests.fake_embedder import HashEmbedder
from tests.memory_builders import create_exchange

pytestmark = pytest.mark.integration

TOKENS = {"alice-token-123": "alice", "bob-token-4567": "bob"}
ALICE = {"Authorization": "Bearer alice-token-123"}
BOB = {"Authorization": "Bearer bob-token-4567"}


@pytest.fixture
def api(settings, db_engine, real_redis):
    from api import WebDeps, create_app
    from api import memory as memory_api

    app_settings = replace(settings, api_tokens=TOKENS)
    deps = WebDeps.build(app_settings)
    app = create_app(app_settings, deps)
    if "memory" not in app.blueprints:  # until the factory registers it
        app.register_blueprint(memory_api.bp)
    app.config["TESTING"] = True
    yield app.test_client()
    deps.fanout.stop()
    deps.engine.dispose()


@pytest.fixture
def memories(db_engine):
    """The same content for alice and bob: a fact, a superseded fact, an episode and an exchange each."""
    embedder = HashEmbedder()
    ids: dict[str, dict[str, int]] = {}
    with Session(db_engine) as session, session.begin():
        for user in ("alice", "bob"):
            exchange = create_exchange(session, user_id=user, user_text="My cat Miso loves tuna", embedder=embedder)
            old = remember_fact(session, embedder, user, "I live in Oslo", source_exchange_id=exchange.id)
            new = remember_fact(session, embedder, user, "I live in Bergen")
            episode = Episode(user_id=user, session_id=f"s-{user}", title="Cat food", gist="Miso and tuna",
                              summary="Talked about what Miso the cat eats.", salience=0.5, exchange_ids=[exchange.id],
                              ended_at=dt.datetime.now(dt.UTC))
            session.add(episode)
            session.flush()
            ids[user] = {"old": old.fact_id, "fact": new.fact_id, "episode": episode.id, "exchange": exchange.id}
    return ids


def test_facts_list_search_and_history(api, memories):
    facts = api.get("/memory/facts", headers=ALICE).json["facts"]
    assert [f["text"] for f in facts] == ["I live in Bergen"] and facts[0]["speaker"] == "user"
    history = api.get("/memory/facts?include_superseded=1", headers=ALICE).json["facts"]
    assert {f["id"] for f in history} == {memories["alice"]["fact"], memories["alice"]["old"]}
    found = api.get("/memory/facts?q=Bergen", headers=ALICE).json["facts"]
    assert [f["id"] for f in found] == [memories["alice"]["fact"]]


def test_another_users_ids_look_missing(api, memories):
    alice_fact, alice_episode = memories["alice"]["fact"], memories["alice"]["episode"]
    assert api.get(f"/memory/facts/{alice_fact}", headers=BOB).status_code == 404
    assert api.patch(f"/memory/facts/{alice_fact}", json={"salience": 0.1}, headers=BOB).status_code == 404
    assert api.delete(f"/memory/facts/{alice_fact}", headers=BOB).status_code == 404
    assert api.get(f"/memory/episodes/{alice_episode}", headers=BOB).status_code == 404
    assert api.delete(f"/memory/episodes/{alice_episode}", headers=BOB).status_code == 404
    bob_ids = set(memories["bob"].values())
    for path in ("/memory/facts", "/memory/facts?include_superseded=1", "/memory/episodes", "/memory/search?q=Miso",
                 "/memory/search?q=Bergen+Oslo+tuna"):
        body = api.get(path, headers=BOB).json
        items = body.get("facts") or body.get("episodes") or body.get("results")
        assert items and all(item["id"] in bob_ids for item in items), path
    exported = api.get("/memory/export", headers=BOB).json
    assert exported["user_id"] == "bob" and len(exported["facts"]) == 2
    assert api.get("/memory/facts", headers={"Authorization": "Bearer nope-nope-nope"}).status_code == 401


def test_editing_a_fact_text_supersedes_it_and_queues_its_embedding(api, memories, db_engine, real_redis):
    fact_id = memories["alice"]["fact"]
    response = api.patch(f"/memory/facts/{fact_id}", json={"text": "I live in Trondheim", "salience": 0.9},
                         headers=ALICE)
    assert response.status_code == 200
    new = response.json
    assert new["id"] != fact_id and new["text"] == "I live in Trondheim" and new["embedded"] is False
    assert Queue(MEMORY_CHUNKER_QUEUE, connection=real_redis).job_ids == [f"embed-fact-{new['id']}"]
    with Session(db_engine) as session:
        old = session.get(Fact, fact_id)
        assert old.superseded_by == new["id"] and old.salience == 0.9
    assert api.patch(f"/memory/facts/{new['id']}", json={"salience": 3}, headers=ALICE).status_code == 400
    assert api.patch(f"/memory/facts/{new['id']}", json={"speaker": "x"}, headers=ALICE).status_code == 400


def test_an_edited_fact_is_capped_at_the_operators_fact_length(settings, memories, db_engine, real_redis, tmp_path):
    """configs/memory.toml's [facts] max_chars holds for a person's correction as for any fact (the route used the
    built-in 500 whatever the operator set)."""
    from api import WebDeps, create_app

    configs = shutil.copytree(settings.configs_dir, tmp_path / "configs")
    memory_toml = configs / "memory.toml"
    memory_toml.write_text(memory_toml.read_text().replace("max_chars = 500", "max_chars = 40", 1))
    app_settings = replace(settings, api_tokens=TOKENS, configs_dir=configs)
    deps = WebDeps.build(app_settings)
    try:
        client = create_app(app_settings, deps).test_client()
        text = "I live in Trondheim now, in a yellow wooden house by the fjord with two cats"
        response = client.patch(f"/memory/facts/{memories['alice']['fact']}", json={"text": text}, headers=ALICE)
        assert response.status_code == 200 and response.json["text"] == text[:40].strip()
    finally:
        deps.fanout.stop()
        deps.engine.dispose()


def test_the_embedding_job_fills_in_an_edited_fact(api, memories, worker_context, run_jobs, db_engine):
    worker_context.embedder = HashEmbedder()
    new = api.patch(f"/memory/facts/{memories['alice']['fact']}", json={"text": "I live in Tromsø"},
                    headers=ALICE).json
    run_jobs((MEMORY_CHUNKER_QUEUE,))
    with Session(db_engine) as session:
        assert session.get(Fact, new["id"]).embedding is not None


def test_episodes_edit_delete_and_delete_all(api, memories, db_engine):
    episode_id = memories["alice"]["episode"]
    edited = api.patch(f"/memory/episodes/{episode_id}", json={"title": "Miso's diet", "salience": 0.7},
                       headers=ALICE)
    assert edited.status_code == 200 and edited.json["title"] == "Miso's diet"
    assert api.patch(f"/memory/episodes/{episode_id}", json={"salience": 7}, headers=ALICE).status_code == 400
    assert api.delete(f"/memory/episodes/{episode_id}", headers=ALICE).json == {"deleted": episode_id}
    assert api.delete(f"/memory/facts/{memories['alice']['fact']}", headers=ALICE).status_code == 200
    assert api.delete("/memory", headers=ALICE).status_code == 400  # needs confirm
    report = api.delete("/memory?confirm=true", headers=ALICE).json
    assert report["postgres_rows"]["users"] == 1 and report["postgres_rows"]["exchanges"] == 1
    with Session(db_engine) as session:
        owners = set(session.scalars(select(Fact.user_id))) | set(session.scalars(select(Episode.user_id)))
    assert owners == {"bob"}


def test_cli_recall_of_one_user_never_shows_another(settings, memories, capsys):
    args = argparse.Namespace(query="Miso tuna Bergen Oslo", user="alice", k=20, json=True, file=None)
    assert cmd_recall(settings, args, embedder=HashEmbedder()) == 0
    result = json.loads(capsys.readouterr()[0].strip().splitlines()[-1])
    alice_ids = set(memories["alice"].values())
    assert result["results"] and all(item["id"] in alice_ids for item in result["results"])
    assert {"text", "kind", "score", "signals", "exchange_ids", "external_ids"} <= set(result["results"][0])
    assert result["latency_ms"] > 0


def test_the_web_process_loads_no_model():
    code = ("import sys, api, api.memory; from api import create_app; "
            "print(any(m in sys.modules for m in ('torch', 'sentence_transformers', 'onnxruntime')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=PROJECT_ROOT, check=True)
    assert out.stdout.strip() == "False"


def _fact_count(db_engine) -> int:
    with Session(db_engine) as session:
        return len(session.scalars(select(Fact.id)).all())


def test_a_corrected_fact_keeps_the_confidence_sent_with_it(api, memories, db_engine):
    response = api.patch(f"/memory/facts/{memories['alice']['fact']}",
                         json={"text": "I live in Stavanger", "confidence": 0.4}, headers=ALICE)
    assert response.status_code == 200 and response.json["confidence"] == 0.4
    with Session(db_engine) as session:
        assert session.get(Fact, response.json["id"]).confidence == 0.4


def test_correcting_a_superseded_fact_is_a_conflict_and_writes_nothing(api, memories, db_engine, real_redis):
    old, current = memories["alice"]["old"], memories["alice"]["fact"]
    before = _fact_count(db_engine)
    response = api.patch(f"/memory/facts/{old}", json={"text": "I live in Bodø", "salience": 0.2}, headers=ALICE)
    assert response.status_code == 409
    assert f"superseded by fact {current}" in response.json["error"]["message"]
    assert _fact_count(db_engine) == before
    assert Queue(MEMORY_CHUNKER_QUEUE, connection=real_redis).job_ids == []
    with Session(db_engine) as session:
        assert session.get(Fact, old).salience == 0.5
    active = api.get("/memory/facts", headers=ALICE).json["facts"]
    assert [f["id"] for f in active] == [current]


@pytest.mark.parametrize("body", [[1, 2], "confirm", 3])
def test_deleting_all_with_a_body_that_is_not_an_object_is_a_bad_request(api, memories, db_engine, body):
    response = api.delete("/memory", json=body, headers=ALICE)
    assert response.status_code == 400 and "JSON object" in response.json["error"]["message"]
    assert api.get("/memory/facts", headers=ALICE).json["facts"]


def test_a_query_about_millennia_ago_is_searched_not_a_server_error(api, memories):
    response = api.get("/memory/search?q=what+did+Miso+eat+3000+years+ago", headers=ALICE)
    assert response.status_code == 200 and response.json["results"]


def test_the_memory_config_is_read_once_per_app(settings, db_engine, real_redis, memories, tmp_path):
    from api import WebDeps, create_app

    configs = tmp_path / "configs"
    shutil.copytree(PROJECT_ROOT / "configs", configs)
    app_settings = replace(settings, api_tokens=TOKENS, configs_dir=configs)
    deps = WebDeps.build(app_settings)
    try:
        client = create_app(app_settings, deps).test_client()
        (configs / "memory.toml").write_text("[recall]\nspan_replied_to = 'magic'\n")  # re-reading it would fail
        assert client.get("/memory/search?q=Miso", headers=ALICE).status_code == 200
        assert client.get("/memory/facts?q=Bergen", headers=ALICE).status_code == 200
    finally:
        deps.fanout.stop()
        deps.engine.dispose()
