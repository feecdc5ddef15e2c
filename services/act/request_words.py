"""The words of a request to a skill, as the ACT fast path reads them (``services/act/fastpath.py`` and
``services/act/reminder_request.py``): the polite lead-in, what marks a further request, where a sentence starts, and
the one action a plain request asks for."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from services.router.form_words import PLEASE_ABROAD

# "Please" as typed, here and abroad ("abeg create a generator list with …", "add filters to the truck list bitte").
PLEASE_WORDS = rf"please|pls|plz|{PLEASE_ABROAD}"
FAST_PATH = "fast_path"  # the trail marks actions taken this way, and the loop's end reason
POLITE = (r"^(?:(?:hey|hi|ok|okay|so|also|and|oh|plus|btw|anyway)[, ]+)*"
          rf"(?:(?:{PLEASE_WORDS}|kindly|let's)[, ]+)?"
           r"(?:(?:can|could|would|will) (?:you|u)(?: be so kind as to| kindly)?\s+"
           # "I would be grateful if you would create …", "I'd appreciate it if you could add …"
           r"|i(?: would|'d) (?:be (?:grateful|obliged)|appreciate it) if (?:you|u)(?: would| could|'d)?\s+)?"
           # "Please also add empanadas to the bake sale list"
           r"(?:please\s+)?(?:also\s+)?")
# The words of a request to a skill: a part of a message holding one asks for something the fast path must not drop.
REQUEST_WORDS = r"remind|add|put|remove|delete|schedule|set|create|make|list"
ASKS_SOMETHING = re.compile(rf"\?|\b(?:{REQUEST_WORDS}|{PLEASE_WORDS}|can you|could you|would you)\b")
# A list request may follow a sentence or a lead-in ending in a colon ("ok practical thing: add …").
SENTENCE_STARTS = re.compile(r"^|(?<=[.!?:])\s+")


@dataclass(frozen=True)
class PlainAction:
    skill: str
    arguments: dict[str, Any]


def asks_again(task: str) -> bool:
    """A reminder's or an item's text that runs on into another request ("call mum. add milk to my list"): the model
    plans both."""
    return any(ASKS_SOMETHING.search(task[start.end():]) for start in SENTENCE_STARTS.finditer(task) if start.start())
