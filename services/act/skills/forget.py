"""The ``forget`` skill: remove what the person asks to forget — always after the person confirms.

One request reaches every place the memory lives: the matching facts, the episodes that tell it
(title, gist, summary) and the earlier exchanges that said it (the person's words or the reply).
The critic runs ``preview`` first, which resolves the request to exact ids of each kind and shows
them; only those ids are stored with the pending action, so "yes" deletes exactly what was shown.

Deleting an exchange cascades to its memory chunk, routing decision and access count (FKs with
ON DELETE CASCADE in migrations 0001 and 0003). Facts and episodes whose ``*exchange_ids`` point at
a deleted exchange stay unless they match themselves: they are plain id arrays, not foreign keys.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, delete, func, or_, select

from services.act.skills.base import Arguments, Result, Skill, SkillContext, SkillError
from services.act.text import content_words, grounding, stem, words
from services.db import Exchange
from services.memory.facts import forget_fact, list_facts
from services.memory.models import Episode, Fact

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
    """Each kind's rows that contain at least one of the query's words (the SQL pre-filter)."""
    patterns = _patterns(query)
    facts = [Match(fact.id, fact.text, _cut(fact.text)) for fact in list_facts(ctx.session, ctx.user_id)]
    episode_text = func.concat_ws(" ", Episode.title, Episode.gist, Episode.summary)
    episodes = ctx.session.execute(
        select(Episode.id, Episode.title, Episode.gist, Episode.summary)
        .where(Episode.user_id == ctx.user_id, _any_word(episode_text, patterns))
        .order_by(Episode.id.desc()).limit(SCAN_LIMIT)
    ).all()
    exchange_text = func.concat_ws(" ", Exchange.user_text, Exchange.reply)
    exchanges = ctx.session.execute(
        select(Exchange.id, Exchange.user_text, Exchange.reply)
        .where(Exchange.user_id == ctx.user_id, Exchange.request_id != ctx.request_id,
               _any_word(exchange_text, patterns))
        .order_by(Exchange.id.desc()).limit(SCAN_LIMIT)
    ).all()
    return {"facts": facts,
            "episodes": [_episode(row.id, row.title, row.gist, row.summary) for row in episodes],
            "exchanges": [_exchange(row.id, row.user_text, row.reply) for row in exchanges]}


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


def _episode(episode_id: int, title: str, gist: str | None, summary: str | None) -> Match:
    text = " ".join(part for part in (title, gist, summary) if part)
    return Match(episode_id, text, _cut(f"{title}: {gist}" if gist else title))


def _exchange(exchange_id: int, user_text: str, reply: str | None) -> Match:
    return Match(exchange_id, f"{user_text}\n{reply or ''}", _cut(user_text or reply or ""))


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
    if kind == "facts":
        facts = ctx.session.scalars(select(Fact).where(Fact.user_id == ctx.user_id, Fact.id.in_(ids)))
        return [Match(fact.id, fact.text, _cut(fact.text)) for fact in facts]
    if kind == "episodes":
        rows = ctx.session.execute(select(Episode.id, Episode.title, Episode.gist, Episode.summary)
                                   .where(Episode.user_id == ctx.user_id, Episode.id.in_(ids)))
        return [_episode(row.id, row.title, row.gist, row.summary) for row in rows]
    rows = ctx.session.execute(select(Exchange.id, Exchange.user_text, Exchange.reply)
                               .where(Exchange.user_id == ctx.user_id, Exchange.id.in_(ids),
                                      Exchange.request_id != ctx.request_id))
    return [_exchange(row.id, row.user_text, row.reply) for row in rows]


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
        # Never this turn's own exchange (it is stored after the skills run, but a retried turn may find it).
        ctx.session.execute(delete(Exchange).where(Exchange.user_id == ctx.user_id,
                                                   Exchange.request_id != ctx.request_id,
                                                   Exchange.id.in_([match.id for match in found["exchanges"]])))
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


def _cut(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS - 1] + "…"


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
