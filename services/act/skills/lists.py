"""The ``list`` skill: named lists (shopping, packing, to-do) — create, add, remove, check, view, delete."""

from __future__ import annotations

import re
from typing import Any

from sqlalchemy import select

from services.act.models import ListItem, NamedList, list_counts
from services.act.skills.base import Arguments, Result, Skill, SkillContext, SkillError, clean_text, pick_one
from services.db import utcnow
from services.text import OWNER_NAME, WHOSE

OPERATIONS = ("view", "create", "add", "remove", "check", "uncheck", "delete")
WRITES_ITEMS = ("add", "remove", "check", "uncheck")
# "his party" (Oisín's, said just before) is the party list: whose list it is names no other list.
# "Bday Wishlist" is the "bday wish" list, as "my wish list" is.
_NAME_NOISE = re.compile(rf"^(?:{WHOSE}|your)\s+|\s+(?:list|lists)$|(?<=wish)lists?$")
_OWNER = re.compile(rf"^{OWNER_NAME}$")  # "oisín's" in "oisín's party"

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "operation": {"type": "string", "enum": list(OPERATIONS),
                      "description": "view (without name: every list), create, add, remove, check, uncheck, delete"},
        "name": {"type": "string", "minLength": 1, "maxLength": 100, "description": "list name, e.g. 'shopping'"},
        "items": {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": 300}, "maxItems": 50,
                  "description": "item texts for add / remove / check / uncheck"},
    },
    "required": ["operation"],
    "additionalProperties": False,
}


def list_name(raw: str) -> str:
    """Canonical list name: lower-case, without "my"/"the" and a trailing "list" ("My Shopping List" → shopping)."""
    name = " ".join(raw.lower().split())
    previous = None
    while previous != name:
        previous, name = name, _NAME_NOISE.sub("", name).strip()
    if name in ("list", "lists"):
        raise SkillError("needs_info", "which list?", missing="the name of the list")
    return name


def run(ctx: SkillContext, args: Arguments) -> Result:
    """Carry out one list operation for the person."""
    operation = args["operation"]
    if operation == "view" and not args.get("name"):
        return _overview(ctx)
    if not args.get("name"):
        raise SkillError("needs_info", f"which list should I {operation}?", missing="the name of the list")
    name = list_name(args["name"])
    if operation in WRITES_ITEMS and not args.get("items"):
        raise SkillError("needs_info", f"{operation} needs the items", missing=f"which items to {operation}")
    if operation == "create":
        named = _find(ctx, name) or _create(ctx, name)
        return {"list": named.name, "created": True, "items": _items(ctx, named)}
    if operation == "add":
        # "add carbón to asado list" is the "asado sunday" list made before, not a second list beside it.
        named = _find(ctx, name) or _find_by_words(ctx, name) or _create(ctx, name)
        return _add(ctx, named, args["items"])
    named = _find(ctx, name) or (_find_by_words(ctx, name) if operation != "delete" else None)
    if named is None:
        raise SkillError("not_found", f"there is no list named {name!r}", lists=_names(ctx))
    if operation == "view":
        return {"list": named.name, "items": _items(ctx, named)}
    if operation == "delete":
        ctx.session.delete(named)
        ctx.session.flush()
        return {"list": named.name, "deleted": True}
    return _change_items(ctx, named, operation, args["items"])


def _overview(ctx: SkillContext) -> Result:
    return {"lists": [{"name": name, "items": count} for name, count in list_counts(ctx.session, ctx.user_id)]}


def _find(ctx: SkillContext, name: str) -> NamedList | None:
    query = select(NamedList).where(NamedList.user_id == ctx.user_id, NamedList.name == name)
    return ctx.session.scalars(query).first()


def _find_by_words(ctx: SkillContext, name: str) -> NamedList | None:
    """The one list whose name holds every word asked: "the list for the trip" is the "brazil trip" list (it was
    answered "You don't have a trip list yet"); none when two lists hold them. Whose it is ("oisín's party") is not
    part of the name the list was given ("party")."""
    asked = {word for word in name.split() if not _OWNER.match(word.replace("\u2019", "'"))} or set(name.split())
    query = select(NamedList).where(NamedList.user_id == ctx.user_id)
    holding = [named for named in ctx.session.scalars(query) if asked <= set(named.name.split())]
    return holding[0] if len(holding) == 1 else None


