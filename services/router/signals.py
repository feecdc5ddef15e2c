"""Observable signals the mode router scores: small pure functions of the text and the context.

Every function returns a dict of float signals so the router can weigh any of them with a
weight from ``configs/router.toml``. The lexicons they match live in ``services/router/words.py``,
``services/router/command_words.py``, ``services/router/answer_words.py`` (asking for a written answer),
``services/router/reference_words.py``, ``services/router/store_words.py``, ``services/router/time_words.py`` and
``services/router/mood_words.py``; what wants an answer in words is read by ``services/router/answers.py``, the
text's own form (length, mashing, questions, phatic talk) by ``services/router/textview.py`` with
``services/router/form_words.py``, pointers at earlier turns by ``services/router/references.py``, and what a request
acts on by ``services/router/objects.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from services.router.answers import asks_for_text, asks_past_in_words, is_general_question
from services.router.command_words import (
    COMMAND_CLAUSE_RE,
    DEED_RE,
    GOAL_STATED_RE,
    HANDED_OVER_RE,
    IMPERATIVE_VERBS,
    LABEL_RE,
    OWN_DEED_QUESTION_RE,
    POINTER_COMMAND_RE,
    STORING_VERBS,
    TOLD_RE,
    VERB_ME_RE,
)
from services.router.cut_off import cut_entry, cut_off_creating
from services.router.mood_words import DAY_TOLD_MIN_WORDS, DAY_TOLD_RE, DISTRESS_RE, REASSURED_RE, not_of_the_person
from services.router.objects import deed_again, request_object
from services.router.prefilter import Prefiltered
from services.router.reference_words import (
    ANAPHORIC_NP_RE,
    HABITUAL_RE,
    KIND_ALONE_RE,
    SHIFT_WORDS,
    without_deictic_object,
)
from services.router.references import reference_signals
from services.router.slot_words import MANAGE_WORDS, QUANTIFIERS, SKILL_WORDS
from services.router.store_words import (
    BARE_EDIT_RE,
    BARE_STORE_RE,
    EMPTY_ENTRIES_RE,
    PROMPT_ME_RE,
    SHOW_STORED_RE,
    SHOWN_MORE_RE,
)
from services.router.template_words import TEMPLATE_RE
from services.router.textview import (
    TextView,
    content_without_time,
    flag,
    interrogative_signals,
    phatic_signals,
    shrug_free,
    text_features,
    text_view,
)
from services.router.time_words import CLOCK_FOR_RE, DURATION_RE, TOLD_AT_RE, says_time, times_replaced
from services.router.vague_words import STUFF_ASK_RE, VAGUE_ASK_RE
from services.router.words import (
    CONFIRM_RE,
    LIST_ITEMS_RE,
    LIST_WRITE_RE,
    MANAGE_VERB_RE,
    NAMED_LIST_RE,
    NO_TASK_NEEDED_RE,
    READ_QUESTION_RE,
    REMIND_EXPLAIN_RE,
    REQUEST_RE,
    SKILL_RES,
    STOPWORDS,
    TIMED_STORED_RE,
    WHOLE_LIST_RE,
    WORD_RE,
)

MODES = ("RESPOND", "CLARIFY", "ACKNOWLEDGE", "ACT", "IGNORE")
# Each skill's words, searched only in a message holding one of the literals its pattern cannot match without; the
# long ones that long messages reach run grouped by first character (``first_chars.py``).
_GROUPED_SKILLS = frozenset({"list", "remember", "goal", "recall"})
_SKILL_SEARCHES = {name: Prefiltered(regex, name in _GROUPED_SKILLS) for name, regex in SKILL_RES.items()}

@dataclass
class RoutingContext:
    """Everything the router looks at for one message; built by the digest job or ``engram route``."""

    text: str
    embedding: np.ndarray | None = None
    working_memory: Sequence[tuple[str, str]] = field(default_factory=list)  # (user_text, reply), most recent last
    context_warmth: float = 0.0
    memory_confidence: float = 0.0
    topic_confidence: float = 0.0
    topic_is_new: bool = False
    previous_mode: str | None = None
    turns_since_previous_mode: int = 1
    pending_confirmation: bool = False


def skill_signals(view: TextView) -> dict[str, float]:
    """One signal per innate skill (remind, schedule, list, remember, recall, introspect, goal, forget).

    ``skill_manage`` covers edits of what is already stored: cancelling or moving reminders, ticking
    or removing list items, deleting or creating whole lists, completing or dropping goals.
    """
    body = view.unled
    signals = {f"skill_{name}": flag(regex.search(body) is not None) for name, regex in _SKILL_SEARCHES.items()}
    # A command to show stored items reads them back, like recall ("show my reminders", "list my goals").
    shows = flag(SHOW_STORED_RE.search(view.lower) is not None or SHOWN_MORE_RE.search(view.lower) is not None)
    signals["skill_recall"] = max(signals["skill_recall"], shows)
    # "every evening at 9:30, ask me how my day went", "at 10 tonight check in with me": a time opens the clause.
    if says_time(body) and PROMPT_ME_RE.search(times_replaced(body, ",")):
        signals["skill_schedule"] = 1.0
    found = request_object(view.lower)
    if found is not None and found.kind == "pointer" and found.verb in STORING_VERBS:
        # "store what I told you about the boat" does something to what was said, it does not read it back.
        signals.update(skill_recall=0.0, skill_introspect=0.0)
    signals["skill_any"] = max(signals.values())
    signals["shows_stored"] = shows
    signals["remind_explain"] = flag(REMIND_EXPLAIN_RE.search(view.lower) is not None)
    return signals


def is_action_request(view: TextView) -> bool:
    """Whether the message asks for a skill that writes something (and therefore needs slots)."""
    skills = skill_signals(view)
    return _is_write(view, skills) and not skills["remind_explain"]


def _is_write(view: TextView, skills: dict[str, float]) -> bool:
    if any(asks_for_text(view)) or is_general_question(view):
        return False  # "draft a reminder email", "can you set reminders?", "why do reminders fail?": nothing to store
    if skills.get("shows_stored"):
        return False  # "list my goals" reads them: no goal to set
    if skills["skill_forget"]:
        return True  # "erase what I told you about X" mentions the past to remove it
    if skills["skill_recall"] or skills["skill_introspect"]:
        return False  # "remind me what I said about X" reads, it does not write
    if skills["skill_manage"]:
        return not READ_QUESTION_RE.match(view.lower)  # "what reminders do I have?" reads
    if skills["skill_remind"] or skills["skill_schedule"]:
        return not READ_QUESTION_RE.match(view.lower)  # "what was the reminder I set for tonight?" reads
    if skills["skill_remember"]:
        return True
    if skills["skill_goal"]:
        return not READ_QUESTION_RE.match(view.lower)  # "how am I doing on my goals?" reads
    # "Add ... to my list", or the list and its items with no verb ("packing list: passport, charger"), or a deed done
    # again on it ("do the same for Dad's list": whatever was written before).
    return bool(skills["skill_list"]) and (LIST_WRITE_RE.search(view.lower) is not None
                                           or LIST_ITEMS_RE.search(view.lower) is not None or deed_again(view.lower))


def slot_signals(view: TextView, skills: dict[str, float], resolved_reference: bool,
                 working_memory: Sequence[tuple[str, str]] = (), pointed: bool = False) -> dict[str, float]:
    """Slot completeness for write actions: reminders/schedules need what and when, lists an item, edits a target;
    ``pointed``: the command's object is a pointer (``commanded_pointer``), so the rest of the message is no task."""
    action = _is_write(view, skills) and not skills["remind_explain"]
    # A time given as one before it is not given: "set the alarm for the same time as last Friday".
    has_time = says_time(TOLD_AT_RE.sub(" ", HABITUAL_RE.sub(" ", view.lower))) or (
        NO_TASK_NEEDED_RE.search(view.lower) is not None and (
            DURATION_RE.search(view.lower) is not None or CLOCK_FOR_RE.search(view.lower) is not None))
    if resolved_reference and working_memory:  # "Schedule it." after "the dentist is on Friday at 10"
        has_time = has_time or says_time(working_memory[-1][0].lower())
    if not action:  # nothing to write, so no slot to fill: the task's words need no reading
        return {"action_request": 0.0, "has_time": flag(has_time), "has_task": 0.0, "slot_missing": 0.0,
                "slots_complete": 0.0}
    # "the ones I listed" is no task of its own: only what the earlier turn said would be. Nor is a lead-in or a thanks
    # before the command ("Perdón, push that reminder to later": "perd" is no task).
    lead_free = view.after_thanks
    pointer_free = view if resolved_reference else text_view(  # nor is "the rest", "the new ones" or "the usual"
        KIND_ALONE_RE.sub(" ", HABITUAL_RE.sub(" ", ANAPHORIC_NP_RE.sub(" ", without_deictic_object(lead_free)))))
    if skills["skill_list"]:  # "add to my packing list": the list's name is not an item
        pointer_free = text_view(NAMED_LIST_RE.sub(" ", pointer_free.lower))
    task_words = [w for w in content_without_time(pointer_free) if w not in SKILL_WORDS]
    # A slot left unfilled anywhere names nothing either: "new goal: GOAL_NAME", "remind me on the dd.mm at 9".
    # So does a colon with nothing after it: "Start a list for the garden centre:" announces what it never gives.
    unfilled = _placeholder(view) or TEMPLATE_RE.search(view.lower) is not None or cut_entry(view.lower) or (
        view.lower.rstrip().endswith(":"))
    if skills["skill_forget"] or skills["skill_manage"]:
        # Editing or forgetting acts on something that exists: it needs *which* one, never a new time; nor does where
        # it is moved say which ("push that reminder back an hour").
        has_task = (resolved_reference or any(w not in MANAGE_WORDS and w not in SHIFT_WORDS for w in task_words)
                    or _names_a_list(view)
                    or TIMED_STORED_RE.search(view.lower) is not None) and not unfilled
        needs_time = False
    else:
        # A new item needs words of its own: "put them all on my list" (but "delete all my reminders" says which).
        own_words = any(w not in QUANTIFIERS for w in task_words)
        has_task = (own_words or resolved_reference or NO_TASK_NEEDED_RE.search(view.lower) is not None) and (
            not unfilled)
        needs_time = bool(skills["skill_remind"] or skills["skill_schedule"])
    has_task = has_task and (resolved_reference or not pointed)
    complete = has_task and (has_time or not needs_time)
    return {
        "action_request": flag(action),
        "has_time": flag(has_time),
        "has_task": flag(action and has_task),
        "slot_missing": flag(action and not complete),
        "slots_complete": flag(action and complete),
    }


