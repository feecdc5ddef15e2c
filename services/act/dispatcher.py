"""``ActDispatcher``: one registry of skills, argument validation, a deadline per action.

Whatever a skill does — bad arguments, a ``SkillError``, a crash, a hang — the dispatcher
answers with an ``ActionResult``; it never raises to the loop and never leaks a traceback
into what the model (or the person) sees.
"""

from __future__ import annotations

import contextvars
import logging
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from services.act.skills.base import ActionCancelled, ActionTicket, Skill, SkillContext, SkillError
from services.errors import PipelineError

logger = logging.getLogger(__name__)

JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,), "integer": (int,), "number": (int, float), "boolean": (bool,),
    "array": (list,), "object": (dict,),
}


class SessionStuck(PipelineError):
    """An abandoned skill still holds the digest session; the turn cannot store safely."""


@dataclass(frozen=True)
class ActionResult:
    ok: bool
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    duration_ms: float = 0.0

    def trail_fields(self) -> dict[str, Any]:
        """The result part of a trail entry."""
        body = {"result": self.result} if self.ok else {"error": self.error}
        return {"ok": self.ok, **body, "duration_ms": round(self.duration_ms, 2)}


def failure(code: str, message: str, **details: Any) -> ActionResult:
    """A failed result with a structured error."""
    return ActionResult(ok=False, error={"code": code, "message": message, **details})


def validate(schema: dict[str, Any], value: Any, path: str = "arguments") -> list[str]:
    """Problems of ``value`` against a JSON-schema subset (type, enum, required, lengths, ranges, items)."""
    expected = schema.get("type")
    if expected is not None:
        types = JSON_TYPES[expected]
        # bool is an int subclass: true is not a number here.
        if not isinstance(value, types) or (isinstance(value, bool) and expected != "boolean"):
            return [f"{path} must be {expected}, got {type(value).__name__}"]
    if "enum" in schema and value not in schema["enum"]:
        return [f"{path} must be one of {schema['enum']}, got {value!r}"]
    if isinstance(value, dict):
        return _object_problems(schema, value, path)
    if isinstance(value, list):
        return _array_problems(schema, value, path)
    return _scalar_problems(schema, value, path)


def _object_problems(schema: dict[str, Any], value: dict[str, Any], path: str) -> list[str]:
    properties = schema.get("properties", {})
    problems = [f"{path}.{name} is required" for name in schema.get("required", []) if value.get(name) is None]
    if schema.get("additionalProperties") is False:
        problems += [f"{path}.{name} is not a known argument (known: {', '.join(properties)})"
                     for name in value if name not in properties]
    for name, sub in properties.items():
        if value.get(name) is not None:
            problems += validate(sub, value[name], f"{path}.{name}")
    return problems


def _array_problems(schema: dict[str, Any], value: list[Any], path: str) -> list[str]:
    problems = []
    if len(value) < schema.get("minItems", 0):
        problems.append(f"{path} needs at least {schema['minItems']} item(s)")
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        problems.append(f"{path} allows at most {schema['maxItems']} items")
    for index, item in enumerate(value):
        problems += validate(schema.get("items", {}), item, f"{path}[{index}]")
    return problems


