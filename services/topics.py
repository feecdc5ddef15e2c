"""Deterministic topic classification against per-user topic centroids (pgvector HNSW).

No LLM: a message's embedding is compared with the user's topic centroids through the
HNSW index; the thread's recent topic gets a bonus (conversations stay on topic unless the
message clearly moves away), a message far from every topic founds a new one named from
its own keywords, and the chosen centroid moves toward the message as a capped running mean.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from sqlalchemy import Row, bindparam, insert, select, update
from sqlalchemy.orm import Session

from services.config_files import load_config
from services.db import Topic, utcnow

GENERAL = "general"
_WORD = re.compile(r"[a-zA-Z][a-zA-Z'-]{2,}")
STOPWORDS = frozenset(
    """about above after again against all also and any are aren't because been before being below between both
    but can can't cannot could couldn't did didn't does doesn't doing don't down during each few for from further
    get got had hadn't has hasn't have haven't having her here hers herself him himself his how i'd i'll i'm i've
    into isn't it's its itself just know let let's like make many may me might more most much must my myself need
    not now off once only other our ours ourselves out over own please really same say see she she'd she'll she's
    should shouldn't some something still such take tell than thank thanks that that's the their theirs them
    themselves then there there's these they they'd they'll they're they've thing things think this those though
    through too under until very want was wasn't way we we'd we'll we're we've well were weren't what what's when
    where which while who whom why will with won't would wouldn't yes yet you you'd you'll you're you've your yours
    yourself yourselves hello okay sure maybe today tomorrow yesterday going doing done one two help give show find
    write explain use try keep put""".split()
)


@dataclass(frozen=True)
class TopicConfig:
    match_threshold: float = 0.42  # best similarity (with bonus) below this founds a new topic
    recent_bonus: float = 0.12  # added to the thread's current topic: stay unless clearly elsewhere
    centroid_cap: int = 50  # running mean over at most this many messages, so topics can drift
    min_words_for_new_topic: int = 2
    candidates: int = 5
    name_words: int = 3
    fallback_confidence: float = 0.1

    @classmethod
    def load(cls, configs_dir: Path) -> TopicConfig:
        """``[classifier]`` of ``configs/topics.toml``; defaults when the file is absent."""
        return load_config(configs_dir, "topics.toml", TopicsFile()).classifier


@dataclass(frozen=True)
class TopicsFile:
    """``configs/topics.toml``: its one section, read by the one config loader."""

    classifier: TopicConfig = field(default_factory=TopicConfig)


@dataclass(frozen=True)
class CentroidUpdate:
    """A matched topic's centroid after absorbing the message (``ABSORB``'s parameters)."""

    topic_id: int
    centroid: np.ndarray


@dataclass(frozen=True)
class TopicResult:
    topic: str
    confidence: float
    is_new: bool
    switched: bool
    # The matched topic's centroid update the caller writes (None: nothing to write).
    update: CentroidUpdate | None = field(default=None, compare=False)


def keywords(text_: str) -> list[str]:
    """Content words of a message in order of appearance, without repeats."""
    seen: list[str] = []
    for word in _WORD.findall(text_.lower()):
        word = word.strip("'-")
        if len(word) >= 3 and word not in STOPWORDS and word not in seen:
            seen.append(word)
    return seen


def topic_name(text_: str, taken: Sequence[str], words: int = 3) -> str:
    """A readable name from the message's longest keywords, kept in sentence order."""
    found = keywords(text_)
    chosen = sorted(sorted(found, key=len, reverse=True)[:words], key=found.index)
    base = "-".join(chosen) or GENERAL
    name, n = base, 2
    while name in taken:
        name, n = f"{base}-{n}", n + 1
    return name


def blend_centroid(centroid: np.ndarray, embedding: np.ndarray, count: int, cap: int) -> np.ndarray:
    """Capped running mean, renormalised so cosine distances stay comparable."""
    weight = 1.0 / min(count + 1, cap)
    moved = centroid + (embedding - centroid) * weight
    norm = float(np.linalg.norm(moved))
    return moved / norm if norm else moved