def _names_a_list(view: TextView) -> bool:
    match = WHOLE_LIST_RE.search(view.unled)  # "delete my shopping list": the list is the item
    return match is not None and bool(match[1].strip())


def edits_previous_item(view: TextView, working_memory: Sequence[tuple[str, str]]) -> bool:
    """Whether an editing verb ("mark it as done", "cancel that") points at what the last turn's skill touched."""
    if not working_memory or not MANAGE_VERB_RE.match(view.unled):
        return False
    return bool(skill_signals(text_view(working_memory[-1][0]))["skill_any"])


def _placeholder(view: TextView) -> bool:
    """A command whose object is a placeholder: "I'd like to save something to my notes", "can you note something down
    for me, cheers" name nothing to save, nor does "save the number" say which. Unlike a pointer, no earlier turn fills
    a placeholder ("something" is not "it"), nor do numbered entries left empty ("to pack:\n1.\n2.")."""
    found = request_object(view.lower)
    generic = found is not None and found.kind == "generic"
    return generic or cut_off_creating(view.lower) or BARE_STORE_RE.match(view.unled) is not None or (
        EMPTY_ENTRIES_RE.search(view.lower) is not None)


def imperative_signals(view: TextView) -> dict[str, float]:
    """An imperative verb up front, and whether the request names anything beyond pronouns."""
    lead_free = view.after_thanks
    body = WORD_RE.findall(lead_free)
    imperative = (bool(body) and (body[0] in IMPERATIVE_VERBS or VERB_ME_RE.search(lead_free) is not None) and (
        LABEL_RE.match(lead_free) is None)) or (  # "Update: I sold the car!" tells news under a label
        POINTER_COMMAND_RE.search(view.lower) is not None)
    rest = [w for w in body[1:] if w not in STOPWORDS]
    # "Can you track something for me?", "can you change the time?": which thing, which time?
    names_nothing = _placeholder(view) or BARE_EDIT_RE.match(lead_free) is not None or (
        STUFF_ASK_RE.match(view.lower) is not None)
    vague = (imperative and not rest) or VAGUE_ASK_RE.match(view.lower) is not None or names_nothing
    writing, capability = asks_for_text(view)
    return {"imperative": flag(imperative), "vague_request": flag(vague), "names_nothing": flag(names_nothing),
            "writing_task": flag(writing), "capability_question": flag(capability)}


