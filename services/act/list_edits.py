"""Changes to a list told in one message, read without a model: items taken off, and items added in the same breath.

"Take the glue gun off the costume list, my neighbour Latifa will lend me hers. And add safety pins." reached the
small-model planner, which takes one action a turn: it asked to confirm the removal and the safety pins were never
added. Each sentence here that changes a list is one action; a sentence that names no list ("And add safety pins.")
changes the list the sentence before named; news between them asks nothing; any other request leaves the whole
message to the planner.
"""

from __future__ import annotations

import re
from typing import Any

from services.act.fastpath import AFTER_LIST, ASKS_SOMETHING, LIST_ADD, NAMED_LIST, POLITE, PlainAction, said_items
from services.text import SENTENCE_BREAK

# "take the glue gun off the costume list", "cross bread off my shopping list", "remove the tent from the camping list".
LIST_REMOVE = re.compile(POLITE + r"(?:take|cross|remove|delete|strike|scratch|knock)\s+(?P<items>.+?)\s+"
                         r"(?:off(?: of)?|from|out of)\s+" + NAMED_LIST + AFTER_LIST)
# "and add safety pins", "put a torch on too": items with no list named, after a sentence that named one.
ADD_TO_THE_SAME = re.compile(POLITE + r"(?:add|put)\s+(?P<items>[^.?!]+?)"
                             r"(?:\s+(?:on|to|onto) (?:it|that|the list|that list|this list)|\s+on)?"
                             r"(?:\s+(?:too|as well|also|please|pls|instead))*\W*$")
# "remove the tent from the camping list and add a tarp": a second change joined by "and".
_AND_THEN = re.compile(r",?\s+(?:and|then|and then|&)\s+(?=(?:add|put|take|cross|remove|delete)\b)")
_OPENING = re.compile(r"^(?:(?:and|also|oh|ok|okay|so|then|plus|but)[, ]+)+")
MAX_ITEMS = 10
_POINTER = re.compile(r"^(?:them|it|that|those|these|this|everything|all of it)\b")  # "put them on mine": which?


def list_edits(text: str, signals: dict[str, Any]) -> list[PlainAction]:
    """The list changes the message asks for, in order, or none (the model plans it): a removal, or two or more
    changes. One change that only adds is the fast path's (``fastpath.plain_action``)."""
    if not signals.get("skill_list"):
        return []
    lowered = " ".join(text.replace("\u2019", "'").lower().split())
    edits: list[PlainAction] = []
    for sentence in (part for whole in SENTENCE_BREAK.split(lowered) for part in _AND_THEN.split(whole)):
        sentence = _OPENING.sub("", sentence.strip())
        edit = _edit(sentence, edits[-1].arguments["name"] if edits else None)
        if edit is not None:
            edits.append(edit)
        elif ASKS_SOMETHING.search(sentence):
            return []  # a request these sentences do not read
    removes = any(edit.arguments["operation"] == "remove" for edit in edits)
    return edits if removes or len(edits) > 1 else []


def _edit(sentence: str, named_before: str | None) -> PlainAction | None:
    for operation, pattern in (("remove", LIST_REMOVE), ("add", LIST_ADD)):
        match = pattern.match(sentence)
        if match:
            return _change(operation, match["name"].strip(), match["items"])
    if named_before is None:
        return None
    same = ADD_TO_THE_SAME.match(sentence)
    return _change("add", named_before, same["items"]) if same else None


def _change(operation: str, name: str, said: str) -> PlainAction | None:
    items = said_items(said)
    if not items or len(items) > MAX_ITEMS or any(_POINTER.match(item) for item in items):
        return None
    return PlainAction("list", {"operation": operation, "name": name, "items": items})
