"""The ``forget`` skill: remove specific facts on request — always after the person confirms.

The critic runs ``preview`` first, which resolves the request to exact fact ids and shows them;
only those ids are stored with the pending action, so "yes" deletes exactly what was shown.
"""

from __future__ import annotations

from typing import Any

from services.act.skills.base import Arguments, Result, Skill, SkillContext, SkillError
from services.act.text import grounding
from services.memory.facts import forget_fact, get_fact, list_facts

MAX_MATCHES = 5

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "minLength": 1, "maxLength": 300,
                  "description": "words of the memory to forget, e.g. 'my old address'"},
        "fact_ids": {"type": "array", "items": {"type": "integer", "minimum": 1}, "minItems": 1, "maxItems": 20},
    },
    "additionalProperties": False,
}


def resolve(ctx: SkillContext, args: Arguments) -> list[Any]:
    """The facts the request points at; ``SkillError`` when it points at none."""
    if args.get("fact_ids"):
        facts = [get_fact(ctx.session, ctx.user_id, fact_id) for fact_id in args["fact_ids"]]
        missing = [fid for fid, fact in zip(args["fact_ids"], facts, strict=True) if fact is None]
        if missing:
            raise SkillError("not_found", f"no facts with ids {missing}")
        return facts
    if not args.get("query"):
        raise SkillError("needs_info", "what should I forget?", missing="which memory to forget")
    scored = [(grounding(args["query"], fact.text), fact) for fact in list_facts(ctx.session, ctx.user_id)]
    best = max((score for score, _ in scored), default=0.0)
    if best < 0.5:
        raise SkillError("not_found", f"no stored fact matches {args['query']!r}")
    return [fact for score, fact in scored if score == best][:MAX_MATCHES]


def preview(ctx: SkillContext, args: Arguments) -> Result:
    """Exact fact ids to store with the pending action, and their texts to show."""
    facts = resolve(ctx, args)
    return {"arguments": {"fact_ids": [fact.id for fact in facts]}, "facts": [fact.text for fact in facts]}


def run(ctx: SkillContext, args: Arguments) -> Result:
    """Delete the facts (with the history they superseded)."""
    facts = resolve(ctx, args)
    forgotten = [{"id": fact.id, "text": fact.text} for fact in facts]
    for fact in forgotten:
        forget_fact(ctx.session, ctx.user_id, fact["id"])
    return {"forgotten": forgotten}


def describe(args: Arguments) -> str:
    """What will be forgotten, for the confirmation question."""
    shown = args.get("facts") or ([args["query"]] if args.get("query") else [f"facts {args.get('fact_ids')}"])
    return "forget " + "; ".join(f"\"{text}\"" for text in shown)


SKILL = Skill(
    name="forget",
    description="Remove specific facts from memory when the person asks you to forget them (by words of the "
                "fact, or ids from recall). The person is always asked to confirm first.",
    parameters=PARAMETERS,
    run=run,
    consequential=lambda args: True,
    destructive=lambda args: True,
    subject=lambda args: args.get("query", ""),
    describe=describe,
    preview=preview,
    always_confirm=True,
)
