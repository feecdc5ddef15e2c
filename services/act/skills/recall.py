"""The ``recall`` skill: hybrid memory search (exchanges, facts, episodes) with provenance."""

from __future__ import annotations

from typing import Any

from services.act.config import SkillLimits
from services.act.skills.base import Arguments, Result, Skill, SkillContext
from services.memory.recall import recall

TEXT_LIMIT = 400


def parameters(limits: SkillLimits) -> dict[str, Any]:
    """The argument schema; how many memories one search may return comes from ``act.toml``."""
    return {
        "type": "object",
        "properties": {
            "query": {"type": "string", "minLength": 1, "maxLength": 500,
                      "description": "what to look for, in the person's words (dates like 'last May' work)"},
            "k": {"type": "integer", "minimum": 1, "maximum": limits.recall_max_k,
                  "description": f"how many memories (default {limits.recall_default_k})"},
            "kinds": {"type": "array", "items": {"type": "string", "enum": ["exchange", "fact", "episode"]},
                      "minItems": 1, "description": "only these kinds of memory"},
        },
        "required": ["query"],
        "additionalProperties": False,
    }


def run(ctx: SkillContext, args: Arguments) -> Result:
    """The best-matching memories for the query."""
    k = args.get("k") or ctx.config.skills.recall_default_k
    hits = recall(ctx.session, ctx.embedder, ctx.user_id, args["query"], k=k, config=ctx.memory,
                  kinds=args.get("kinds") or ("exchange", "fact", "episode"), now=ctx.now)
    return {"query": args["query"], "items": [_item(hit) for hit in hits]}


def _item(hit: Any) -> dict[str, Any]:
    """One hit with where it came from (its id, the exchanges behind it, external ids of imports)."""
    item = {"kind": hit.kind, "id": hit.id, "text": hit.text[:TEXT_LIMIT], "score": round(float(hit.score), 4),
            "exchange_ids": list(hit.exchange_ids)[:10]}
    if getattr(hit, "at", None) is not None:
        item["at"] = hit.at.isoformat(timespec="minutes")
    if hit.external_ids:
        item["external_ids"] = list(hit.external_ids)[:10]
    return item


def skill(limits: SkillLimits) -> Skill:
    """The recall skill with the limits of ``act.toml``."""
    return Skill(
        name="recall",
        description="Search the person's memories (past conversations, facts they told you, episodes) for a query; "
                    "returns the best matches with their source.",
        parameters=parameters(limits),
        run=run,
    )


SKILL = skill(SkillLimits())  # with the default limits
