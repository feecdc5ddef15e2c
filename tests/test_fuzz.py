"""Hypothesis fuzzing of POST /chat, the memory API and the import format.

Whatever arrives: only 2xx or 4xx (never 500), a 4xx writes nothing, and what is written is
written whole (rows counted). Example counts are modest so the file runs in well under a minute.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from services.bundle import BundleInvalid, export_bundle, import_bundle
from services.db import Exchange, Thread
from services.limits import Limits, Rate
from services.memory.facts import remember_fact
from services.memory.importer import ImportReport, pair_exchanges, parse_lines, store_records
from services.memory.models import Episode, Fact
from services.queues import PROMPT_QUEUE
from tests.fake_embedder import HashEmbedder
from tests.memory_builders import create_exchange

pytestmark = pytest.mark.integration

FUZZ = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                          HealthCheck.too_slow])

# JSON values of every kind, with text that includes NULs, lone surrogates and control characters.
nasty_text = st.text(st.characters(codec=None, exclude_categories=()), max_size=40)
json_scalars = st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | nasty_text
json_values = st.recursive(json_scalars, lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(nasty_text, inner, max_size=3), max_leaves=8)
sources = st.sampled_from(["text", "voice", "", "sms"]) | json_values
chat_bodies = st.fixed_dictionaries(
    {}, optional={"text": json_values | nasty_text, "source": sources, "thread_id": json_values | nasty_text},
) | st.dictionaries(nasty_text, json_values, max_size=4)
content_types = st.sampled_from(["application/json", "text/plain", "application/json; charset=latin-1"])


def _raw(body: object) -> bytes:
    try:
        return json.dumps(body).encode("utf-8", "surrogatepass")
    except (ValueError, TypeError):
        return b"{"


@pytest.fixture
def fuzz_client(app):  # type: ignore[no-untyped-def]
    # Fuzzing is not an abuse pattern to throttle: lift the rate limits for this app only.
    app.extensions["engram.limits"] = replace(Limits(), chat=Rate(10**6, 10**6), memory=Rate(10**6, 10**6))
    return app.test_client()


def _threads(db_engine) -> int:  # type: ignore[no-untyped-def]
    with Session(db_engine) as session:
        return session.scalar(select(func.count()).select_from(Thread))


@FUZZ
@given(body=chat_bodies, content_type=content_types, raw=st.one_of(st.none(), st.binary(max_size=60)))
def test_post_chat_never_500_and_refusals_enqueue_nothing(fuzz_client, db_engine, real_redis, body, content_type, raw):
    queued, threads = real_redis.llen(f"rq:queue:{PROMPT_QUEUE}"), _threads(db_engine)
    data = raw if raw is not None else _raw(body)
    response = fuzz_client.post("/chat", data=data, content_type=content_type, buffered=False)
    status = response.status_code
    response.close()
    assert status == 200 or 400 <= status < 500, (status, data[:100])
    if status == 200:
        assert real_redis.llen(f"rq:queue:{PROMPT_QUEUE}") == queued + 1
    else:
        assert response.is_json
        assert real_redis.llen(f"rq:queue:{PROMPT_QUEUE}") == queued, "a refused chat was queued"
        assert _threads(db_engine) == threads, "a refused chat created a thread"


@pytest.fixture
def owned(db_engine):  # type: ignore[no-untyped-def]
    embedder = HashEmbedder()
    with Session(db_engine) as session, session.begin():
        exchange = create_exchange(session, user_id="local", user_text="My dog Rex likes apples", embedder=embedder)
        fact = remember_fact(session, embedder, "local", "I live in Bergen", source_exchange_id=exchange.id)
        episode = Episode(user_id="local", session_id="s-local", title="Dogs", gist="Rex", summary="About Rex.",
                          salience=0.5, exchange_ids=[exchange.id], ended_at=dt.datetime.now(dt.UTC))
        session.add(episode)
        session.flush()
        return {"fact": fact.fact_id, "episode": episode.id}


def _snapshot(db_engine) -> tuple[object, ...]:  # type: ignore[no-untyped-def]
    with Session(db_engine) as session:
        facts = session.execute(select(Fact.id, Fact.text, Fact.salience, Fact.confidence, Fact.superseded_at)
                                .order_by(Fact.id)).all()
        episodes = session.execute(select(Episode.id, Episode.title, Episode.gist, Episode.summary, Episode.salience,
                                          Episode.open_loops).order_by(Episode.id)).all()
        return tuple(facts), tuple(episodes)


query_values = st.text(max_size=30) | st.integers(-(2**70), 2**70).map(str) | st.sampled_from(["", "1", "true", "fact"])


@FUZZ
@given(data=st.data())
def test_memory_api_never_500_and_refusals_change_nothing(fuzz_client, db_engine, owned, data):
    kind = data.draw(st.sampled_from(["facts", "episodes"]))
    item = owned["fact" if kind == "facts" else "episode"]
    item_id = data.draw(st.sampled_from([str(item), "0", "-1", "abc", "99999"]))
    method, path = data.draw(st.sampled_from([
        ("GET", f"/memory/{kind}"), ("GET", "/memory/search"), ("GET", f"/memory/{kind}/{item_id}"),
        ("PATCH", f"/memory/{kind}/{item_id}"), ("DELETE", f"/memory/{kind}/{item_id}"), ("DELETE", "/memory"),
        ("GET", f"/memory/facts/{item_id}/history"), ("GET", "/memory/export"),
    ]))
    params = data.draw(st.dictionaries(st.sampled_from(["q", "limit", "offset", "k", "kinds", "include_superseded",
                                                        "confirm"]), query_values, max_size=3))
    if method == "DELETE" and path == "/memory":
        params.pop("confirm", None)  # forgetting everything is tested elsewhere; here it must refuse
    body = data.draw(st.one_of(st.none(), json_values, st.fixed_dictionaries(
        {}, optional={"text": json_values, "salience": json_values, "confidence": json_values, "title": json_values,
                      "open_loops": json_values, "gist": json_values})))
    before = _snapshot(db_engine)
    response = fuzz_client.open(path, method=method, query_string=params,
                                data=None if body is None else _raw(body), content_type="application/json")
    status = response.status_code
    assert status < 300 or 400 <= status < 500, (status, method, path, params, body, response.get_data()[:300])
    assert response.is_json
    if status >= 400 or method == "GET":
        assert _snapshot(db_engine) == before, (method, path, status)


import_lines = st.one_of(
    st.fixed_dictionaries({"session": st.sampled_from(["a", "b", 1]) | json_values,
                           "speaker": st.sampled_from(["user", "assistant", "Caroline", "system"]) | json_values,
                           "text": nasty_text | json_values,
                           "timestamp": st.sampled_from(["2024-05-01T10:00:00Z", 1714557600, "yesterday", 10**20])
                           | json_values},
                          optional={"external_id": nasty_text | json_values}).map(_raw).map(
                              lambda raw: raw.decode("utf-8", "surrogatepass")),
    nasty_text,
)


NUL_LINE = '{"session": "a", "speaker": "user", "text": "nul \\u0000 here", "timestamp": 1714557600}'
SURROGATE_LINE = '{"session": "a", "speaker": "user", "text": "lone \\ud800 half", "timestamp": 1714557600}'
REPLY_LINE = '{"session": "a", "speaker": "assistant", "text": "ok", "timestamp": 1714557601}'


@FUZZ
@example(lines=[NUL_LINE, REPLY_LINE])
@example(lines=[SURROGATE_LINE, REPLY_LINE])
@given(lines=st.lists(import_lines, max_size=8))
def test_import_format_stores_whole_exchanges_or_reports_bad_lines(db_engine, lines):
    sessions = sessionmaker(db_engine)
    with Session(db_engine) as session:
        before = session.scalar(select(func.count()).select_from(Exchange).where(Exchange.user_id == "fuzz"))
    good, bad, count = parse_lines("\n".join(line.replace("\n", " ") for line in lines).splitlines())
    assert len(good) + len(bad) == count
    report = ImportReport(lines=count, bad=bad)
    records = pair_exchanges(good)
    store_records(sessions, HashEmbedder(), "fuzz", records, report=report)
    with Session(db_engine) as session:
        after = session.scalar(select(func.count()).select_from(Exchange).where(Exchange.user_id == "fuzz"))
    assert after - before == report.stored and report.stored + report.skipped == len(records)


@FUZZ
@given(mutation=st.dictionaries(st.sampled_from(["format", "version", "user_id", "exchanges", "facts", "episodes",
                                                 "chunks", "extra"]), json_values, max_size=3))
def test_import_bundle_is_refused_whole_or_loaded(db_engine, owned, mutation):
    sessions = sessionmaker(db_engine)
    with Session(db_engine) as session:
        bundle = {**export_bundle(session, "local"), **mutation}
        bundle = json.loads(_raw(bundle).decode("utf-8", "surrogatepass"))
    before = _snapshot(db_engine)
    try:
        import_bundle(sessions, HashEmbedder(), "fuzz-bundle", bundle)
    except BundleInvalid:
        assert _snapshot(db_engine) == before, "a refused bundle wrote something"


@pytest.mark.parametrize("bad", ["nul \u0000 here", "lone \ud800 half"])
@pytest.mark.parametrize("target", ["fact-text", "episode-title", "episode-loops", "search", "chat"])
def test_text_postgresql_cannot_store_is_refused_not_500(fuzz_client, db_engine, owned, target, bad):
    before = _snapshot(db_engine)
    raw = json.dumps({"text": bad, "title": bad, "open_loops": [bad]}).encode()
    if target == "fact-text":
        response = fuzz_client.patch(f"/memory/facts/{owned['fact']}", data=json.dumps({"text": bad}).encode(),
                                     content_type="application/json")
    elif target == "episode-title":
        response = fuzz_client.patch(f"/memory/episodes/{owned['episode']}", data=json.dumps({"title": bad}).encode(),
                                     content_type="application/json")
    elif target == "episode-loops":
        response = fuzz_client.patch(f"/memory/episodes/{owned['episode']}",
                                     data=json.dumps({"open_loops": [bad]}).encode(), content_type="application/json")
    elif target == "search":
        if "\ud800" in bad:
            pytest.skip("a URL cannot carry a lone surrogate: percent-decoding yields bytes, decoded with replacement")
        response = fuzz_client.get("/memory/search", query_string={"q": bad})
    else:
        response = fuzz_client.post("/chat", data=raw[: raw.index(b', "title"')] + b"}",
                                    content_type="application/json", buffered=False)
    assert 400 <= response.status_code < 500 and response.is_json, response.get_data()[:300]
    assert _snapshot(db_engine) == before


# The files shipped with the pages: no id of anyone's, nothing reaches SQL or Redis.
SHARED_FILES = {"static", "pages.static_file"}
NUL_BODY = {"text": "a\x00b", "due_at": "2031-05-01T09:00:00Z"}  # otherwise valid, for POST /reminders too
BODYLESS = {"threads.new_thread"}  # POST /threads reads no body: a new thread is all it makes


def test_a_nul_in_any_path_id_query_or_body_is_a_4xx_on_every_route(app, fuzz_client, db_engine, real_redis, owned):
    """Sweep the url_map: a NUL in each of a route's ids, in its query and in a JSON body never reaches
    PostgreSQL (which cannot store it and answered 500) and changes nothing."""
    before = _snapshot(db_engine), _threads(db_engine), real_redis.llen(f"rq:queue:{PROMPT_QUEUE}")
    swept = []
    for rule in app.url_map.iter_rules():
        if rule.endpoint in SHARED_FILES:
            continue
        with_nul_ids = re.sub(r"<[^>]+>", "a%00b", rule.rule)
        with_real_ids = re.sub(r"<[^>]+>", "1", rule.rule)
        for method in sorted(rule.methods - {"HEAD", "OPTIONS"}):
            attempts = [(with_real_ids + "?q=a%00b&state=a%00b", None), (with_real_ids, NUL_BODY)]
            if rule.arguments:
                attempts.append((with_nul_ids, None))
            for path, body in attempts:
                if body is not None and (method not in ("POST", "PATCH", "PUT") or rule.endpoint in BODYLESS):
                    continue
                response = fuzz_client.open(path, method=method, json=body, buffered=False)
                status = response.status_code
                response.close()
                assert 400 <= status < 500 and response.is_json, (method, path, body, status)
                swept.append(f"{method} {rule.rule}")
    assert {"GET /threads/<thread_id>/exchanges", "GET /chat/<request_id>/events", "POST /reminders",
            "PATCH /reminders/<row_id:item_id>", "POST /chat", "GET /events"} <= set(swept)
    assert (_snapshot(db_engine), _threads(db_engine), real_redis.llen(f"rq:queue:{PROMPT_QUEUE}")) == before
