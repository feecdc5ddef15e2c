"""Messages that want an answer in words, not a stored thing: a writing task or a capability or how-to question in a
skill's words ("draft a reminder email", "can you set reminders?"), a question about the world ("why do reminders
fail?"), a question about what the person told ("what did I tell you about my landlord?").

Split from ``services/router/signals.py``, which turns these into ``writing_task``, ``capability_question``,
``general_question`` and ``past_question``; the lexicons live in ``services/router/answer_words.py``,
``services/router/words.py`` and ``services/router/store_words.py``.
"""

from __future__ import annotations

import re
from functools import lru_cache

from services.router.answer_words import ADVICE_RE, CAPABILITY_RE, HOWTO_RE, PLAN_WRITING_RE, WRITING_RE
from services.router.command_words import IMPERATIVE_VERBS
from services.router.form_words import WH_CLAUSE_RE, about_the_ask
from services.router.store_words import ASKS_IN_WORDS_RE, SAID_RE, SKILL_STORE_RE
from services.router.textview import TextView, is_aux_question
from services.router.time_words import says_time
from services.router.words import (
    FIRST_PERSON,
    LEAD_IN_RE,
    QUESTION_SENTENCE_RE,
    REQUEST_RE,
    SKILL_RES,
    STORED_PICKED_RE,
    WORD_RE,
)

# A colon that hands content over (not one inside a time: "at 7:30").
_HANDING_COLON_RE = re.compile(r"(?<!\d):(?!\d)")
# Skills whose command hands its content over after a colon: "track this goal: write 500 words a day".
_HANDING_SKILLS = ("goal", "remember", "list", "remind")


@lru_cache(maxsize=64)  # the imperative and the slot signals both ask
def asks_for_text(view: TextView) -> tuple[bool, bool]:
    """(writing task, capability or how-to question): messages in a skill's words that want a written answer."""
    body = _asked_part(view.unled)
    capability = CAPABILITY_RE.match(view.lower) is not None or HOWTO_RE.search(view.lower) is not None
    writing = any(regex.search(body) is not None for regex in (WRITING_RE, ADVICE_RE, PLAN_WRITING_RE))
    return writing, capability


def _asked_part(body: str) -> str:
    """What the message asks for: a skill's command before a colon, whose content after it is the entry, not a task of
    its own ("Log this goal for me: write one chapter a month", "memo: draft the budget by Friday"), or all of it."""
    handed = _HANDING_COLON_RE.search(body)
    if handed is None:
        return body
    head = body[:handed.end()]
    return head if any(SKILL_RES[name].search(head) for name in _HANDING_SKILLS) else body


@lru_cache(maxsize=64)  # the skill and the slot signals both ask
def is_general_question(view: TextView) -> bool:
    """A question about the world, not a request nor about the person: no request form anywhere, and the question
    itself (its last sentence ending in "?") says nothing of "I", "my" or "we" ("What's the best way to schedule
    study sessions?", "I always lose my lists. Is paper or an app better?", "Do you remember when phones had
    buttons? crazy how fast things change")."""
    questions = QUESTION_SENTENCE_RE.findall(view.lower)
    if not questions and WH_CLAUSE_RE.match(view.lower):
        questions = [view.lower]  # "how do reminders work on an iPhone", asked without a question mark
    if not questions or REQUEST_RE.search(view.lower) or about_the_ask(questions, view.lower):
        return False
    if STORED_PICKED_RE.search(view.lower) or says_time(view.lower):
        return False  # "any reminders today?" reads the person's own stored things
    body = WORD_RE.findall(LEAD_IN_RE.sub("", questions[-1].strip()))
    imperative = bool(body) and body[0] in IMPERATIVE_VERBS and not is_aux_question(body)  # not "do you ..."
    return bool(body) and not imperative and not FIRST_PERSON.intersection(body)


def asks_past_in_words(view: TextView, skills: dict[str, float], question: bool) -> bool:
    """A question about what the person told, or a fact of theirs, that wants an answer in words (RESPOND): "what did
    I tell you about my landlord?", "do you remember where I parked?", "remind me what my passport number is".

    Not a command to show stored items ("show my saved notes", "look up what I told you about X"), nor a question
    about a skill's own store ("what's my next reminder?", "what are my goals?"), unless it asks what was *said*
    about it ("when did I say my dentist appointment was?")."""
    if not (skills["skill_recall"] or skills["skill_introspect"]) or skills["shows_stored"]:
        return False
    if not question and ASKS_IN_WORDS_RE.search(view.lower) is None:
        return False  # "summarise what you know about me", "tell me everything you've stored": commands
    # "remind me what my passport number is": the ask's own "remind" names no stored reminder.
    names_store = SKILL_STORE_RE.search(ASKS_IN_WORDS_RE.sub(" ", view.lower)) is not None
    return not names_store or SAID_RE.search(view.lower) is not None
