"""The ``associate`` skill: spreading activation over concepts linked through facts and episodes.

Concepts are the content words of the person's facts and episode titles/gists; two concepts
are linked when they occur in the same memory, more strongly the more memories they share.
Activation starts at 1.0 on the seed concepts and spreads along the links, shrinking by
``decay`` per hop and split by link weight; anything under ``threshold`` stops spreading.
The seeds themselves are never returned — only what they bring to mind.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select

from services.act.config import AssociateConfig
from services.act.skills.base import Arguments, Result, Skill, SkillContext
from services.act.text import content_words
from services.memory.models import Episode, Fact

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "concept": {"type": "string", "minLength": 1, "maxLength": 200,
                    "description": "a word or short phrase to start from, e.g. 'running' or 'sister'"},
        "max_hops": {"type": "integer", "minimum": 1, "maximum": 4},
    },
    "required": ["concept"],
    "additionalProperties": False,
}


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


def spread(graph: ConceptGraph, seeds: list[str], config: AssociateConfig, max_hops: int) -> dict[str, float]:
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


def build_graph(ctx: SkillContext, limit: int) -> ConceptGraph:
    """The concept graph of the person's active facts and episodes (most recent ``limit`` of each)."""
    graph = ConceptGraph()
    facts = ctx.session.execute(
        select(Fact.id, Fact.text).where(Fact.user_id == ctx.user_id, Fact.superseded_at.is_(None))
        .order_by(Fact.updated_at.desc()).limit(limit)
    ).all()
    for fact_id, text in facts:
        graph.add(f"fact:{fact_id}", text)
    episodes = ctx.session.execute(
        select(Episode.id, Episode.title, Episode.gist).where(Episode.user_id == ctx.user_id)
        .order_by(Episode.created_at.desc()).limit(limit)
    ).all()
    for episode_id, title, gist in episodes:
        graph.add(f"episode:{episode_id}", f"{title}. {gist}")
    return graph


def run(ctx: SkillContext, args: Arguments) -> Result:
    """Concepts the given one brings to mind, strongest first, with their sources."""
    config = ctx.config.associate
    graph = build_graph(ctx, config.max_sources)
    wanted = list(dict.fromkeys(content_words(args["concept"])))
    seeds = [concept for concept in wanted if concept in graph.sources]
    if not seeds:
        return {"seeds": [], "associations": [], "note": f"nothing in memory mentions {args['concept']!r}"}
    activation = spread(graph, seeds, config, args.get("max_hops", config.max_hops))
    ranked = sorted(activation.items(), key=lambda item: (-item[1], item[0]))[: config.max_results]
    return {
        "seeds": seeds,
        "associations": [{"concept": concept, "activation": round(energy, 4),
                          "sources": graph.sources[concept][:3]} for concept, energy in ranked],
    }


SKILL = Skill(
    name="associate",
    description="Free association over the person's memories: what concepts are linked to a word or phrase "
                "(through shared facts and episodes), strongest first. Good for 'what does X remind you of'.",
    parameters=PARAMETERS,
    run=run,
)