def _scalar_problems(schema: dict[str, Any], value: Any, path: str) -> list[str]:
    problems = []
    if isinstance(value, str):
        if len(value.strip()) < schema.get("minLength", 0):
            problems.append(f"{path} must not be empty" if schema["minLength"] == 1 else f"{path} is too short")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            problems.append(f"{path} is longer than {schema['maxLength']} characters")
    elif isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            problems.append(f"{path} must be >= {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            problems.append(f"{path} must be <= {schema['maximum']}")
    return problems


def with_defaults(schema: dict[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
    """Arguments with the schema's defaults filled in for missing (or null) properties."""
    filled = {name: value for name, value in arguments.items() if value is not None}
    for name, sub in schema.get("properties", {}).items():
        if name not in filled and "default" in sub:
            filled[name] = sub["default"]
    return filled


class ActDispatcher:
    """Runs skills by name with validated arguments, each under a deadline."""

    def __init__(self, skills: Iterable[Skill], *, timeout_s: float, release_grace_s: float = 5.0) -> None:
        self.skills = {skill.name: skill for skill in skills}
        self.timeout_s = timeout_s
        self.release_grace_s = release_grace_s

    def tools(self) -> list[dict[str, Any]]:
        """OpenAI ``tools`` entries for every skill."""
        return [skill.tool() for skill in self.skills.values()]

    def catalog(self) -> list[dict[str, str]]:
        """Name and description of every skill (introspection, prompts)."""
        return [{"name": skill.name, "description": skill.description} for skill in self.skills.values()]

    def prepare(self, name: str, arguments: dict[str, Any], arguments_error: str | None = None
                ) -> tuple[Skill, dict[str, Any]] | ActionResult:
        """The skill and its checked arguments (defaults filled), or the structured error."""
        skill = self.skills.get(name)
        if skill is None:
            return failure("unknown_skill", f"no skill named {name!r}", known=sorted(self.skills))
        if arguments_error:
            return failure("invalid_arguments", arguments_error)
        arguments = with_defaults(skill.parameters, arguments)
        problems = validate(skill.parameters, arguments)
        if problems:
            return failure("invalid_arguments", "; ".join(problems[:5]), problems=problems[:10])
        return skill, arguments

    def dispatch(self, name: str, arguments: dict[str, Any], context: SkillContext,
                 arguments_error: str | None = None) -> ActionResult:
        """Validate and run one action."""
        prepared = self.prepare(name, arguments, arguments_error)
        if isinstance(prepared, ActionResult):
            return prepared
        skill, checked = prepared
        return self.run(skill.name, lambda ctx: skill.run(ctx, checked), context)

    def run(self, label: str, handler: Callable[[SkillContext], dict[str, Any]], context: SkillContext) -> ActionResult:
        """Run ``handler`` in its own thread; past the deadline it is abandoned and a timeout is returned."""
        ticket = ActionTicket()
        outcome: dict[str, ActionResult] = {}
        started = time.monotonic()

        def target() -> None:
            result = _guarded(label, handler, context.for_action(ticket))
            context.gate.release(ticket, ok=result.ok)
            outcome["result"] = result

        # The copied context carries the request id of the log context into the skill's thread.
        worker = threading.Thread(target=contextvars.copy_context().run, args=(target,), name=f"skill-{label}",
                                  daemon=True)
        worker.start()
        worker.join(self.timeout_s)
        elapsed_ms = (time.monotonic() - started) * 1000
        if not worker.is_alive():
            result = outcome.get("result") or failure("internal", f"skill {label} ended without a result")
            return ActionResult(result.ok, result.result, result.error, elapsed_ms)
        logger.warning("skill %s timed out after %.1f s; abandoning it", label, self.timeout_s)
        if not context.gate.cancel(ticket) and not context.gate.settle(self.release_grace_s):
            raise SessionStuck(f"skill {label} timed out and still holds the database session")
        return ActionResult(False, None, {"code": "timeout", "message": f"{label} did not finish within "
                                          f"{self.timeout_s:g} s and was abandoned; nothing it started was kept"},
                            elapsed_ms)


def _guarded(label: str, handler: Callable[[SkillContext], dict[str, Any]], context: SkillContext) -> ActionResult:
    try:
        result = handler(context)
    except SkillError as exc:
        return ActionResult(ok=False, error=exc.to_result())
    except ActionCancelled as exc:
        return failure("timeout", str(exc))
    except Exception as exc:  # a skill bug must become a result the model can read, never a crash
        logger.exception("skill %s failed", label)
        return failure("internal", f"{label} failed unexpectedly ({type(exc).__name__}); nothing was changed")
    if not isinstance(result, dict):
        return failure("internal", f"{label} returned {type(result).__name__}, not an object")
    return ActionResult(ok=True, result=result)
