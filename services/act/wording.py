"""Replies to an action written from its trail entry, without a model: what was done, or why it was not.

Under the small-model profile an action chosen by the fast path or the small planner is answered with these:
a 0.5B model asked to word a skill's JSON result retold the prompt or claimed what did not happen, and when
it failed the turn ended in "I had trouble ...". Only a recall's findings are worded by the model (and listed
plainly by ``found_reply`` when it fails).
"""

from __future__ import annotations

import re
from typing import Any

from services.act.recurrence import describe_rule

REMINDERS_READ = 5  # the soonest reminders a question about them is answered with
FOUND_SHOWN = 3  # recalled memories listed when the model could not word them


def plain_reply(entry: dict[str, Any]) -> str | None:
    """The reply to one action, written from its trail entry; None when the model should write it (a recall)."""
    result, error = entry.get("result") or {}, entry.get("error") or {}
    skill, ok = entry.get("skill"), bool(entry.get("ok"))
    if skill == "list":
        return _list_reply(entry.get("arguments") or {}, result, error, ok) or (None if ok else failed_reply(entry))
    if not ok:
        return failed_reply(entry)
    if skill == "schedule":
        return _schedule_reply(result)
    if skill == "memorize":
        return f"Noted, I'll remember: {result.get('text')}."
    if skill == "goal" and "goals" in result:  # "list my goals"
        if not result["goals"]:
            return "You have no goals yet."
        return "Your goals: " + "; ".join(f"{goal['text']} ({goal['state']})" for goal in result["goals"]) + "."
    if skill == "goal" and "created" in result:
        return f"New goal recorded: {result['created'].get('text')}. I'll keep track of it with you."
    if skill == "goal" and "updated" in result:
        goal = result["updated"]
        notes = goal.get("progress") or []
        change = f"noted \"{notes[-1].get('note')}\"" if notes and notes[-1].get("note") else "updated it"
        state = f" It is now {goal.get('state')}." if goal.get("state") != "active" else ""
        return f"Your goal \"{goal.get('text')}\": {change}.{state}"
    return None


def _schedule_reply(result: dict[str, Any]) -> str | None:
    if "items" in result:
        reminders = [item for item in result["items"] if item.get("kind") == "reminder"][:REMINDERS_READ]
        if not reminders:
            return "You have no reminders set."
        return "Your reminders: " + "; ".join(f"{item['when']}: {item['text']}" for item in reminders) + "."
    if "created" in result:
        # The time first: after it, what the person said runs on as it will ("… to call the supplier, they have
        # delayed two weeks now" read "… two weeks now on Friday"), said back to them ("renew your licence").
        created = result["created"]
        what = said_back(str(created.get("text") or ""))
        if created.get("recurrence"):
            every = describe_rule(created["recurrence"])
            return f"Done: I'll remind you {every}, from {created.get('when')}, to {what}."
        return f"Done: I'll remind you on {created.get('when')} to {what}."
    if "moved" in result:
        return f"Moved your reminder \"{result['moved'].get('text')}\" to {result['moved'].get('when')}."
    if "cancelled" in result:
        return f"Cancelled your reminder \"{result['cancelled'].get('text')}\" ({result['cancelled'].get('when')})."
    return None


_FIRST_PERSON = {"i": "you", "me": "you", "my": "your", "mine": "yours", "myself": "yourself", "i'm": "you're",
                 "im": "you're", "i've": "you've", "i'll": "you'll", "i'd": "you'd"}
_AGREES_WITH_I = {"am": "are", "was": "were", "wasn't": "weren't"}  # "I am" → "you are", "am I late?" → "are you late?"
_WORD = re.compile(r"[A-Za-z']+")


def said_back(text: str) -> str:
    """The person's words said back to them: "renew my licence, I keep forgetting" → "renew your licence, you keep
    forgetting"; "am", "was" and "wasn't" agree with "you" only beside "I" ("I was", "am I late?", "was I right?"),
    else they stay ("the form was late")."""
    words = list(_WORD.finditer(text))
    said = [match[0].lower() for match in words]
    parts, end = [], 0
    for index, match in enumerate(words):
        word = said[index]
        beside_i = "i" in said[max(index - 1, 0):index] + said[index + 1:index + 2]
        swapped = (_AGREES_WITH_I[word] if word in _AGREES_WITH_I and beside_i
                   else _FIRST_PERSON.get(word, match[0]))
        if word in _AGREES_WITH_I and match[0][0].isupper():
            swapped = swapped.capitalize()  # "Was I late?" → "Were you late?"
        parts += [text[end:match.start()], swapped]
        end = match.end()
    return "".join(parts) + text[end:]


def _list_reply(arguments: dict[str, Any], result: dict[str, Any], error: dict[str, Any], ok: bool) -> str | None:
    name = result.get("list") or arguments.get("name") or "that"
    if not ok:
        if error.get("code") == "not_found" and "lists" in error:
            known = ", ".join(error.get("lists") or []) or "none yet"
            return f"You don't have {_article(name)} {name} list yet (your lists: {known})."
        return None
    items = [item["text"] for item in result.get("items") or [] if not item.get("checked")]
    operation = arguments.get("operation")
    if operation == "view":
        return f"Your {name} list is empty." if not items else f"On your {name} list: {_join(items)}."
    if result.get("deleted"):
        return f"Deleted your {name} list."
    done = {"remove": ("removed", "Removed {} from"), "check": ("checked", "Ticked off {} on"),
            "uncheck": ("unchecked", "Put {} back on")}.get(str(operation))
    if done is not None:
        return f"{done[1].format(_join(result.get(done[0]) or []))} your {name} list. Still on it: {_join(items)}."
    added, already = result.get("added") or [], result.get("already_there") or []
    parts = [f"Added {_join(added)} to your {name} list." if added else ""]
    if already:
        parts.append(f"{_join(already)} {'was' if len(already) == 1 else 'were'} already on it.")
    parts.append(f"It now has: {_join(items)}.")
    return " ".join(part for part in parts if part)


def failed_reply(entry: dict[str, Any]) -> str:
    """Why an action did not happen, in the skill's own words, with what there is to choose from."""
    error = entry.get("error") or {}
    message = str(error.get("message") or "it did not work").rstrip(".")
    choices = error.get("candidates") or error.get("available") or []
    shown = [choice.get("text", "") if isinstance(choice, dict) else str(choice) for choice in choices][:8]
    there = f" There is: {_join([text for text in shown if text])}." if any(shown) else ""
    return f"I couldn't do that: {message}.{there}"


def found_reply(entry: dict[str, Any]) -> str:
    """A recall's findings listed as they are (when the model could not word them)."""
    items = [item for item in (entry.get("result") or {}).get("items") or [] if item.get("text")][:FOUND_SHOWN]
    if not items:
        return "I don't find anything about that in what you've told me."
    return "Here is what I have on that:\n" + "\n".join(f"- {item['text']}" for item in items)


def _article(word: str) -> str:
    """"an" before a vowel's sound as most names spell it ("an apartment list"), else "a"."""
    return "an" if word[:1].lower() in "aeiou" else "a"


def _join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1] if items else "nothing"