def _names(ctx: SkillContext) -> list[str]:
    query = select(NamedList.name).where(NamedList.user_id == ctx.user_id).order_by(NamedList.name)
    return list(ctx.session.scalars(query))


def _create(ctx: SkillContext, name: str) -> NamedList:
    named = NamedList(user_id=ctx.user_id, name=name)
    ctx.session.add(named)
    ctx.session.flush()
    return named


def _rows(ctx: SkillContext, named: NamedList) -> list[ListItem]:
    query = select(ListItem).where(ListItem.list_id == named.id).order_by(ListItem.position, ListItem.id)
    return list(ctx.session.scalars(query))


def _items(ctx: SkillContext, named: NamedList) -> list[dict[str, Any]]:
    return [{"text": item.text, "checked": item.checked} for item in _rows(ctx, named)]


def _add(ctx: SkillContext, named: NamedList, texts: list[str]) -> Result:
    rows = _rows(ctx, named)
    present = {row.text.lower() for row in rows if not row.checked}
    limit = ctx.config.skills.max_list_items
    added, already = [], []
    position = max((row.position for row in rows), default=0)
    for raw in texts:
        text = clean_text(raw, ctx.config.skills.max_text_chars)
        if text.lower() in present:
            already.append(text)
            continue
        if len(rows) + len(added) >= limit:
            raise SkillError("full", f"the {named.name} list already has {limit} items")
        position += 1
        ctx.session.add(ListItem(list_id=named.id, text=text, position=position))
        present.add(text.lower())
        added.append(text)
    named.updated_at = utcnow()
    ctx.session.flush()
    return {"list": named.name, "added": added, "already_there": already, "items": _items(ctx, named)}


def _change_items(ctx: SkillContext, named: NamedList, operation: str, texts: list[str]) -> Result:
    rows = _rows(ctx, named)
    # Resolve every item first: one unknown item fails the whole action, so nothing is half-done.
    targets = [pick_one(rows, lambda row: row.text, text, f"item on the {named.name} list") for text in texts]
    for row in targets:
        if operation == "remove":
            ctx.session.delete(row)
        else:
            row.checked = operation == "check"
    named.updated_at = utcnow()
    ctx.session.flush()
    past = {"remove": "removed", "check": "checked", "uncheck": "unchecked"}[operation]
    return {"list": named.name, past: [row.text for row in targets], "items": _items(ctx, named)}


def describe(args: Arguments) -> str:
    """The operation in words, for a confirmation question."""
    items = ", ".join(args.get("items") or [])
    name = args.get("name") or "?"
    phrases = {"add": f"add {items} to the {name} list", "remove": f"remove {items} from the {name} list",
               "check": f"tick off {items} on the {name} list", "uncheck": f"untick {items} on the {name} list",
               "create": f"create a list called {name}", "delete": f"delete the whole {name} list",
               "view": f"show the {name} list"}
    return phrases[args["operation"]]


SKILL = Skill(
    name="list",
    description="Named lists the person keeps (shopping, packing, to-do): view, create, add, remove, check, "
                "uncheck items, or delete a list. Adding to a list that does not exist creates it.",
    parameters=PARAMETERS,
    run=run,
    consequential=lambda args: args["operation"] != "view",
    destructive=lambda args: args["operation"] in ("remove", "delete"),
    # Items taken off, ticked or unticked are on a list that exists (no list of the name: not_found, nothing done), so
    # what the person must have said is the items: a swap on the list holding the item ("Nikos doesn't want
    # headphones anymore, …") names no list, and asked to confirm a removal the person had asked for.
    subject=lambda args: " ".join([*([] if args["operation"] in ("remove", "check", "uncheck") else
                                     [args.get("name") or ""]), *(args.get("items") or [])]),
    describe=describe,
)