class TopicClassifier:
    def __init__(self, config: TopicConfig) -> None:
        self.config = config

    def classify(
        self, session: Session, user_id: str, text_: str, embedding: np.ndarray | None, recent_topic: str | None,
    ) -> TopicResult:
        """Pick (or found) the user's topic for this message, in the caller's transaction (which has
        ``SEARCH_SETTINGS``); a matched topic's centroid update comes back as ``TopicResult.update`` for the
        caller to write (the digest writes it with the exchange)."""
        if embedding is None:  # embedding failed: the design's fallback
            switched = recent_topic not in (None, GENERAL)
            return TopicResult(GENERAL, self.config.fallback_confidence, False, switched)
        vector = np.asarray(embedding, dtype=np.float32)
        candidates = self._nearest(session, user_id, vector)
        best, best_score, best_similarity = None, -1.0, 0.0
        for topic, similarity in candidates:
            score = similarity + (self.config.recent_bonus if topic.name == recent_topic else 0.0)
            if score > best_score:
                best, best_score, best_similarity = topic, score, similarity
        content = keywords(text_)
        if best is not None and (best_score >= self.config.match_threshold or not self._can_found(content)):
            confidence = max(0.0, min(1.0, best_score))
            return TopicResult(best.name, confidence, False, best.name != recent_topic,
                               self._absorbed(best, vector))
        if not self._can_found(content):
            # Too little to found a topic on ("ok", "thanks"): stay where the conversation is.
            return TopicResult(recent_topic or GENERAL, self.config.fallback_confidence, False, False)
        name = self._found(session, user_id, text_, vector)
        return TopicResult(name, 1.0 - max(best_similarity, 0.0) / 2, True, True)

    def _can_found(self, content: list[str]) -> bool:
        return len(content) >= self.config.min_words_for_new_topic

    # Core statements on the table, not ORM entities: this runs on every chat turn, and loading,
    # tracking and flushing Topic objects cost more CPU than the queries themselves.
    def _nearest(self, session: Session, user_id: str, vector: np.ndarray) -> list[tuple[Row, float]]:
        rows = session.execute(NEAREST, {"user_id": user_id, "vector": vector, "limit": self.config.candidates}).all()
        return [(row, 1.0 - float(row[-1])) for row in rows]

    def _absorbed(self, topic: Row, vector: np.ndarray) -> CentroidUpdate:
        centroid = np.asarray(topic.centroid, dtype=np.float32)
        return CentroidUpdate(topic.id, blend_centroid(centroid, vector, topic.message_count, self.config.centroid_cap))

    def _found(self, session: Session, user_id: str, text_: str, vector: np.ndarray) -> str:
        """Found a topic named from the message; its name."""
        taken = session.scalars(select(TOPICS.c.name).where(TOPICS.c.user_id == user_id)).all()
        name = topic_name(text_, list(taken) + [GENERAL], self.config.name_words)
        session.execute(insert(TOPICS).values(user_id=user_id, name=name, centroid=vector, message_count=1))
        return name


TOPICS = Topic.__table__
# Iterative index scans keep the HNSW search correct under the per-user filter (transaction-local).
SEARCH_SETTINGS = {"hnsw.iterative_scan": "relaxed_order"}
# Built once: this runs on every chat turn, and building a statement costs more CPU than sending it.
_DISTANCE = TOPICS.c.centroid.cosine_distance(bindparam("vector", type_=TOPICS.c.centroid.type))
NEAREST = (select(TOPICS.c.id, TOPICS.c.name, TOPICS.c.centroid, TOPICS.c.message_count, _DISTANCE)
           .where(TOPICS.c.user_id == bindparam("user_id")).order_by(_DISTANCE).limit(bindparam("limit")))
ABSORB = (update(TOPICS).where(TOPICS.c.id == bindparam("topic_id"))
          .values(centroid=bindparam("centroid", type_=TOPICS.c.centroid.type),
                  message_count=TOPICS.c.message_count + 1, updated_at=bindparam("now")))


def absorb_params(update: CentroidUpdate | None) -> dict[str, object]:
    """``ABSORB``'s parameters; for no update, ones that match no topic (a statement built with it as a CTE)."""
    if update is None:
        return {"topic_id": None, "centroid": None, "now": utcnow()}
    return {"topic_id": update.topic_id, "centroid": update.centroid, "now": utcnow()}