def tells_of_skill(view: TextView, signals: dict[str, float]) -> bool:
    """Whether a message in a skill's words is a statement about the person's own things that asks for nothing ("I set
    myself a target of 30 books this year and I'm on 27 already"), rather than a request in the first person ("I'd
    like a list called ...", "I bought the milk, tick it off my list")."""
    lower = view.lower
    asks_advice = bool(signals["question"]) and OWN_DEED_QUESTION_RE.search(lower) is not None
    if (signals["question"] and not asks_advice) or signals["imperative"] or REQUEST_RE.search(lower) or (
            HANDED_OVER_RE.search(lower)):
        return False
    body = view.unled
    return TOLD_RE.match(body) is not None and not GOAL_STATED_RE.search(lower) and not COMMAND_CLAUSE_RE.search(body)


def context_signals(ctx: RoutingContext, recent_turns: int) -> dict[str, float]:
    """Conversation state passed in by the caller: warmth, memory and topic confidence, previous mode."""
    recent = ctx.turns_since_previous_mode <= recent_turns
    previous = (ctx.previous_mode or "").upper()
    return {
        "context_warmth": float(ctx.context_warmth),
        "memory_confidence": float(ctx.memory_confidence),
        "topic_confidence": float(ctx.topic_confidence),
        "topic_is_new": flag(ctx.topic_is_new),
        "working_memory_empty": flag(not ctx.working_memory),
        "prev_act": flag(recent and previous == "ACT"),
        "prev_clarify": flag(recent and previous == "CLARIFY"),
    }


