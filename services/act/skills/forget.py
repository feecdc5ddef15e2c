"""The ``forget`` skill: remove what the person asks to forget — always after the person confirms.

One request reaches every place the memory lives: the matching facts, the episodes that tell it
(title, gist, summary) and the earlier exchanges that said it (the person's words or the reply).
The critic runs ``preview`` first, which resolves the request to exact ids of each kind and shows
them; only those ids are stored with the pending action, so "yes" deletes exactly what was shown.

Deleting an exchange cascades to its memory chunk, routing decision and access count (FKs with
ON DELETE CASCADE in migrations 0001 and 0003), and to its turns; the words only those turns said leave the
person's vocabulary (``vocabulary.prune``). Facts and episodes whose ``*exchange_ids`` point at
a deleted exchange stay unless they match themselves: they are plain id arrays, not foreign keys.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, Select, delete, func, or_, select

from services.act.skills.base import Arguments, Result, Skill, SkillContext, SkillError
from services.db import Exchange
from services.memory import vocabulary
from services.memory.facts import forget_fact
from services.memory.models import Episode, Fact
from services.text import content_words, grounding, stem, truncate, words

MAX_MATCHES = 5  # per kind
MIN_GROUNDING = 0.5
# Newest rows scanned per kind after the SQL pre-filter; bounds the work of a vague query on a long history.
SCAN_LIMIT = 2000
SHOWN_CHARS = 100
KINDS = ("facts", "episodes", "exchanges")
ID_FIELDS = {"facts": "fact_ids", "episodes": "episode_ids", "exchanges": "exchange_ids"}
LABELS = {"facts": "fact", "episodes": "episode", "exchanges": "earlier message"}
# Words of the request, not of the memory: "forget that I live in Paris" must not favour the earlier
# messages that also asked to forget over the ones that said "I live in Paris".
REQUEST_WORDS = frozenset({"forget", "unlearn", "erase", "delete", "remove", "purge", "wipe"})
_ALNUM_RE = re.compile(r"[a-z0-9]+")


def _ids(what: str) -> dict[str, Any]:
    return {"type": "array", "items": {"type": "integer", "minimum": 1}, "minItems": 1, "maxItems": 20,
            "description": f"exact ids of {what} (from recall or a confirmation)"}


PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "minLength": 1, "maxLength": 300,
                  "description": "words of the memory to forget, e.g. 'my old address'"},
        "fact_ids": _ids("facts"),
        "episode_ids": _ids("episodes"),
        "exchange_ids": _ids("earlier exchanges"),
    },
    "additionalProperties": False,
}


@dataclass(frozen=True)
class Match:
    """One row to forget: its id, the text it is judged on, and the short text shown to the person."""

    id: int
    text: str
    shown: str


Matches = dict[str, list[Match]]


def resolve(ctx: SkillContext, args: Arguments) -> tuple[Matches, dict[str, int]]:
    """The facts, episodes and exchanges the request points at, and how many more matched past the cap.

    Raises ``SkillError`` when the request points at nothing (or at an id that is not this user's).
    """
    if any(args.get(field) for field in ID_FIELDS.values()):
        return _by_ids(ctx, args), {}
    query = " ".join(word for word in words(str(args.get("query") or "")) if stem(word) not in REQUEST_WORDS)
    # "forget that" has no words to match: every row would ground fully, so ask instead of guessing.
    if not content_words(query):
        raise SkillError("needs_info", "what should I forget?", missing="which memory to forget")
    best = {kind: best_matches(query, rows) for kind, rows in _candidates(ctx, query).items()}
    if not any(best.values()):
        raise SkillError("not_found", f"nothing in memory matches {args['query']!r}")
    more = {kind: len(rows) - MAX_MATCHES for kind, rows in best.items() if len(rows) > MAX_MATCHES}
    return {kind: rows[:MAX_MATCHES] for kind, rows in best.items()}, more


def best_matches(query: str, rows: list[Match]) -> list[Match]:
    """All rows sharing the best grounding of ``query`` (if at least ``MIN_GROUNDING``), in the order given."""
    scored = [(grounding(query, row.text), row) for row in rows]
    best = max((score for score, _ in scored), default=0.0)
    if best < MIN_GROUNDING:
        return []
    return [row for score, row in scored if score == best]


def _candidates(ctx: SkillContext, query: str) -> Matches:
    """Each kind's newest rows (up to ``SCAN_LIMIT``) containing at least one of the query's words (SQL pre-filter)."""
    patterns = _patterns(query)
    found: Matches = {}
    for kind in KINDS:
        statement, _, text = _select(ctx, kind)
        if kind == "facts":  # superseded versions are history, not what the person is asked about
            statement = statement.where(Fact.superseded_at.is_(None))
        found[kind] = _matches(ctx, kind, statement.where(_any_word(text, patterns)).limit(SCAN_LIMIT))
    return found


def _select(ctx: SkillContext, kind: str) -> tuple[Select[Any], ColumnElement[int], ColumnElement[str]]:
    """This user's rows of one kind, newest first; with the id column and the text the word filter searches.

    Never this turn's own exchange (it is stored after the skills run, but a retried turn may find it).
    """
    if kind == "facts":
        statement = (select(Fact.id, Fact.text).where(Fact.user_id == ctx.user_id)
                     .order_by(Fact.updated_at.desc(), Fact.id.desc()))
        return statement, Fact.id, Fact.text
    if kind == "episodes":
        statement = (select(Episode.id, Episode.title, Episode.gist, Episode.summary)
                     .where(Episode.user_id == ctx.user_id).order_by(Episode.id.desc()))
        return statement, Episode.id, func.concat_ws(" ", Episode.title, Episode.gist, Episode.summary)
    statement = (select(Exchange.id, Exchange.user_text, Exchange.reply)
                 .where(Exchange.user_id == ctx.user_id, Exchange.request_id != ctx.request_id)
                 .order_by(Exchange.id.desc()))
    return statement, Exchange.id, func.concat_ws(" ", Exchange.user_text, Exchange.reply)


def _matches(ctx: SkillContext, kind: str, statement: Select[Any]) -> list[Match]:
    """The rows of a ``_select`` statement (with the caller's filter) as matches."""
    return [_match(kind, row) for row in ctx.session.execute(statement)]


def _match(kind: str, row: Any) -> Match:
    if kind == "facts":
        return Match(row.id, row.text, _shown(row.text))
    if kind == "episodes":
        text = " ".join(part for part in (row.title, row.gist, row.summary) if part)
        return Match(row.id, text, _shown(f"{row.title}: {row.gist}" if row.gist else row.title))
    return Match(row.id, f"{row.user_text}\n{row.reply or ''}", _shown(row.user_text or row.reply or ""))


def _patterns(query: str) -> list[str]:
    """Substrings every word stemming to one of the query's content words contains ("cities" → "cit")."""
    patterns = set()
    for word in content_words(query):
        # stem() turns "ies" into "y", so the stem's final "y" need not be in the text.
        word = word[:-1] if word.endswith("y") and len(word) > 2 else word
        patterns.add(max(_ALNUM_RE.findall(word), key=len))
    return sorted(patterns)


def _any_word(column: ColumnElement[Any], patterns: list[str]) -> ColumnElement[bool]:
    # Patterns hold only [a-z0-9], so no LIKE wildcard needs escaping.
    return or_(*(column.ilike(f"%{pattern}%") for pattern in patterns))


def _by_ids(ctx: SkillContext, args: Arguments) -> Matches:
    """Exactly the ids given, all of this user's, or ``not_found`` naming the ones that are not."""
    found: Matches = {}
    unknown: dict[str, list[int]] = {}
    for kind in KINDS:
        wanted = list(dict.fromkeys(args.get(ID_FIELDS[kind]) or []))
        rows = {row.id: row for row in _rows_by_id(ctx, kind, wanted)} if wanted else {}
        found[kind] = [rows[row_id] for row_id in wanted if row_id in rows]
        if len(found[kind]) < len(wanted):
            unknown[ID_FIELDS[kind]] = [row_id for row_id in wanted if row_id not in rows]
    if unknown:
        raise SkillError("not_found", f"nothing to forget with {unknown}", unknown=unknown)
    return found


def _rows_by_id(ctx: SkillContext, kind: str, ids: list[int]) -> list[Match]:
    """This user's rows of one kind among ``ids`` (another user's id is treated as missing)."""
    statement, id_column, _ = _select(ctx, kind)
    return _matches(ctx, kind, statement.where(id_column.in_(ids)))


def preview(ctx: SkillContext, args: Arguments) -> Result:
    """Exact ids per kind to store with the pending action, and their short texts to show."""
    found, more = resolve(ctx, args)
    arguments = {ID_FIELDS[kind]: [match.id for match in found[kind]] for kind in KINDS if found[kind]}
    shown = {kind: [match.shown for match in found[kind]] for kind in KINDS}
    return {"arguments": arguments, **shown, **({"more": more} if more else {})}


def run(ctx: SkillContext, args: Arguments) -> Result:
    """Delete the matches: facts with the history they superseded, episodes, and earlier exchanges."""
    found, more = resolve(ctx, args)
    for match in found["facts"]:
        forget_fact(ctx.session, ctx.user_id, match.id)
    if found["episodes"]:
        ctx.session.execute(delete(Episode).where(Episode.user_id == ctx.user_id,
                                                  Episode.id.in_([match.id for match in found["episodes"]])))
    if found["exchanges"]:
        ids = [match.id for match in found["exchanges"]]
        said = vocabulary.words_of_exchanges(ctx.session, ctx.user_id, ids)
        # Never this turn's own exchange (it is stored after the skills run, but a retried turn may find it).
        ctx.session.execute(delete(Exchange).where(Exchange.user_id == ctx.user_id,
                                                   Exchange.request_id != ctx.request_id, Exchange.id.in_(ids)))
        # Their turns went with them (cascade); so do the words only they said, from the person's vocabulary.
        vocabulary.prune(ctx.session, ctx.user_id, said)
    ctx.session.flush()
    forgotten = {kind: [{"id": match.id, "text": match.shown} for match in found[kind]] for kind in KINDS}
    # Past the cap some matches stay; saying how many lets the reply offer to forget those too.
    return {"forgotten": forgotten, **({"more": more} if more else {})}


def describe(args: Arguments) -> str:
    """What will be forgotten, for the confirmation question."""
    shown = [f"{LABELS[kind]} \"{text}\"" for kind in KINDS for text in args.get(kind) or []]
    if not shown and args.get("query"):
        shown = [f"\"{args['query']}\""]
    if not shown:
        shown = [f"{kind} {args[ID_FIELDS[kind]]}" for kind in KINDS if args.get(ID_FIELDS[kind])]
    more = sum((args.get("more") or {}).values())
    return "forget " + "; ".join(shown) + (f" ({more} more matching would stay; ask again for those)" if more else "")


def _shown(text: str) -> str:
    return truncate(" ".join(text.split()), SHOWN_CHARS)


SKILL = Skill(
    name="forget",
    description="Remove a memory when the person asks you to forget it: the matching facts, the episodes that "
                "tell it and the earlier messages that said it (by words of the memory, or fact/episode/exchange "
                "ids from recall). The person is always asked to confirm first.",
    parameters=PARAMETERS,
    run=run,
    consequential=lambda args: True,
    destructive=lambda args: True,
    subject=lambda args: args.get("query", ""),
    describe=describe,
    preview=preview,
    always_confirm=True,
)
