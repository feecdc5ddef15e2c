"""Memory REST: list, search, edit and delete facts and episodes, export, delete everything.

Every route is scoped to ``current_user()`` in SQL; another user's id answers 404 exactly like
a missing one. The web process loads no embedding model (DESIGN §1), so search here is
full-text only (the same IDF-weighted ranking recall uses, without the vector arm), and an
edited text gets its embedding from a job on the chunker queue. A corrected fact supersedes
the old one, which stays in history.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, current_app, jsonify, request
from flask.blueprints import BlueprintSetupState
from werkzeug.exceptions import Conflict

from api.args import MAX_PAGE, bounds, found, int_arg, json_body, page_args, sessions
from api.auth import current_user, enforce_rate_limit
from services.bundle import export_bundle
from services.errors import BadRequest, NotFound
from services.memory import episodes as episode_store
from services.memory import facts as fact_store
from services.memory.chunks import unit_interval
from services.memory.config import load_memory_config
from services.memory.edits import enqueue_embedding
from services.memory.forget import forget_user
from services.memory.recall import recall

bp = Blueprint("memory", __name__, url_prefix="/memory")

MAX_HISTORY = 50


@bp.record_once
def _load_config(state: BlueprintSetupState) -> None:
    # Read memory.toml once per app, at registration: a bad file fails start-up, not every search.
    settings = state.app.extensions["engram"].settings
    state.app.extensions["engram.memory_config"] = load_memory_config(settings.configs_dir)


@bp.before_request
def _rate_limit() -> None:
    enforce_rate_limit("memory")


def _query() -> str:
    """The ?q= text, stripped; bounded so a search never carries an unbounded string into SQL."""
    query = request.args.get("q", "").strip()
    if len(query) > bounds().max_query_chars:
        raise BadRequest(f"'q' is longer than {bounds().max_query_chars} characters")
    return query


def _deps() -> Any:
    return current_app.extensions["engram"]


def _search(query: str, kinds: tuple[str, ...], k: int) -> list[dict[str, Any]]:
    config = current_app.extensions["engram.memory_config"]
    with sessions()() as session:
        hits = recall(session, None, current_user(), query, k=k, kinds=kinds, config=config, reinforce=False)
    return [hit.to_dict() for hit in hits]


@bp.get("/facts")
def list_facts() -> Response:
    """?q= searches; ?include_superseded=1 adds history; ?limit=&offset= page."""
    limit, offset = page_args(50, MAX_PAGE)
    if query := _query():
        return jsonify({"facts": _search(query, ("fact",), limit)})
    history = request.args.get("include_superseded", "").lower() in ("1", "true", "yes")
    with sessions()() as session:
        rows = fact_store.list_facts(session, current_user(), history, limit=limit, offset=offset)
        return jsonify({"facts": [fact_store.fact_to_dict(fact) for fact in rows]})


def _fact(session: Any, fact_id: int) -> Any:
    return found(fact_store.get_fact(session, current_user(), fact_id), f"fact {fact_id}")


@bp.get("/facts/<row_id:fact_id>")
def get_fact(fact_id: int) -> Response:
    with sessions()() as session:
        return jsonify(fact_store.fact_to_dict(_fact(session, fact_id)))


@bp.get("/facts/<row_id:fact_id>/history")
def fact_history(fact_id: int) -> Response:
    """Every version of this fact, oldest first: the ones it replaced and the ones that replaced it."""
    with sessions()() as session:
        fact = _fact(session, fact_id)
        versions = [fact]
        seen = {fact.id}
        while len(versions) < MAX_HISTORY:  # older versions point at their successor
            older = fact_store.replaced_version(session, current_user(), versions[0].id)
            if older is None or older.id in seen:
                break
            versions.insert(0, older)
            seen.add(older.id)
        while versions[-1].superseded_by is not None and len(versions) < MAX_HISTORY:
            newer = fact_store.get_fact(session, current_user(), versions[-1].superseded_by)
            if newer is None or newer.id in seen:
                break
            versions.append(newer)
            seen.add(newer.id)
        return jsonify({"fact_id": fact_id, "versions": [fact_store.fact_to_dict(v) for v in versions]})


@bp.patch("/facts/<row_id:fact_id>")
def edit_fact(fact_id: int) -> Response:
    """{"text"?, "salience"?, "confidence"?}: a new text supersedes the fact (history kept)."""
    body = json_body()
    unknown = sorted(set(body) - {"text", "salience", "confidence"})
    if unknown:
        raise BadRequest(f"unknown or read-only field(s): {', '.join(unknown)}")
    scores = {name: _unit(body[name], name) for name in ("salience", "confidence") if name in body}
    if "text" in body and (not isinstance(body["text"], str) or not body["text"].strip()):
        raise BadRequest("'text' must be a non-empty string")
    new_id = None
    with sessions().begin() as session:
        fact = _fact(session, fact_id)
        corrected = "text" in body and body["text"].strip() != fact.text
        if corrected and fact.superseded_at is not None:
            # The old version is history: a second correction of it would leave two active facts.
            raise Conflict(str(fact_store.FactSuperseded(fact_id, fact.superseded_by)))
        for name, value in scores.items():
            setattr(fact, name, value)
        if corrected:
            fact = _correct(session, fact_id, body["text"], scores.get("confidence", 1.0))
            new_id = fact.id
        result = fact_store.fact_to_dict(fact)
    if new_id is not None:
        enqueue_embedding(_deps().redis, "fact", new_id, current_user())
    return jsonify(result)


def _correct(session: Any, fact_id: int, text: str, confidence: float) -> Any:
    try:
        return fact_store.correct_fact(session, current_user(), fact_id, text,
                                       current_app.extensions["engram.memory_config"].facts, confidence=confidence)
    except fact_store.FactSuperseded as exc:  # superseded by a concurrent edit since it was read
        raise Conflict(str(exc)) from None


def _unit(value: Any, name: str) -> float:
    try:
        return unit_interval(value, f"'{name}'")
    except ValueError as exc:
        raise BadRequest(str(exc)) from None


@bp.delete("/facts/<row_id:fact_id>")
def delete_fact(fact_id: int) -> Response:
    with sessions().begin() as session:
        if not fact_store.forget_fact(session, current_user(), fact_id):
            raise NotFound(f"fact {fact_id} not found")
    return jsonify({"deleted": fact_id})


@bp.get("/episodes")
def list_episodes() -> Response:
    limit, offset = page_args(50, MAX_PAGE)
    if query := _query():
        return jsonify({"episodes": _search(query, ("episode",), limit)})
    with sessions()() as session:
        rows = episode_store.list_episodes(session, current_user(), limit=limit, offset=offset)
        return jsonify({"episodes": [episode_store.episode_to_dict(e) for e in rows]})


def _episode(session: Any, episode_id: int) -> Any:
    return found(episode_store.get_episode(session, current_user(), episode_id), f"episode {episode_id}")


@bp.get("/episodes/<row_id:episode_id>")
def get_episode(episode_id: int) -> Response:
    with sessions()() as session:
        return jsonify(episode_store.episode_to_dict(_episode(session, episode_id)))


@bp.patch("/episodes/<row_id:episode_id>")
def edit_episode(episode_id: int) -> Response:
    body = json_body()
    with sessions().begin() as session:
        episode = _episode(session, episode_id)
        try:
            reembed = episode_store.update_episode(episode, body)
        except ValueError as exc:
            raise BadRequest(str(exc)) from None
        session.flush()
        result = episode_store.episode_to_dict(episode)
    if reembed:
        enqueue_embedding(_deps().redis, "episode", episode_id, current_user())
    return jsonify(result)


@bp.delete("/episodes/<row_id:episode_id>")
def delete_episode(episode_id: int) -> Response:
    with sessions().begin() as session:
        if not episode_store.delete_episode(session, current_user(), episode_id):
            raise NotFound(f"episode {episode_id} not found")
    return jsonify({"deleted": episode_id})


@bp.get("/search")
def search() -> Response:
    """Full-text search over facts, episodes and exchanges (?q=, ?k=, ?kinds=fact,episode,exchange)."""
    query = _query()
    if not query:
        raise BadRequest("'q' is required")
    kinds = tuple(k for k in request.args.get("kinds", "fact,episode,exchange")[:100].split(",") if k)
    if not kinds or set(kinds) - {"fact", "episode", "exchange"}:
        raise BadRequest("'kinds' is a comma-separated subset of fact, episode, exchange")
    return jsonify({"query": query, "results": _search(query, kinds, int(int_arg("k", 10, 1, 100)))})


@bp.get("/export")
def export() -> Response:
    """Everything the user has, as the bundle ``engram import`` accepts."""
    with sessions()() as session:
        bundle = export_bundle(session, current_user())
    response = jsonify(bundle)
    response.headers["Content-Disposition"] = f'attachment; filename="engram-{bundle["user_id"]}.json"'
    return response


@bp.delete("")
def delete_all() -> Response:
    """Purge every store of this user; needs ``?confirm=true`` (or ``{"confirm": true}``)."""
    confirmed = request.args.get("confirm", "").lower() == "true"
    if not confirmed and request.mimetype == "application/json":
        confirmed = json_body().get("confirm") is True
    if not confirmed:
        raise BadRequest("deleting all memory needs confirm=true")
    report = forget_user(sessions(), _deps().redis, current_user())
    return jsonify(report.to_dict())