def continuation_signals(view: TextView, ctx: RoutingContext, signals: dict[str, float]) -> dict[str, float]:
    """Anti-oscillation: a short answer right after CLARIFY/ACT continues the action instead of flipping mode."""
    after_action = bool(signals["prev_act"] or signals["prev_clarify"])
    substantive = not (signals["phatic_only"] or signals["punct_only"] or signals["emoji_only"])
    slot_fill = substantive and (bool(signals["has_time"]) or 0 < len(view.words) <= 6)
    last_was_action = bool(ctx.working_memory) and is_action_request(text_view(ctx.working_memory[-1][0]))
    return {
        "followup_fill": flag(bool(signals["prev_clarify"]) and slot_fill),
        "skill_continuation": flag(after_action and last_was_action and slot_fill and not signals["question"]),
        "confirmation_reply": flag(ctx.pending_confirmation and CONFIRM_RE.match(view.lower) is not None),
    }


# What makes a message ask for something: a question, a request or command, a skill's words, or a short answer
# continuing the action just asked about.
_ASKING = ("question", "imperative", "deed_unnamed", "vague_request", "writing_task", "capability_question",
           "skill_any", "action_request", "unresolved_reference", "followup_fill", "skill_continuation",
           "confirmation_reply")


# A deed one of these reads is no unnamed deed: a skill runs it, an answer is written, or an earlier turn names it.
_ANSWERED_DEEDS = ("skill_any", "writing_task", "capability_question", "general_question", "resolved_reference")


