"""The person's concept graph: content words of facts and episodes, linked by co-occurrence.

Two concepts are linked when they occur in the same memory, more strongly the more memories
they share. Spreading activation starts at 1.0 on seed concepts and spreads along the links,
shrinking by ``decay`` per hop and split by link weight; anything under ``threshold`` stops
spreading. Used by the ``associate`` skill and by cognitive drift (which adds topic names too).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Protocol

from sqlalchemy import select
from sqlalchemy.orm import Session

from services.db import Topic
from services.memory.models import Episode, Fact
from services.text import content_words


class SpreadSettings(Protocol):
    decay: float
    threshold: float


@dataclass
class ConceptGraph:
    """Undirected weighted co-occurrence graph, with which memories support each concept."""

    edges: dict[str, dict[str, float]] = field(default_factory=lambda: defaultdict(lambda: defaultdict(float)))
    sources: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))

    def add(self, source: str, text: str) -> None:
        """Link every pair of concepts of one memory; a long memory links each pair more weakly."""
        concepts = list(dict.fromkeys(content_words(text)))
        for concept in concepts:
            self.sources[concept].append(source)
        if len(concepts) < 2:
            return
        weight = 1.0 / (len(concepts) - 1)
        for index, left in enumerate(concepts):
            for right in concepts[index + 1:]:
                self.edges[left][right] += weight
                self.edges[right][left] += weight


def spread(graph: ConceptGraph, seeds: list[str], config: SpreadSettings, max_hops: int) -> dict[str, float]:
    """Activation of every reached concept except the seeds."""
    activation = dict.fromkeys(seeds, 1.0)
    frontier = dict(activation)
    for _ in range(max_hops):
        incoming: dict[str, float] = defaultdict(float)
        for node, energy in frontier.items():
            links = graph.edges.get(node, {})
            total = sum(links.values())
            for neighbour, weight in links.items():
                incoming[neighbour] += energy * config.decay * weight / total
        frontier = {node: energy for node, energy in incoming.items()
                    if energy >= config.threshold and node not in seeds}
        for node, energy in frontier.items():
            activation[node] = activation.get(node, 0.0) + energy
        if not frontier:
            break
    return {node: energy for node, energy in activation.items() if node not in seeds}


def build_graph(session: Session, user_id: str, limit: int) -> ConceptGraph:
    """The concept graph of the person's active facts and episodes (most recent ``limit`` of each)."""
    graph = ConceptGraph()
    facts = session.execute(
        select(Fact.id, Fact.text).where(Fact.user_id == user_id, Fact.superseded_at.is_(None))
        .order_by(Fact.updated_at.desc()).limit(limit)
    ).all()
    for fact_id, text in facts:
        graph.add(f"fact:{fact_id}", text)
    episodes = session.execute(
        select(Episode.id, Episode.title, Episode.gist).where(Episode.user_id == user_id)
        .order_by(Episode.created_at.desc()).limit(limit)
    ).all()
    for episode_id, title, gist in episodes:
        graph.add(f"episode:{episode_id}", f"{title}. {gist}")
    return graph


def add_topics(graph: ConceptGraph, session: Session, user_id: str, limit: int) -> None:
    """Link the words of the person's topic names (``marathon-training-plan``), busiest topics first."""
    topics = session.execute(
        select(Topic.id, Topic.name).where(Topic.user_id == user_id)
        .order_by(Topic.message_count.desc(), Topic.updated_at.desc()).limit(limit)
    ).all()
    for topic_id, name in topics:
        graph.add(f"topic:{topic_id}", name.replace("-", " "))
