"""Context assembly: what the assistant remembers that bears on a message, as text for a mode prompt.

The person's autobiography first (written by the periodic service), then relevant facts (plus the
few most salient ones, whatever the message), episodes, the recalled turns (each with its date and
speaker, most relevant first), and the drift thoughts lately pushed to the person, within a token
budget. Nothing relevant → "".
Working memory (the thread's recent turns) is rendered by the caller as history; pass its
exchange ids as ``exclude_exchange_ids`` so nothing is shown twice.

With ``beside``, the personal read (narrative, profile facts, shared thoughts: it does not depend on
the message) runs on a connection of its own while recall runs, instead of after it, when the pool has
one to spare (``sidearms``): the digest's wait for it overlaps recall's.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from sqlalchemy import Row
from sqlalchemy import text as sql_text
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session

from services.embeddings import Embedder
from services.memory import answer_form, notes, sidearms
from services.memory.config import MemoryConfig
from services.memory.from_words import asks
from services.memory.notes import Budget, about_plans, compact_notes, note_episode, note_fact, note_said, short
from services.memory.recall import RecallHit, recall
from services.memory.refusals import SQL_PATTERN, refused_things
from services.memory.second_person import own_words_to_you


@dataclass
class AssembledContext:
    text: str
    hits: list[RecallHit] = field(default_factory=list)
    confidence: float = 0.0  # best relevance among what was included, 0–1 (the router's memory_confidence)
    receipts: list[dict[str, Any]] = field(default_factory=list)  # what went into ``text``, for the person
    refused: frozenset[str] = frozenset()  # what the person never wants offered (refusals.py; the reply guard's)
    answer_in: str = ""  # the language the person asked to be answered in (compact only; answer_form.py)
    clock24: bool = False  # the person asked for times on the 24-hour clock (answer_form.py; the reply guard's)
    # Compact only, ``text`` split in two: what is known whatever the message, and what recall found for it.
    about: str = ""
    note: str = ""


def assemble(session: Session, embedder: Embedder | None, user_id: str, query_text: str, *,
             query_embedding: np.ndarray | None = None, budget_tokens: int | None = None,
             exclude_exchange_ids: Iterable[int] = (), config: MemoryConfig | None = None,
             now: dt.datetime | None = None, beside: bool = False, compact: bool = False,
             shown_exchange_ids: Iterable[int] = (), note_tokens: int | None = None,
             known_at: dt.datetime | None = None) -> AssembledContext:
    """The "What you remember" context for the mode prompts (``text``; "" when nothing relevant is remembered),
    with the hits used and a confidence for the router.

    ``beside``: run the personal read on its own pooled connection during recall (see the module doc).
    ``compact``: the small-model shape (``compact_split``): ``about`` within ``budget_tokens``, ``note``
    within ``note_tokens`` (default: the same budget); recall's facts told in the exchanges
    ``shown_exchange_ids`` (the history the prompt shows) are left out.
    ``known_at``: the person's facts as they stood then (the thread's start), not now: the small model's block
    about the person then stays the same for the whole thread (what was told since is in the history or the
    note), and llama.cpp reads it once. What the reply guard holds the reply to is read as it stands now: a
    refusal told since counts in ``refused`` (not in the block), as does how they want answers.
    """
    cfg = config or MemoryConfig()
    if not compact:  # only the small-model notes show reminders and lists: the full shape reads none
        cfg = replace(cfg, context=replace(cfg.context, reminders=0, lists=0))
    ctx = cfg.context
    shown_ids = frozenset(shown_exchange_ids) if compact else frozenset()
    k = ctx.max_facts + ctx.max_episodes + ctx.max_exchanges
    early = _read_personal_aside(session, user_id, cfg, now, known_at) if beside else None
    hits = recall(session, embedder, user_id, query_text, k=k, query_embedding=query_embedding, config=cfg,
                  now=now, exclude_exchange_ids=exclude_exchange_ids)
    relevant = [hit for hit in hits if hit.signals.get("relevance", 0.0) >= ctx.min_relevance]
    if shown_ids:
        relevant = [hit for hit in relevant if hit.kind != "fact" or shown_ids.isdisjoint(hit.exchange_ids)]
    facts = [hit for hit in relevant if hit.kind == "fact"][: ctx.max_facts]
    # The compact block about the person must not depend on the message: recall's facts leave it as it is.
    shown = set() if compact else {hit.id for hit in facts}
    rows = early.result() if early is not None else _personal_rows(session, user_id, len(shown), cfg, now,
                                                                     known_at)
    personal = _personal(rows, shown, cfg)
    profile = personal.profile
    if compact:
        known = {fact.id for fact in profile + personal.refusals}
        again = {hit.id for hit in facts[: ctx.known_again]} if asks(query_text) else set()
        facts = [hit for hit in facts if hit.id not in known or hit.id in again]
    episodes = [hit for hit in relevant if hit.kind == "episode"][: ctx.max_episodes]
    exchanges = [hit for hit in relevant if hit.kind == "exchange"][: ctx.max_exchanges]
    budget = budget_tokens or ctx.budget_tokens
    note_budget = budget if note_tokens is None else note_tokens
    about, note = compact_split(personal, facts, episodes, exchanges, Budget(int(budget * ctx.chars_per_token)),
                                Budget(int(note_budget * ctx.chars_per_token)), query_text) if compact else ("", "")
    text = "\n".join(part for part in (about, note) if part) if compact else render(
        personal, facts, episodes, exchanges, cfg, budget)
    used = facts + episodes + exchanges
    confidence = max((hit.signals.get("relevance", 0.0) for hit in used), default=0.0)
    lines = COMPACT_LINES if compact else FULL_LINES
    # Every reply is checked against what the person refused (the reply guard, services/llm/guard.py), including
    # what they refused since ``known_at``.
    standing = [*facts, *profile, *personal.refusals]
    refused = frozenset(thing for fact in [*standing, *personal.refused_since] for thing in refused_things(fact.text))
    told = [*standing, *personal.answer_form]  # how they want answers: the newest fact saying so decides
    return AssembledContext(text=text, hits=used, confidence=round(confidence, 4) if text else 0.0,
                            receipts=receipts(text, facts, profile, episodes, exchanges, lines), refused=refused,
                            answer_in=answer_form.answer_language(told) if compact else "",
                            clock24=answer_form.clock_wanted(told), about=about, note=note)


def render(personal: Personal, facts: list[RecallHit], episodes: list[RecallHit], exchanges: list[RecallHit],
           cfg: MemoryConfig, budget_tokens: int, *, compact: bool = False) -> str:
    """The block's text: each part in its order, while the budget (in tokens, ~chars_per_token each) lasts.

    ``compact``: both parts of the small model's notes, each within the budget.
    """
    budget = Budget(int(budget_tokens * cfg.context.chars_per_token))
    if compact:
        about, note = compact_split(personal, facts, episodes, exchanges, budget,
                                    Budget(int(budget_tokens * cfg.context.chars_per_token)))
        return "\n".join(part for part in (about, note) if part)
    sections = [
        _narrative(personal.narrative, cfg, budget),
        _section("Facts the person told you:", [_fact_line(hit.text, hit.at) for hit in facts]
                 + [_fact_line(fact.text, fact.at) for fact in personal.profile + personal.refusals], budget),
        _section("Earlier conversations:", [_episode_line(hit) for hit in episodes], budget),
        _section("Things said before:", [_exchange_block(hit) for hit in exchanges], budget),
        _thoughts(personal.thoughts, budget),
    ]
    return "\n\n".join(section for section in sections if section)


def compact_split(personal: Personal, facts: list[RecallHit], episodes: list[RecallHit],
                  exchanges: list[RecallHit], about_budget: Budget, note_budget: Budget,
                  message: str | None = None) -> tuple[str, str]:
    """The small-model shape in two parts: what is known about the person whatever the message (their newest
    facts, what they refuse), and this message's own note (what is set for later, what recall found for it).

    The first part goes in the system prompt and stays the same from one turn of a thread to the next, so
    llama.cpp does not read it again; the second is short and comes just before the message. Reminders and
    lists are in the second: they change with every list or reminder command, and a block that changed
    made the next reply read the whole prompt again (~700 tokens, 10-14 s for the 1.5B on these 2 cores).
    With a ``message``, they are shown only when it may be about them (``notes.about_plans``), and a message asking
    for an idea gets the facts of what the person likes and avoids in its note too (``notes.asks_for_ideas``).
    """
    known = [(fact.at, note_fact(fact.text, fact.at)) for fact in personal.profile + personal.refusals]
    # What is set for later (the next reminders, the lists) is kept first and shown last.
    pending = [f"- reminder for {own_words_to_you(item.text.rstrip('.'))}." for item in personal.reminders]
    pending += [f"- your {own_words_to_you(item.text.rstrip('.'))}." for item in personal.lists]
    found = [(hit.at, note_fact(hit.text, hit.at)) for hit in facts]
    found += [(hit.at, note_episode(hit)) for hit in episodes]
    found += [(hit.at, note_said(hit)) for hit in exchanges]
    if message is not None and notes.asks_for_ideas(message):  # what they like and avoid, again, just before it
        found = [(fact.at, note_fact(fact.text, fact.at)) for fact in personal.profile + personal.refusals
                 if notes.tells_taste(fact.text)] + found
    if message is not None and not about_plans(message, pending):
        pending = []
    return compact_notes(known, [], about_budget), compact_notes(found, pending, note_budget)


@dataclass(frozen=True)
class Lines:
    """How one kind of item reads in the block (receipts look for the same line in the text)."""

    fact: Callable[[str, dt.datetime | None], str]
    episode: Callable[[RecallHit], str]
    exchange: Callable[[RecallHit], str]


def receipts(text: str, facts: list[RecallHit], profile: list[Remembered], episodes: list[RecallHit],
             exchanges: list[RecallHit], lines: Lines | None = None) -> list[dict[str, Any]]:
    """One small record per remembered item whose line made it into ``text`` (the budget may drop some)."""
    lines = lines or FULL_LINES
    kept: list[dict[str, Any]] = []
    for hit in facts:
        if lines.fact(hit.text, hit.at) in text:
            kept.append(_receipt("fact", hit.id, hit.text, hit.signals.get("relevance")))
    for fact in profile:
        if lines.fact(fact.text, fact.at) in text:
            kept.append(_receipt("fact", fact.id, fact.text, None))
    for hit in episodes:
        if lines.episode(hit) in text:
            kept.append(_receipt("episode", hit.id, hit.text, hit.signals.get("relevance")))
    for hit in exchanges:
        line = lines.exchange(hit)
        if line and line in text:
            receipt = _receipt("exchange", hit.id, hit.meta.get("user_text") or hit.text, hit.signals.get("relevance"))
            receipt["thread_id"] = hit.meta.get("thread_id")
            kept.append(receipt)
    return kept


def _receipt(kind: str, item_id: int, text: str, relevance: float | None) -> dict[str, Any]:
    return {"kind": kind, "id": int(item_id), "text": short(text, 160),
            "relevance": round(float(relevance), 4) if relevance is not None else None}


def _section(title: str, lines: list[str], budget: Budget) -> str:
    if not lines or not budget.take(title):
        return ""
    kept = [line for line in lines if budget.take(line)]
    return "\n".join([title, *kept]) if kept else ""


@dataclass(frozen=True)
class Remembered:
    """A profile fact or a shared thought as the context shows it."""

    id: int
    text: str
    at: dt.datetime | None


@dataclass
class Personal:
    """What context assembly shows of the person whatever the message: the narrative, the most salient
    facts, the thoughts lately shared with them."""

    narrative: str | None = None
    profile: list[Remembered] = field(default_factory=list)
    thoughts: list[Remembered] = field(default_factory=list)
    reminders: list[Remembered] = field(default_factory=list)  # text "<when, their time>: <what>"
    lists: list[Remembered] = field(default_factory=list)  # text "<name>: <open items>"
    refusals: list[Remembered] = field(default_factory=list)  # facts that may say what the person refuses
    refused_since: list[Remembered] = field(default_factory=list)  # the same, told since ``known_at`` (guard only)
    answer_form: list[Remembered] = field(default_factory=list)  # how they want answers ("in English", "24 hour")


def _read_personal_aside(session: Session, user_id: str, cfg: MemoryConfig, now: dt.datetime | None,
                         known_at: dt.datetime | None) -> Future[Sequence[Row[Any]]] | None:
    """The personal read started beside the turn with a connection of its own (autocommit: it reads committed
    rows, as the turn's transaction would, and needs no BEGIN or ROLLBACK); None without a spare connection."""
    engine = sidearms.side_engine(session, own_only=False)
    if engine is None:
        return None
    spare = cfg.context.max_facts  # recall's facts are not known yet: read enough to drop any it shows

    def read() -> Sequence[Row[Any]]:
        with engine.connect() as connection:
            return _personal_rows(connection.execution_options(isolation_level="AUTOCOMMIT"), user_id, spare, cfg,
                                  now, known_at)

    return sidearms.side_pool().submit(read)


def _personal_rows(session: Session | Connection, user_id: str, spare: int, cfg: MemoryConfig,
                   now: dt.datetime | None, known_at: dt.datetime | None) -> Sequence[Row[Any]]:
    """The narrative, the profile facts (``spare`` more than shown, for those recall shows already; as they
    stood at ``known_at`` when given) and the shared thoughts, in one statement.

    Three reads on every chat turn were three round trips through the ORM; as one fixed statement
    (``PERSONAL``) they are one round trip, plain rows and no statement to build per turn.
    """
    ctx = cfg.context
    since = (now or dt.datetime.now(dt.UTC)) - dt.timedelta(days=ctx.shared_thoughts_days)
    return session.execute(PERSONAL, {
        "user": user_id, "stories": 1 if ctx.narrative_chars >= 1 else 0,
        "facts": ctx.profile_facts + spare if ctx.profile_facts >= 1 else 0,
        "min_salience": ctx.profile_min_salience, "thoughts": max(0, ctx.shared_thoughts), "since": since,
        "reminders": max(0, ctx.reminders), "lists": max(0, ctx.lists), "now": now or dt.datetime.now(dt.UTC),
        "refusals": max(0, ctx.refusals), "refusing": SQL_PATTERN, "known_at": known_at,
        "answer_forms": max(0, ctx.answer_form), "answering": answer_form.SQL_PATTERN,
    }).all()


# Which list of ``Personal`` a row of each kind goes to (facts and refusals only when recall does not show them).
_PART_OF = {"fact": "profile", "thought": "thoughts", "reminder": "reminders", "list": "lists", "refusal": "refusals",
            "answer_form": "answer_form", "refused_since": "refused_since"}


def _personal(rows: Sequence[Row[Any]], shown: set[int], cfg: MemoryConfig) -> Personal:
    """The personal rows as the context shows them: profile facts besides the ``shown`` ones."""
    ctx = cfg.context
    personal = Personal()
    for kind, item_id, text, at, _rank in sorted(rows, key=lambda row: row[4]):
        if kind == "narrative":
            personal.narrative = text
        elif kind in _PART_OF and not (kind in ("fact", "refusal") and item_id in shown):
            getattr(personal, _PART_OF[kind]).append(Remembered(int(item_id), text, at))
    personal.profile = personal.profile[: max(0, ctx.profile_facts)]
    profiled = {fact.id for fact in personal.profile}
    personal.refusals = [fact for fact in personal.refusals if fact.id not in profiled]
    return personal


# Each part keeps its own order and limit (a limit of 0 turns a part off); ``rank`` orders the rows within a kind.
# A fact standing now, or at :known_at when given (told by then, not yet superseded then).
STANDING = ("CASE WHEN CAST(:known_at AS timestamptz) IS NULL THEN superseded_at IS NULL "
            "ELSE created_at <= CAST(:known_at AS timestamptz) "
            "AND (superseded_at IS NULL OR superseded_at > CAST(:known_at AS timestamptz)) END")
# ... but a refusal ended since (taken back: "actually I eat fish again now") is shown and held no more at once, not
# from the next thread on (the guard wrote fish away from a reply the person had just allowed it in).
TAKEN_BACK = "(superseded_at IS NOT NULL AND text ~* :refusing)"
PERSONAL = sql_text(f"""
(SELECT 'narrative' AS kind, id, narrative AS text, created_at AS at, 1::bigint AS rank FROM autobiographies
 WHERE user_id = :user ORDER BY created_at DESC, id DESC LIMIT :stories)
UNION ALL
(SELECT 'fact', id, text, updated_at,
        row_number() OVER (ORDER BY salience DESC, confidence DESC, updated_at DESC) FROM facts
 WHERE user_id = :user AND salience >= :min_salience AND {STANDING} AND NOT {TAKEN_BACK}
 ORDER BY salience DESC, confidence DESC, updated_at DESC LIMIT :facts)
UNION ALL
(SELECT 'thought', id, text, created_at, row_number() OVER (ORDER BY created_at DESC) FROM drift_gists
 WHERE user_id = :user AND pushed_event_id IS NOT NULL AND created_at >= :since
 ORDER BY created_at DESC LIMIT :thoughts)
UNION ALL
(SELECT 'reminder', id, to_char(due_at AT TIME ZONE timezone, 'FMDay FMDD FMMonth YYYY "at" HH24:MI') || ': ' || text,
        due_at, row_number() OVER (ORDER BY due_at) FROM scheduled_items
 WHERE user_id = :user AND kind = 'reminder' AND status = 'active' AND due_at >= :now
 ORDER BY due_at LIMIT :reminders)
UNION ALL
(SELECT 'list', l.id, l.name || ' list: ' || string_agg(i.text, ', ' ORDER BY i.position, i.id), l.updated_at,
        row_number() OVER (ORDER BY l.updated_at DESC) FROM lists l JOIN list_items i ON i.list_id = l.id
 WHERE l.user_id = :user AND NOT i.checked GROUP BY l.id ORDER BY l.updated_at DESC LIMIT :lists)
UNION ALL
(SELECT 'refusal', id, text, updated_at, row_number() OVER (ORDER BY updated_at DESC) FROM facts
 WHERE user_id = :user AND text ~* :refusing AND {STANDING} AND NOT {TAKEN_BACK}
 ORDER BY updated_at DESC LIMIT :refusals)
UNION ALL
-- Refusals told since :known_at (earlier in the thread): not in the block, which stays as it was, but the reply guard
-- holds the reply to them from the next turn on (once the chunker has stored them).
(SELECT 'refused_since', id, text, updated_at, row_number() OVER (ORDER BY updated_at DESC) FROM facts
 WHERE user_id = :user AND text ~* :refusing AND superseded_at IS NULL
   AND created_at > CAST(:known_at AS timestamptz) ORDER BY updated_at DESC LIMIT :refusals)
UNION ALL
-- How the person wants answers (a language, the 24-hour clock), as they want it now: known_at keeps a prompt the same,
-- but no prompt shows these (a reply's instruction and its guard do).
(SELECT 'answer_form', id, text, updated_at, row_number() OVER (ORDER BY updated_at DESC) FROM facts
 WHERE user_id = :user AND text ~* :answering AND superseded_at IS NULL ORDER BY updated_at DESC LIMIT :answer_forms)
""")


def _narrative(narrative: str | None, cfg: MemoryConfig, budget: Budget) -> str:
    """The person's story as you last wrote it (autobiography service), shortened to its share."""
    if narrative is None or not narrative.strip():
        return ""
    return _section("Who the person is (your own running summary):",
                    [short(narrative, cfg.context.narrative_chars)], budget)


def _thoughts(thoughts: list[Remembered], budget: Budget) -> str:
    """Thoughts pushed to the person lately: they may be answering one."""
    lines = [f"- {_day(gist.at)}: {short(gist.text)}" for gist in thoughts]
    return _section("Thoughts you shared with them between conversations:", lines, budget)


def _day(value: dt.datetime | None) -> str:
    return value.date().isoformat() if value else "date unknown"


def _fact_line(text: str, at: dt.datetime | None) -> str:
    return f"- {short(text)} (as of {_day(at)})"


def _episode_line(hit: RecallHit) -> str:
    meta = hit.meta
    parts = [f"- {_day(hit.at)}: {short(hit.text)}"]
    if meta.get("outcome"):
        parts.append(f"Outcome: {short(meta['outcome'], 160)}.")
    if meta.get("open_loops"):
        parts.append("Still open: " + short("; ".join(meta["open_loops"]), 160) + ".")
    return " ".join(parts)


def _turn(at: dt.datetime | None, user_text: str, reply: str) -> str:
    said = f"User: {short(user_text)}" if user_text.strip() else ""
    answered = f"You: {short(reply)}" if reply.strip() else ""
    return f"- [{_day(at)}] " + " / ".join(part for part in (said, answered) if part)


def _line(line: dict) -> str:
    """One recalled turn with its date and who said it (the person is "User", the assistant "You")."""
    speaker = {"user": "User", "assistant": "You"}.get(line["speaker"], line["speaker"])
    return f"- [{_day(line.get('at'))}] {speaker}: {short(line['text'])}"


def _exchange_block(hit: RecallHit) -> str:
    """The recalled turns in time order (the answering turn with the one it replies to)."""
    if hit.lines:
        return "\n".join(_line(line) for line in hit.lines)
    return _turn(hit.at, hit.meta.get("user_text", hit.text) or "", hit.meta.get("reply", "") or "")


FULL_LINES = Lines(_fact_line, _episode_line, _exchange_block)
COMPACT_LINES = Lines(note_fact, note_episode, note_said)
