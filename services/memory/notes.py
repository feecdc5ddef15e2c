"""The small model's notes: one line per thing known, under the day it was told, in the person's words.

``services/memory/context`` decides what goes in; this module writes the lines (``Budget`` bounds them).
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from services.memory.recall import RecallHit
from services.memory.refusals import DIET_WORD, REFUSING
from services.memory.second_person import to_you
from services.memory.timewords import anchored, spoken_day

TURN_CHARS = 240
# Words of a message that may be about what is set for later: plans and lists, and times and days.
_SET_FOR_LATER = re.compile(r"\b(remind\w*|lists?|schedul\w*|plans?|planned|to-?do|agenda|appointments?|supposed to)\b")
# not "get": "How do I get to work?"; "bring", "pack", "pick up": "what have i to bring with me for the trip?" is
# about the packing list (without it in the note, the 1.5B answered "a camera, some snacks").
_NEEDS = re.compile(r"\b(need to|have to|buy|shop\w*|bring|pack|packing|pick up)\b")
# "when" is not one of them: asked "When is my thesis defence?", the 1.5B answered with the date of a reminder
# about a chapter draft; a question about something set for later shares a word with it ("when does Ana land?").
_TIMES = re.compile(r"\b(today|tonight|tomorrow|morning|afternoon|evening|week|weekend"
                    r"|(?:mon|tues|wednes|thurs|fri|satur|sun)day|january|february|march|april|may|june|july|august|september|october|november"
                    r"|december)\b")
_WORD = re.compile(r"[a-z]{4,}")
_LINE_WORDS = {"your", "list", "lists", "reminder", "with"}  # words of every pending line's head
# A message asking for an idea ("What should I cook?", "Any music recommendations?"), and a fact saying what the
# person likes or avoids: the 1.5B read "Fish and seafood make you sick" in the block and still offered salmon;
# said again just before the question, the fact is where the model looks.
# As people ask: "what appetizer should I make", "what kind of exercise should I do", "whats a cheap easy lunch i cud
# make", "What I drink after?", "where could we go", "wetin I fit grill?" (Nigerian English's "what can I grill?"),
# "gimme 5 songs for the road", "propose me one dish", "the handiest way for me to get up to Belfast".
_WHAT = r"(?:what|which|where|wat|wot|wetin)(?:'s|s)?"
_MAY = r"(?:should|could|can|shall|might|cud|shud|fit)"
_IDEAS = re.compile(r"\b(?:suggest\w*|recommend\w*|ideas?|tips?|"
                    rf"{_WHAT}(?: (?:kind|sort|type)s? of)?(?: [a-z]+){{0,3}}? {_MAY} (?:i|we)|"
                    rf"{_WHAT}(?: [a-z]+){{0,4}}? (?:i|we) {_MAY}|"
                    r"(?:what|wat|wot|wetin) (?:i|we) (?:drink|eat|cook|make|wear|read|watch|play|bring|buy)|"
                    r"(?:give|propose|suggest) (?:me|us)|gimme|recipes?|"
                    r"(?:best|handiest|easiest|cheapest|quickest) way|"
                    r"what to (?:cook|eat|get|order|make|bring|buy|drink|wear|watch|read|play)|something (?:to|for))\b")
# ... and what they keep to or find gross: "only drink iced stuff, hot drinks r gross" (asked for a drink for an all
# nighter, the 1.5B offered hot chocolate without it in the note).
_LIKES = re.compile(r"\b(?:prefers?|loves?|likes?|enjoys?|favou?rite|into|fan of|"
                    r"only (?:drinks?|eats?|wears?|reads?|watch(?:es)?|listens? to)|"
                    r"(?:is|are|r|so) (?:gross|disgusting|vile|revolting)|"
                    # what they cut down on or cannot take: "no more caffeine for me", "trying to cut sugar",
                    # "lactose intolerant", "not a fan of horror movies"
                    r"no more|cut(?:ting)? (?:down on|out|back on)|trying to (?:cut|avoid|quit)|intolerant|"
                    r"allerg(?:ic|y|ies))\b", re.IGNORECASE)


class Budget:
    """Characters left for the block."""

    def __init__(self, chars: int) -> None:
        self.left = chars

    def take(self, line: str) -> bool:
        if len(line) + 1 > self.left:
            return False
        self.left -= len(line) + 1
        return True


def short(text: str, limit: int = TURN_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def compact_notes(items: list[tuple[dt.datetime | None, str]], pending: list[str], budget: Budget) -> str:
    """One line per thing known under its day, oldest first, in the person's own words.

    A small model read the titled sections as a transcript (it answered as "the user", copied "(as of
    …)") and took an older fact over the newer one that replaced it. Here every item is one line, in
    time order under the day it was told, so that the last word on a subject comes last; recalled turns
    show only what the person said (the assistant's old replies are not evidence about them); the first
    items (the most relevant) are the ones kept when the budget runs out. The day heads a group instead
    of every line: Qwen's tokenizer spends a token per digit, so a date on each of twelve lines was ~150
    of the note's ~250 tokens.
    """
    pending = [line for line in pending if budget.take(line)]
    kept = [(at, line) for at, line in items if line and budget.take(f"{note_day(at)}:\n{line}")]
    kept.sort(key=lambda item: item[0] or dt.datetime.min.replace(tzinfo=dt.UTC))
    out: list[str] = []
    day = None
    for at, line in kept:
        if note_day(at) != day:
            day = note_day(at)
            out.append(f"{day}:")
        if line not in out:
            out.append(line)
    if pending:
        out.append("Set for later:")
    return "\n".join(out + list(dict.fromkeys(pending)))


def note_fact(text: str, at: dt.datetime | None) -> str:
    return f"- {anchored(to_you(short(text).rstrip('.')), at)}."


def note_day(at: dt.datetime | None) -> str:
    """"29 November 2026": as people write it, and six of Qwen's tokens where the ISO form takes ten."""
    return spoken_day(at.date()) if at else "date unknown"


def note_episode(hit: RecallHit) -> str:
    return f"- {short(hit.text, 200).rstrip('.')}."


def note_said(hit: RecallHit) -> str:
    """What people said in a recalled exchange, quoted ("" when only the assistant spoke).

    The assistant's old replies are no evidence about anyone; the person's turns and, in an imported
    conversation, each named speaker's are ("Melanie said …"), their relative time words dated.
    """
    said = [line for line in hit.lines if line.get("speaker") != "assistant"] if hit.lines else [
        {"at": hit.at, "text": hit.meta.get("user_text", hit.text), "speaker": "user"}]
    return "\n".join(f'- {_speaker(line.get("speaker"))} said "{anchored(short(line["text"]), line.get("at"))}"'
                     for line in said if str(line.get("text") or "").strip())


def _speaker(name: Any) -> str:
    return "you" if name in (None, "", "user") else str(name)


def about_plans(message: str, pending: list[str]) -> bool:
    """Whether a message may be about what is set for later: it speaks of plans, lists or a time, or shares a
    word with one of the ``pending`` lines' items. Every other message goes without those lines: they were
    ~60 of the ~150 tokens the 1.5B model read for "Tell me a short joke" (a second and more on 2 cores). A time
    or "get" alone does not bring them to a message asking for an idea: asked "What can I make the kids for dinner
    tonight?" with a shopping list in its note, the 1.5B offered the list's glue sticks and crayons. A shared word
    may be a list's name as well as an item."""
    lowered = message.lower()
    loose = _TIMES.search(lowered) or _NEEDS.search(lowered)
    if _SET_FOR_LATER.search(lowered) or (loose and not asks_for_ideas(message)):
        return True
    # A list's name is one of its words: "What did I say I need for the truck?" is about the truck list.
    named = {word for line in pending for word in _WORD.findall(line.lower()) if not _TIMES.fullmatch(word)}
    return bool((named - _LINE_WORDS) & set(_WORD.findall(lowered)))


def asks_for_ideas(message: str) -> bool:
    return _IDEAS.search(message.lower()) is not None


def tells_taste(fact: str) -> bool:
    """A fact of what the person likes, avoids or cannot have."""
    return bool(REFUSING.search(fact) or DIET_WORD.search(fact) or _LIKES.search(fact))
