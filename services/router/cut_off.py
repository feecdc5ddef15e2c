"""What a request's form alone leaves out (``services/router/objects.py`` reads it before the object): an unfilled
template in the request ("remind me to [thing] at [time]", "add FILL_ME to the list", "remind me on YYYY-MM-DD"), or the
request cut off on a word that waits for more ("remind me to", "set a goal to... actually no", "remember that my locker
PIN is", "save my bank PIN which is")."""

from __future__ import annotations

import re

from services.router.command_words import (
    COPULA_OPENERS,
    COPULA_POINTERS,
    COPULAS,
    DANGLING_WORDS,
    FUSED_COPULAS,
    RELATIVE_WORDS,
    REQUEST_LEADS,
    STORING_VERBS,
    STRANDED_PREPOSITIONS,
)
from services.router.template_words import TEMPLATE_RE
from services.router.words import WORD_RE

# Where a clause breaks off rather than ends: "set a goal to... actually no", "remind me to -".
_TRAILING_RE = re.compile(r"\s*(?:\.{2,}|…|[-–—]+)")
# A verb done or doing before a last preposition strands it at the end of a clause of its own ("what she asked for",
# "the one I was looking at"), where a command cut off waits for its object ("set a goal to").
_STRANDED_AFTER_RE = re.compile(r"(?:[a-z]{2,}[^e]ed|[a-z]{2,}ing)$")


# Words an entry's measure or place waits after, as well: "Goal for the spring: get my 10k time under", "Note: the
# spare key is below" (only in an entry: "the shop I got it from" ends a clause of its own elsewhere).
_ENTRY_DANGLING = frozenset("under below than until till between into onto towards".split())
# An entry under a skill's label, cut off on a word that waits for more: "Goal: get my weight down to", "Note: the wifi
# password is", "Shopping list: milk, bread and" (not on a preposition a verb strands: "... the party I'm going to");
# under a command to store it as well: "Save this: the code for the side gate is" (the fact never given).
_CUT_ENTRY_RE = re.compile(
    r"^(?:(?:(?:new|my|a|quick) )?(?:goal|target|aim|reminder|note|memo|list|shopping list|to-?do|todo|task|fact)"
    rf"|(?:(?:please|pls|plz|kindly|just) )*(?:{'|'.join(sorted(STORING_VERBS))})\b)"
    r"(?: [a-z'-]+){0,3}\s*:\s*(?:[^\n]*\s)?"
    rf"(?<!ing )(?<!ed )(?:{'|'.join(sorted(DANGLING_WORDS | COPULAS | _ENTRY_DANGLING))})"
    r"(?:\s*(?:\.{2,}|…|[-–—]+))?\s*$")


def cut_entry(lower: str) -> bool:
    """Whether ``lower`` is an entry under a skill's label cut off before its content ("Goal: get my weight
    down to")."""
    return ":" in lower and _CUT_ENTRY_RE.match(lower) is not None


# Requests that create a thing rather than act on one, not read for an object (``objects.OBJECT_VERBS``), are still cut
# off on a word that waits for more: "start a list for the barbecue with", "create a goal to".
_CREATING_VERBS = frozenset("start create begin open".split())
# A task after "to" cut off on a verb that must take an object: "set a goal to lose", "remind me to buy" (not "the
# weight I want to lose", where the object came first, nor "set a goal to run").
_OBJECT_NEEDED = frozenset("lose gain reach hit save earn cut pay buy get build learn finish complete visit".split())
_TASK_HOLDERS = frozenset("me us goal target aim note reminder resolution challenge".split())


def cut_off_creating(lower: str) -> bool:
    """Whether ``lower`` is a one-clause request to create something ("start a list for the barbecue with") cut off on
    a word that waits for more."""
    matches = list(WORD_RE.finditer(lower))
    index = 0
    while index < len(matches) and matches[index][0] in REQUEST_LEADS:
        index += 1
    if index >= len(matches) or matches[index][0] not in _CREATING_VERBS:
        return False
    return missing_by_form(lower, lower, matches, index, len(lower)) == "cut off"


def missing_by_form(lower: str, clause: str, matches: list[re.Match[str]], index: int, end: int) -> str:
    """Why a request's object is missing by its form alone, or "": an unfilled template in it, or the request cut
    off on a word that waits for more ("remind me to", "set a goal to... actually I don't know")."""
    if TEMPLATE_RE.search(clause):
        return "an unfilled template"
    if clause.rstrip().endswith(":") and not WORD_RE.search(lower, end):
        return "announced, never given"  # "start a list for the garden centre:", and nothing after the colon
    last = matches[-1][0]
    trailing = _TRAILING_RE.match(lower, end) is not None
    if len(matches) > index + 1 and last in DANGLING_WORDS and (trailing or not WORD_RE.search(lower, end)) and not (
            last in STRANDED_PREPOSITIONS and _STRANDED_AFTER_RE.search(matches[-2][0])):
        return "cut off"  # but "... before I forget what my aunt asked for" ends a clause of its own
    ended = trailing or not WORD_RE.search(lower, end)
    if last in _OBJECT_NEEDED and len(matches) > index + 3 and ended and matches[-2][0] == "to" and (
            matches[-3][0] in _TASK_HOLDERS):
        return "cut off"  # "set a goal to lose": lose what?
    after_comma = clause[:matches[-1].start()].rstrip().endswith(",")
    if last in FUSED_COPULAS and len(matches) > index + 2 and ended and after_comma:
        return "cut off"  # "store my new PIN, it's"
    if last in COPULAS and len(matches) > index + 2 and ended and _relative(matches[index + 1:-1]):
        return "cut off"  # "save my bank PIN which is": the fact's noun, then the clause cut off
    if last in COPULAS and len(matches) > index + 2 and matches[-2][0] not in COPULA_POINTERS and (
            ended) and not COPULA_OPENERS.intersection(match[0] for match in matches[index + 1:-1]):
        return "cut off"  # "remember that my locker PIN is", not "remember where the car is"
    return ""


def _relative(before: list[re.Match[str]]) -> bool:
    """Whether the words ``before`` a last copula end on a relative pronoun after a noun ("my PIN which", "the code
    that"), not on a question word or after one ("remember what that is")."""
    words = [match[0] for match in before]
    return len(words) >= 2 and words[-1] in RELATIVE_WORDS and words[-2] not in COPULA_OPENERS | RELATIVE_WORDS
