"""Profile enrichment: how each person's ACT turns have used each skill, for the ACT prompt.

The profiles are counted from the tool trails stored with the exchanges (no LLM call): uses,
failures, the operations and names used most (lists, reminders, goals), the most frequent
error and the last one. People whose newest ACT turn is already counted are skipped, so a
rerun of a fire changes nothing. ``profiles_text`` renders them for ``prompts/act.md``: the
model then knows the person's list names and which calls went wrong before.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from services.cognition.config import ProfilesConfig, cognition_config
from services.cognition.models import SkillProfile, skill_profiles
from services.db import Exchange, insert
from services.service_call import ServiceCall, ServiceResult
from services.text import truncate

TOP = 4
NAMED_ARGUMENTS = ("name", "list")  # arguments whose values are worth remembering (a list's name)
NO_PROFILES = "(no skill used yet)"


@dataclass
class Usage:
    uses: int = 0
    failures: int = 0
    last_used_at: dt.datetime | None = None
    operations: Counter[str] = field(default_factory=Counter)
    names: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    last_error: str = ""

    def add(self, entry: dict[str, Any], at: dt.datetime) -> None:
        self.uses += 1
        self.last_used_at = max(filter(None, (self.last_used_at, at)))
        arguments = entry.get("arguments") if isinstance(entry.get("arguments"), dict) else {}
        if isinstance(arguments.get("operation"), str):
            self.operations[arguments["operation"]] += 1
        for key in NAMED_ARGUMENTS:
            if isinstance(arguments.get(key), str) and arguments[key].strip():
                self.names[arguments[key].strip().lower()[:60]] += 1
        if not entry.get("ok", False):
            self.failures += 1
            error = entry.get("error") if isinstance(entry.get("error"), dict) else {}
            self.errors[str(error.get("code") or "error")] += 1
            self.last_error = truncate(str(error.get("message") or error.get("code") or ""), 200)

    def details(self, through: dt.datetime) -> dict[str, Any]:
        return {"operations": dict(self.operations.most_common(TOP)), "names": dict(self.names.most_common(TOP)),
                "errors": dict(self.errors.most_common(TOP)), "last_error": self.last_error,
                "through": through.isoformat()}


def run(call: ServiceCall) -> ServiceResult:
    """Recount the profiles of every person with ACT turns newer than their profiles."""
    context = call.context
    config = cognition_config(context).profiles
    now = call.now()
    with context.sessions.begin() as db:
        people = people_to_profile(db, now, config)
    if not people:
        return ServiceResult.skipped("no new ACT turns")
    skills = 0
    for user_id in people:
        with context.sessions.begin() as db:
            skills += profile_person(db, call.fire_id, user_id, now, config)
    return ServiceResult.ran(people=len(people), skills=skills)


def people_to_profile(db: Session, now: dt.datetime, config: ProfilesConfig) -> list[str]:
    """People whose newest ACT turn in the window is newer than what their profiles counted."""
    since = now - dt.timedelta(days=config.window_days)
    newest = dict(db.execute(select(Exchange.user_id, func.max(Exchange.created_at))
                             .where(Exchange.created_at >= since, Exchange.tool_trail != [])
                             .group_by(Exchange.user_id)).all())
    counted: dict[str, str] = {}
    for user_id, details in db.execute(select(SkillProfile.user_id, SkillProfile.details)
                                       .where(SkillProfile.user_id.in_(list(newest)))):
        counted[user_id] = max(counted.get(user_id, ""), str(details.get("through", "")))
    return sorted(user_id for user_id, at in newest.items() if at.isoformat() > counted.get(user_id, ""))


def profile_person(db: Session, fire_id: str, user_id: str, now: dt.datetime, config: ProfilesConfig) -> int:
    """Replace the person's profiles with a fresh count; returns how many skills they used."""
    since = now - dt.timedelta(days=config.window_days)
    rows = db.execute(select(Exchange.tool_trail, Exchange.created_at)
                      .where(Exchange.user_id == user_id, Exchange.created_at >= since, Exchange.tool_trail != [])
                      .order_by(Exchange.created_at.desc()).limit(config.max_exchanges)).all()
    usage: dict[str, Usage] = {}
    for trail, at in reversed(rows):  # oldest first, so the last error is the newest one
        for entry in trail or []:
            if isinstance(entry, dict) and entry.get("type", "action") == "action" and entry.get("skill"):
                usage.setdefault(str(entry["skill"])[:64], Usage()).add(entry, at)
    through = max((at for _, at in rows), default=now)
    db.execute(delete(SkillProfile).where(SkillProfile.user_id == user_id, SkillProfile.skill.not_in(list(usage))))
    for skill, counts in usage.items():
        values = {"uses": counts.uses, "failures": counts.failures, "last_used_at": counts.last_used_at,
                  "details": counts.details(through), "fire_id": fire_id, "updated_at": now}
        db.execute(insert(SkillProfile).values(user_id=user_id, skill=skill, **values)
                   .on_conflict_do_update(index_elements=["user_id", "skill"], set_=values))
    return len(usage)


def profiles_text(session: Session, user_id: str, limit: int = 8) -> str:
    """One line per skill the person has used, most used first, for the ACT prompt."""
    lines = [profile_line(profile) for profile in skill_profiles(session, user_id)[:limit]]
    return "\n".join(lines) if lines else NO_PROFILES


def profile_line(profile: SkillProfile) -> str:
    details = profile.details or {}
    parts = [f"- {profile.skill}: used {profile.uses} time{'s' if profile.uses != 1 else ''}"
             + (f" ({profile.failures} failed)" if profile.failures else "")]
    if details.get("operations"):
        parts.append("mostly " + ", ".join(f"{name} ({count})" for name, count in details["operations"].items()))
    if details.get("names"):
        parts.append("names used: " + ", ".join(f"{name} ({count})" for name, count in details["names"].items()))
    if details.get("last_error"):
        parts.append(f"last problem: {details['last_error']}")
    return "; ".join(parts)
