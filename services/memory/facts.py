"""Semantic facts about the person: store with merge / supersede, list, forget.

A fact is keyed by its normalised subject and predicate ("user|live in"). A new fact with the
same key and a different object *supersedes* the old one (the old row stays, linked by
``superseded_by``), unless the predicate can hold several values ("likes", "has"). A new fact
that says the same thing as an active one (same key and object, or a near-identical
embedding) *merges* into it. Only facts the person stated are stored: anything attributed to
the assistant is rejected here and refused by a CHECK constraint in the database.

These functions run inside the caller's transaction (the digest's, for ACT skills): they
flush, never commit.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

import numpy as np
from sqlalchemy import delete, func, select, update
from sqlalchemy import text as sql_text
from sqlalchemy.orm import Session

from services.db import User, insert, utcnow
from services.embeddings import Embedder
from services.memory import changes
from services.memory.config import FactsConfig
from services.memory.job_titles import job_title, new_workplace
from services.memory.models import Fact, iso
from services.memory.search import prepare_vector_search
from services.memory.successor import successor
from services.text import lemma

logger = logging.getLogger(__name__)

SELF_WORDS = {"i", "me", "my", "mine", "myself", "user", "the user", "person", "the person", "you", "your"}
_SPACE = re.compile(r"\s+")
# "My sister's name is Priya", "my favourite colour is green", "now my day off is the Wednesday" (a change)
_MY_ATTR = re.compile(r"^(?:(?:so|and|but)\s+)?(?:now,?\s+)?(?:my|the user's|user's)\s+(.+?)\s+"
                      r"(?:is|are|was|were)\s+(.+)$")
# "I live in Berlin", "I work at Acme", "I am a nurse"; an adverb before the verb is no part of it ("the user still
# lives in Leeds" is where they live; "still" keyed a fact "user|still").
_I_VERB = re.compile(r"^(?:i|the user|user)\s+(?:(?:now|currently|still|also|really|just|mostly|usually|always|"
                     r"often|actually|only|even|already|recently|sometimes|practically|basically|finally|"
                     r"definitely|probably|totally)\s+)*([a-z']+)(?:\s+(in|at|for|as|on|with|to|from))?\s+(.+)$")
# A verb that says how or whether, not what: "can", "must", "don't", "never" open facts about anything ("the user
# can swim" is no value of "the user can drive"), so they key nothing.
_NO_PREDICATE = frozenset({"can", "could", "will", "would", "shall", "should", "may", "might", "must", "ought",
                           "do", "does", "did", "don't", "doesn't", "didn't", "won't", "can't", "cannot", "never",
                           "not", "wouldn't", "couldn't", "shouldn't", "'ll", "'d", "am", "is", "are", "was", "were"})
# "has bought a Jazz", "has been doing watercolours": a tense's helper, not a possession — two such facts are two
# events (one superseded the other as a second value of "has"); "has two dogs" is a possession, "have", which
# holds many.
_HAVE = frozenset({"has", "have", "had", "'ve", "having"})
_PARTICIPLE = re.compile(r"(?:been|got|gotten|bought|made|done|gone|sold|left|found|met|seen|taken|given|kept|"
                         r"started|finished|moved|decided|learned|learnt|begun|become|brought|built|won|lost|spent|"
                         r"[a-z]+ed)\b")
# Someone's age, by name or the person's own: "the user's granddaughter lily is five, …", "lily turned 6 yesterday",
# "the user is 71 and retired".
_NUMBERS = {word: str(number) for number, word in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen "
    "eighteen nineteen twenty".split())}
_AGE = re.compile(r"^(?:the user's (?:[a-z-]+ )?(?=[a-z]+ (?:is|turned|just turned|is now|turns) ))?"
                  r"(?P<who>the user|(?!(?:he|she|it|they|this|that|there|which|who|what|everyone|nobody)\b)[a-z]+)"
                  r" (?:is|is now|just turned|turned|turns) "
                  r"(?P<age>\d{1,3}|" + "|".join(_NUMBERS) + r")\b(?! (?:minutes?|hours?|days?|weeks?|months?|"
                  r"kilos?|kg|km|miles?|pounds?|euros?|dollars?|percent|times|of|in|on|at|o'clock|pm|am)\b)")
# "I now live alone with a budgerigar", "we live together": whom the person lives with, which a home elsewhere
# does not end (it had ended "I live in Halifax").
_LIVE = frozenset({"live", "lives", "living"})
_HOUSEHOLD = re.compile(r"(?:alone|together|on (?:my|our) own|by (?:myself|ourselves))\b")
_WE_HOME = re.compile(r"^we\s+(?=(?:now\s+|currently\s+)?(?:live|moved|relocated)\b)")
_FACTS_LOCK = "SELECT pg_advisory_xact_lock(hashtext('facts:' || :user))"


@dataclass(frozen=True)
class FactResult:
    fact_id: int
    action: str  # "inserted" | "merged" | "superseded"
    superseded_id: int | None = None


@dataclass(frozen=True)
class Triple:
    subject: str | None
    predicate: str | None
    object: str | None


def clean_text(value: str, max_chars: int = 500) -> str:
    """Collapse whitespace, strip, cap the length."""
    return _SPACE.sub(" ", value or "").strip()[:max_chars]


def normalise_subject(subject: str | None) -> str | None:
    if not subject:
        return None
    value = clean_text(subject).lower()
    return "user" if value in SELF_WORDS else value


def normalise_predicate(predicate: str | None) -> str | None:
    if not predicate:
        return None
    plain = predicate.lower().replace("_", " ").replace("'s ", " ")
    words = [lemma(w) for w in changes.WORD.findall(plain) if w not in changes.STOP]
    return " ".join(words) or None


def fact_key(subject: str | None, predicate: str | None) -> str | None:
    """``subject|predicate`` normalised, or None when either is missing."""
    s, p = normalise_subject(subject), normalise_predicate(predicate)
    return f"{s}|{p}" if s and p else None


def parse_triple(fact_text: str) -> Triple:
    """Subject / predicate / object of the common first-person shapes; (None, None, None) otherwise."""
    value = clean_text(fact_text).rstrip(".!").lower()
    # The person is one of "we" where they live ("we live in Berlin now"); other "we" sentences stay unkeyed, or
    # "we went hiking" would replace "we went to Rome".
    value = _WE_HOME.sub("i ", value, count=1)
    title = job_title(value)
    if title:  # "got promoted, … the user is QA lead", "my new role is team lead": the job, which it replaces
        return Triple("user", "work as", title)
    place = new_workplace(value)
    if place:  # "started a new job at the school last week": where they work, which it replaces
        return Triple("user", "work at", place)
    match = _AGE.match(value)
    if match:  # "Lily is five" and later "Lily turned six yesterday": one age, the newer wins
        return Triple(match["who"], "age", _NUMBERS.get(match["age"], match["age"]))
    match = _MY_ATTR.match(value)
    if match:
        return Triple("user", match.group(1), match.group(2))
    match = _I_VERB.match(value)
    if match:
        verb, preposition, obj = match.groups()
        if verb in _NO_PREDICATE or (verb in _HAVE and preposition is None and _PARTICIPLE.match(obj)):
            return Triple(None, None, None)
        if verb in _HAVE:
            verb = "have"
        if verb in _LIVE and preposition is None and _HOUSEHOLD.match(obj):
            return Triple("user", "live with", obj)  # whom they live with, not where: "live alone with a budgie"
        return Triple("user", f"{verb} {preposition}" if preposition else verb, obj)
    return Triple(None, None, None)


def _same_object(a: str | None, b: str | None) -> bool:
    norm = [" ".join(w for w in changes.WORD.findall((x or "").lower()) if w not in changes.STOP) for x in (a, b)]
    return norm[0] == norm[1]


def remember_fact(session: Session, embedder: Embedder, user_id: str, text: str, *,
                  confidence: float = 1.0, source_exchange_id: int | None = None, salience: float = 0.5,
                  subject: str | None = None, predicate: str | None = None, object: str | None = None,
                  embedding: np.ndarray | None = None, config: FactsConfig | None = None) -> FactResult:
    """Store a fact about the user: insert, merge into a duplicate, or supersede a contradicted one.

    Args:
        confidence, salience: 0–1 (ValueError otherwise).
        subject, predicate, object: the triple when known (the chunker's); parsed from the text otherwise.
        embedding: the text's vector if the caller has it.
    """
    cfg = config or FactsConfig()
    body = clean_text(text, cfg.max_chars)
    for name, value in (("confidence", confidence), ("salience", salience)):
        if not 0.0 <= float(value) <= 1.0:
            raise ValueError(f"{name} must be between 0 and 1, got {value}")
    if not body:
        raise ValueError("a fact needs text")
    triple = Triple(subject, predicate, object) if subject and predicate else parse_triple(body)
    key = slot_key(fact_key(triple.subject, triple.predicate), cfg)
    vector = embedding if embedding is not None else embedder.embed(body)
    session.execute(insert(User).values(id=user_id).on_conflict_do_nothing())
    session.execute(sql_text(_FACTS_LOCK), {"user": user_id})  # one writer of a user's facts at a time
    existing = _find_match(session, user_id, body, key, triple, vector, cfg)
    if existing is not None and existing[1] == "merge":
        _merge(existing[0], confidence, salience, source_exchange_id)
        session.flush()
        return FactResult(existing[0].id, "merged")
    fact = Fact(user_id=user_id, text=body, subject=normalise_subject(triple.subject),
                predicate=normalise_predicate(triple.predicate), object=triple.object, fact_key=key, speaker="user",
                confidence=float(confidence), salience=float(salience), embedding=vector,
                embedding_model=getattr(embedder, "model_id", None),
                source_exchange_ids=[source_exchange_id] if source_exchange_id is not None else [])
    session.add(fact)
    session.flush()
    if existing is None:
        ended = _supersede_ended(session, user_id, fact)
        result = FactResult(fact.id, "superseded", superseded_id=ended[0]) if ended else FactResult(fact.id, "inserted")
    else:
        old = existing[0]
        old.superseded_by, old.superseded_at = fact.id, utcnow()
        _inherit_salience(fact, [old])
        session.flush()
        logger.info("fact %s supersedes fact %s", fact.id, old.id)  # the key is the person's words: not logged
        result = FactResult(fact.id, "superseded", superseded_id=old.id)
    took_over = successor(session, user_id, fact)  # "a lad called Owen Bevan came out" after "Dr Pryce has retired"
    if took_over is not None:
        holder = remember_fact(session, embedder, user_id, took_over[0], confidence=confidence, salience=salience,
                               source_exchange_id=source_exchange_id, config=cfg)
        left = took_over[1]  # the news of the leaving, if told: history once the part has its new holder
        if left is not None and left.superseded_at is None:
            left.superseded_by, left.superseded_at = holder.fact_id, utcnow()
            session.flush()
    return result


def slot_key(key: str | None, cfg: FactsConfig) -> str | None:
    """``subject|slot`` when the predicate is one of a slot's (configs/memory.toml [facts] slots), else ``key``."""
    if key is None:
        return None
    subject, _, predicate = key.partition("|")
    for slot, predicates in cfg.slots.items():
        if _loose(predicate) in {_loose(normalise_predicate(name)) for name in predicates}:
            return f"{subject}|{slot}"
    return key


def _loose(predicate: str | None) -> str:
    """A predicate compared without final e's: _lemma makes "teaches" "teache" but "teach" stays "teach"."""
    return " ".join(word.rstrip("e") for word in (predicate or "").split())


def _supersede_ended(session: Session, user_id: str, fact: Fact) -> list[int]:
    """Supersede the active facts the new fact makes history (``services/memory/changes``); their ids."""
    change = changes.change_in(fact.text)
    if change is None:
        return []
    older = session.scalars(select(Fact).where(Fact.user_id == user_id, Fact.superseded_at.is_(None),
                                               Fact.id != fact.id)).all()
    replaced = [old for old in older if change.ends(old.text)]
    if change.part:
        # Someone new holds the part: the news that its old holder left ("Lars has accepted a position in Bodø", which
        # ended "my deputy head is Lars") is history too; beside it, the 1.5B still addressed the deputy as Lars.
        ended = session.scalars(select(Fact).where(Fact.user_id == user_id, Fact.superseded_by.is_not(None))).all()
        left = {old.superseded_by for old in ended if change.names_part(old.text)}
        replaced += [old for old in older if old.id in left and old not in replaced]
    for old in replaced:
        old.superseded_by, old.superseded_at = fact.id, utcnow()
        logger.info("fact %s supersedes fact %s (it changed)", fact.id, old.id)
    _inherit_salience(fact, replaced)
    session.flush()
    return [old.id for old in replaced]


def _inherit_salience(fact: Fact, replaced: list[Fact]) -> None:
    """The newer word on a thing matters as much as the one it replaced: a home or a job told first (salient, so in
    the prompt whatever is asked) and changed later ("staying in Punggol now") left the prompt with neither."""
    if replaced:
        fact.salience = max(fact.salience, *(old.salience for old in replaced))


def _find_match(session: Session, user_id: str, body: str, key: str | None, triple: Triple, vector: np.ndarray,
                cfg: FactsConfig) -> tuple[Fact, str] | None:
    """(fact, "merge" | "supersede") for the active fact the new one repeats or contradicts, else None."""
    active = select(Fact).where(Fact.user_id == user_id, Fact.superseded_at.is_(None))
    same_text = session.scalars(active.where(func.lower(Fact.text) == body.lower()).limit(1)).first()
    if same_text is not None:
        return same_text, "merge"
    predicate = normalise_predicate(triple.predicate) or ""
    multi = any(word in cfg.multi_valued_predicates for word in predicate.split())
    if key:
        for fact in session.scalars(active.where(Fact.fact_key == key).order_by(Fact.updated_at.desc())):
            if _same_object(fact.object, triple.object):
                return fact, "merge"
            if not multi:
                return fact, "supersede"
    prepare_vector_search(session)
    nearest = session.execute(
        active.add_columns(Fact.embedding.cosine_distance(vector).label("distance"))
        .where(Fact.embedding.is_not(None)).order_by("distance").limit(1)
    ).first()
    if nearest is not None and 1 - float(nearest.distance) >= cfg.merge_similarity:
        fact = nearest[0]
        if changes.other_people(fact.text, body):  # "Caroline likes hiking" is not "Melanie likes hiking" said again
            return None
        # Near-identical wording with a different object of a single-valued key is a contradiction.
        if key and fact.fact_key == key and not _same_object(fact.object, triple.object) and not multi:
            return fact, "supersede"
        return fact, "merge"
    return None


def _merge(fact: Fact, confidence: float, salience: float, source_exchange_id: int | None) -> None:
    # Hearing it again makes it more certain: noisy-OR of the two confidences.
    fact.confidence = round(1 - (1 - fact.confidence) * (1 - float(confidence)), 4)
    fact.salience = max(fact.salience, float(salience))
    fact.mentions = (fact.mentions or 1) + 1
    if source_exchange_id is not None and source_exchange_id not in (fact.source_exchange_ids or []):
        fact.source_exchange_ids = [*(fact.source_exchange_ids or []), source_exchange_id]
    fact.updated_at = utcnow()


def list_facts(session: Session, user_id: str, include_superseded: bool = False, *, limit: int | None = None,
               offset: int = 0) -> list[Fact]:
    """The user's facts, newest first; superseded ones only when asked (they are history)."""
    statement = select(Fact).where(Fact.user_id == user_id)
    if not include_superseded:
        statement = statement.where(Fact.superseded_at.is_(None))
    statement = statement.order_by(Fact.updated_at.desc(), Fact.id.desc()).offset(offset)
    if limit is not None:
        statement = statement.limit(limit)
    return list(session.scalars(statement))


def replaced_version(session: Session, user_id: str, fact_id: int) -> Fact | None:
    """The version this fact replaced (the newest one pointing at it), or None."""
    return session.scalars(select(Fact).where(Fact.user_id == user_id, Fact.superseded_by == fact_id)
                           .order_by(Fact.superseded_at.desc(), Fact.id.desc())).first()


def get_fact(session: Session, user_id: str, fact_id: int) -> Fact | None:
    """One fact of this user (None for another user's id, exactly as for a missing one)."""
    return session.scalars(select(Fact).where(Fact.user_id == user_id, Fact.id == fact_id)).first()


def forget_fact(session: Session, user_id: str, fact_id: int) -> bool:
    """Delete a fact and the older versions it superseded (forgetting a fact forgets its history)."""
    chain = session.execute(
        sql_text("WITH RECURSIVE chain(id) AS (SELECT id FROM facts WHERE id = :id AND user_id = :user "
             "UNION SELECT f.id FROM facts f JOIN chain c ON f.superseded_by = c.id WHERE f.user_id = :user) "
             "SELECT id FROM chain"),
        {"id": fact_id, "user": user_id},
    ).scalars().all()
    if not chain:
        return False
    # Newer versions that superseded this one stay superseded-free: clear their link first.
    session.execute(update(Fact).where(Fact.user_id == user_id, Fact.superseded_by.in_(chain))
                    .values(superseded_by=None))
    session.execute(delete(Fact).where(Fact.user_id == user_id, Fact.id.in_(chain)))
    session.flush()
    return True


class FactSuperseded(ValueError):
    """A correction of a fact that a newer one already replaced (correct the newer one instead)."""

    def __init__(self, fact_id: int, superseded_by: int | None) -> None:
        newer = f" by fact {superseded_by}" if superseded_by is not None else ""
        super().__init__(f"fact {fact_id} was already superseded{newer}; correct the current one instead")
        self.fact_id, self.superseded_by = fact_id, superseded_by


def correct_fact(session: Session, user_id: str, fact_id: int, new_text: str, config: FactsConfig, *,
                 confidence: float = 1.0) -> Fact:
    """A person's correction of a fact: a new fact (embedding pending) that supersedes the old one.

    Raises ``LookupError`` for an unknown fact and ``FactSuperseded`` for one already replaced
    (correcting history would leave two active versions).
    """
    # Row lock: two concurrent corrections of one fact must not both become active.
    old = session.scalars(select(Fact).where(Fact.user_id == user_id, Fact.id == fact_id).with_for_update()
                          .execution_options(populate_existing=True)).first()
    if old is None:
        raise LookupError(fact_id)
    if old.superseded_at is not None:
        raise FactSuperseded(fact_id, old.superseded_by)
    body = clean_text(new_text, config.max_chars)
    if not body:
        raise ValueError("a fact needs text")
    triple = parse_triple(body)
    subject = normalise_subject(triple.subject) or old.subject
    predicate = normalise_predicate(triple.predicate) or old.predicate
    fact = Fact(user_id=user_id, text=body, subject=subject, predicate=predicate, object=triple.object,
                fact_key=fact_key(subject, predicate), speaker="user", confidence=float(confidence),
                salience=old.salience, embedding=None,
                source_exchange_ids=list(old.source_exchange_ids or []))
    session.add(fact)
    session.flush()
    old.superseded_by, old.superseded_at = fact.id, utcnow()
    session.flush()
    return fact


def fact_to_dict(fact: Fact) -> dict[str, object]:
    """JSON-ready fact (no embedding)."""
    return {
        "id": fact.id, "text": fact.text, "subject": fact.subject, "predicate": fact.predicate, "object": fact.object,
        "speaker": fact.speaker, "confidence": fact.confidence, "salience": fact.salience, "mentions": fact.mentions,
        "source_exchange_ids": list(fact.source_exchange_ids or []), "external_id": fact.external_id,
        "superseded_by": fact.superseded_by, "superseded_at": iso(fact.superseded_at),
        "access_count": fact.access_count, "last_accessed_at": iso(fact.last_accessed_at),
        "created_at": iso(fact.created_at), "updated_at": iso(fact.updated_at),
        "embedded": fact.embedding is not None,
    }
