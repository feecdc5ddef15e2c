"""The ``memorize`` skill: keep a fact the person asked to be remembered (speaker-attributed)."""

from __future__ import annotations

from typing import Any

from services.act.skills.base import Arguments, Result, Skill, SkillContext, SkillError, clean_text
from services.memory.facts import remember_fact

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "text": {"type": "string", "minLength": 1, "maxLength": 500,
                 "description": "the fact in the person's own terms, first person: 'My sister is called Priya'"},
        "speaker": {"type": "string", "enum": ["user", "assistant"], "default": "user",
                    "description": "who said it; only what the person said becomes a fact about them"},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1, "default": 1.0},
    },
    "required": ["text"],
    "additionalProperties": False,
}


def run(ctx: SkillContext, args: Arguments) -> Result:
    """Store the fact (insert, merge or supersede)."""
    text = clean_text(args["text"], ctx.config.skills.max_text_chars)
    if args["speaker"] != "user":
        raise SkillError("rejected", "only what the person said is stored as a fact about them")
    if ctx.embedder is None:
        raise SkillError("unavailable", "memory storage needs the embedding model, which this worker has not loaded")
    stored = remember_fact(ctx.session, ctx.embedder, ctx.user_id, text,
                           confidence=float(args["confidence"]))
    return {"fact_id": stored.fact_id, "action": stored.action, "text": text,
            **({"superseded_id": stored.superseded_id} if getattr(stored, "superseded_id", None) else {})}


SKILL = Skill(
    name="memorize",
    description="Store a fact the person asked you to remember (about themselves, their people, preferences). "
                "Repeats merge; a contradiction replaces the old fact and keeps it as history.",
    parameters=PARAMETERS,
    run=run,
    subject=lambda args: args.get("text", ""),
    describe=lambda args: f"remember \"{args.get('text', '')}\"",
)
