"""The ``associate`` skill: spreading activation over the person's concept graph.

The graph and the spreading live in ``services.memory.concepts`` (cognitive drift uses them
too). The seeds themselves are never returned — only what they bring to mind.
"""

from __future__ import annotations

from typing import Any

from services.act.skills.base import Arguments, Result, Skill, SkillContext
from services.memory.concepts import build_graph, spread
from services.text import content_words

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


def run(ctx: SkillContext, args: Arguments) -> Result:
    """Concepts the given one brings to mind, strongest first, with their sources."""
    config = ctx.config.associate
    graph = build_graph(ctx.session, ctx.user_id, config.max_sources)
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