def telling_signals(view: TextView, signals: dict[str, float]) -> dict[str, float]:
    """``tells``: the person tells something (news, an update, a plan, a mood, their day) and asks for nothing, so
    an acknowledgement is the reply ("finally finished painting the kitchen", "Update: I sold the car!");
    ``distress``: the same form carrying distress or a plea for support, which wants a real answer."""
    said = not (signals["phatic_only"] or signals["punct_only"] or signals["emoji_only"] or signals["empty"]
                or signals["keyboard_mash"] >= 0.5)
    statement = said and bool(view.content) and REQUEST_RE.search(shrug_free(view.lower)) is None and not any(
        signals[name] for name in _ASKING)
    lower = not_of_the_person(view.lower)  # "the card machine died", "the chick we were worried about is fine"
    distress = DISTRESS_RE.search(lower) is not None and not signals["vague_request"] and (  # "can you help me?"
        REASSURED_RE.search(view.lower) is None)  # "stressed about exams but I'll survive"
    # A long day told as it went ("Long shift. Three funerals, ... Home now with a tea"): its length, times are no ask.
    tells = statement and not distress
    day_told = tells and view.full_words >= DAY_TOLD_MIN_WORDS and DAY_TOLD_RE.search(view.lower) is not None
    return {"tells": flag(tells), "distress": flag(distress), "day_told": flag(day_told)}


def collect_signals(ctx: RoutingContext, recent_turns: int = 2) -> dict[str, float]:
    """Every text and context signal for one message (embedding similarities are added by the router)."""
    view = text_view(ctx.text)
    signals = text_features(view)
    signals.update(interrogative_signals(view))
    signals.update(phatic_signals(view))
    skills = skill_signals(view)
    signals.update(skills)
    signals.update(imperative_signals(view))
    signals["skill_told"] = flag(bool(skills["skill_any"]) and tells_of_skill(view, signals))
    if signals["skill_told"]:  # "My wife keeps our shopping list on the fridge door": news, not a request
        skills = dict.fromkeys(skills, 0.0)
        signals.update(skills)
    references = reference_signals(view, ctx.working_memory, bool(signals["imperative"]))
    if signals["phatic_only"] or (signals["thanks"] and not any(
            signals[name] for name in ("imperative", "question", "skill_any")) and not (
            references["context_dependent"] or references["commanded_pointer"])):
        # "that's great" points at nothing that needs resolving; "thanks, I'll try that" at the reply just given (but
        # "gracias, and the other one too" asks for more of something never said)
        references.update(unresolved_reference=0.0, resolved_reference=0.0)
    signals.update(references)
    signals["past_question"] = flag(asks_past_in_words(view, skills, bool(signals["question"])))
    # A question about a skill's topic that asks nothing of the person's own things ("pros and cons of reminders?").
    signals["general_question"] = flag(bool(skills["skill_any"]) and is_general_question(view))
    if references["unresolved_reference"] or skills["skill_recall"] or skills["skill_introspect"]:
        # "Write a poem about it" with nothing before it needs asking; "summarise what you know about me" reads memory.
        signals["writing_task"] = 0.0
    if references["resolved_reference"] and not skills["skill_any"] and edits_previous_item(view, ctx.working_memory):
        skills = {**skills, "skill_manage": 1.0, "skill_any": 1.0}
        signals.update(skills)
    # A deed no skill reads, with no earlier turn to act on and nothing handed over: "push everything back an hour".
    signals["deed_unnamed"] = flag(not any(signals[name] for name in _ANSWERED_DEEDS) and not LABEL_RE.match(view.lower)
                                   and DEED_RE.search(view.lower) is not None and not HANDED_OVER_RE.search(view.lower))
    signals.update(slot_signals(view, skills, bool(references["resolved_reference"]), ctx.working_memory,
                                bool(references["commanded_pointer"])))
    if signals["resolved_reference"] and not ctx.working_memory and (signals["shows_stored"] or (
            signals["slot_missing"] and signals["has_task"] and not signals["has_time"] and skills["skill_remind"])):
        # A pointer the message's own words resolve leans on no earlier turn, so it is no sign of talk: "... what I
        # asked you to keep about the landlord, pull it up" shows it; "remind me to phone the surgery about the
        # results" still lacks only its time (a plan in a schedule's words may still be a writing task).
        signals["resolved_reference"] = 0.0
    signals.update(context_signals(ctx, recent_turns))
    signals.update(continuation_signals(view, ctx, signals))
    signals.update(telling_signals(view, signals))
    return signals
