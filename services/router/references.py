"""References: words pointing at something said before ("it", "the ones I listed", "what we talked about"), whether
the message leans on them, and whether an earlier turn offers anything they could point at.

The pointer lexicons live in ``services/router/reference_words.py``; ``services/router/signals.py`` collects these
signals with the others.
"""

from __future__ import annotations

from collections.abc import Sequence

from services.router.form_words import INTERROGATIVES, PHATIC_RE
from services.router.objects import request_object
from services.router.reference_words import (
    ANAPHORIC_NP_RE,
    CAPITALISED_RE,
    CATAPHORIC_RE,
    CLOCK_ALONE_RE,
    CONTEXT_DEPENDENT_RE,
    EXISTENTIAL_THERE_RE,
    EXPLETIVE_IT_RE,
    HABITUAL_RE,
    HEDGE_PHRASE_RE,
    HEDGE_WORDS,
    INSTEAD_RE,
    KIND_ALONE_RE,
    LETTER_PICK_RE,
    NUMBER_WORDS,
    OBJECT_THAT_RE,
    OWN_ANTECEDENT_IT_RE,
    PERSON_CUE_RE,
    PERSON_PRONOUNS,
    PICK_WORDS,
    QUICK_ONE_RE,
    SAID_CLOCK_RE,
    SHIFT_WORDS,
    SUITS_WORDS,
    THAT_CLAUSE_RE,
    THING_PRONOUNS,
    TOLD_PAST_WORDS,
    UNASKED_ANSWER_RE,
    USUAL_ASIDE_RE,
    deictic_object,
)
from services.router.textview import (
    TextView,
    content_without_time,
    flag,
    phatic_signals,
    text_view,
    without_times,
)
from services.router.time_words import says_time
from services.router.unseen_words import HELD_ELSEWHERE_RE
from services.router.words import POLITE_WORDS, WORD_RE


def _referring_words(view: TextView, imperative: bool) -> tuple[set[str], set[str]]:
    # "this week" points at a date, not at a turn; "these days" at now ("where do i work these days" asked first).
    words = set(WORD_RE.findall(without_times(view.lower).replace("these days", " ")))
    things = words & THING_PRONOUNS
    if "it" in things and EXPLETIVE_IT_RE.search(view.lower):
        things.discard("it")  # the time's and the weather's "it"
    if OWN_ANTECEDENT_IT_RE.search(view.lower):
        things -= {"it", "one"}  # "it" standing for "something" or "one thing" said before it
    if "one" in things and QUICK_ONE_RE.search(view.lower):
        things.discard("one")
    if "there" in things and EXISTENTIAL_THERE_RE.search(view.lower):
        things.discard("there")
    if "that" in things and THAT_CLAUSE_RE.search(view.lower) and not OBJECT_THAT_RE.search(view.lower):
        things.discard("that")  # "remember that my code is 4312": a conjunction, not a pointer
    if deictic_object(view.lower):
        things.add("what")
    if ANAPHORIC_NP_RE.search(view.lower):  # "the second option" points back like "it" does
        things.add("ones")
    if imperative and KIND_ALONE_RE.search(view.lower):  # "put the dates in": a command on things never named
        things.add("ones")
    if INSTEAD_RE.search(view.lower):
        things.add("instead")
    # "store this: the code is 5512", "keep this for me, the code is 5512": points forward
    things -= {word for pair in CATAPHORIC_RE.findall(view.lower) for word in pair}
    return things, words & PERSON_PRONOUNS


def commanded_pointer(lower: str) -> bool:
    """Whether a request's object is a pointer at something never named here ("add the stuff we discussed to my list",
    "send the same to my brother"), wherever in the message the request sits (``services/router/objects.py``)."""
    found = request_object(lower)
    return found is not None and found.kind == "pointer"


def has_antecedent(person: bool, working_memory: Sequence[tuple[str, str]], lookback: int = 3) -> bool:
    """Whether recent exchanges offer something a pronoun could point at (a person when ``person``)."""
    texts = [text for pair in list(working_memory)[-lookback:] for text in pair if text]
    if person:
        return any(PERSON_CUE_RE.search(t.lower()) or CAPITALISED_RE.search(t) for t in texts)
    return any(_names_something(text_view(t)) for t in texts)


def _names_something(view: TextView) -> bool:
    """Whether a turn names anything a pronoun could point at: a greeting or an offer of help names nothing."""
    if phatic_signals(view)["phatic_only"]:  # "hi" / "Good morning! How are you?"
        return False
    return len([w for w in view.content if w not in POLITE_WORDS]) >= 2  # not "Hello! How can I help?"


def bare_answer(view: TextView, content: tuple[str, ...]) -> bool:
    """Whether the message is only an answer's pieces (``content``: its content words but times and shifts): times
    ("the 5th or the 6th?", "Friday?", "7.30"), a pick among options ("the first, at 6pm", "option 2", "B"), and no
    question word ("what's on tomorrow?" asks)."""
    if INTERROGATIVES.intersection(view.words):
        return False
    if CLOCK_ALONE_RE.match(view.lower) or LETTER_PICK_RE.match(view.lower):
        return True
    phrased = {word for phrase in HEDGE_PHRASE_RE.findall(view.lower) for word in phrase.split()}
    hedged = tuple(w for w in content if w not in HEDGE_WORDS and w not in phrased)  # "Thursday, I think.": the time
    if not hedged:
        return says_time(view.lower)
    hedge = len(hedged) < len(content) or any(w in HEDGE_WORDS or w in phrased or w == "around" for w in view.words)
    if hedge and all(w.removesuffix("ish").isdigit() or w in NUMBER_WORDS for w in hedged):  # "around 7ish"
        return True  # "About 40, I reckon.", "about forty, give or take": a number guessed at, never asked for
    content = hedged
    # "10:15 works", "half five works", "the first one suits me better": which one suits, to a question never asked.
    suits = SUITS_WORDS if not TOLD_PAST_WORDS.intersection(view.words) else frozenset()
    clock = SAID_CLOCK_RE.search(view.lower)  # "half seven is better": the clock's words are no content
    clock_words = clock[0].split() if clock else ()
    if all(w in suits or w in clock_words for w in content) and (clock or says_time(view.lower)):
        return True
    picked = [w for w in content if w in PICK_WORDS]
    return bool(picked) and all(w in PICK_WORDS or w in suits or w.isdigit() for w in content)


def _usual_aside(view: TextView) -> bool:
    """Whether "the usual" only closes a statement of its own as an aside ("Late again, the usual." asks nothing; a
    question, or a bare "Pizza, the usual." with no sentence before it, still leans on something never said)."""
    aside = USUAL_ASIDE_RE.search(view.lower)
    if aside is None or "?" in view.raw:
        return False
    told = view.lower[:aside.start()]
    return HABITUAL_RE.search(told) is None and len(content_without_time(text_view(told))) >= 3


def reference_signals(view: TextView, working_memory: Sequence[tuple[str, str]], imperative: bool) -> dict[str, float]:
    """Pronoun/deictic references, whether the message leans on them, and whether anything resolves them;
    ``imperative``: the message opens with a command (``imperative_signals``), where any pronoun needs a referent."""
    things, persons = _referring_words(view, imperative)
    # After a thanks or a lead-in the fragment is still one: "gracias, and the other one too".
    lead_free = view.after_thanks
    context_dependent = bool(CONTEXT_DEPENDENT_RE.match(lead_free) or (
        HABITUAL_RE.search(view.lower) and (imperative or not _usual_aside(view))))
    content = tuple(w for w in content_without_time(view) if w not in SHIFT_WORDS)
    context_dependent = context_dependent or (not working_memory and (
        bare_answer(view, content) or UNASKED_ANSWER_RE.match(lead_free) is not None))
    # A reaction before a command names nothing it could act on: "yep sounds good, set it up" (set what up?); nor does
    # a lead-in ("Desculpe, push that reminder on a bit": "desculpe" is no antecedent).
    named = PHATIC_RE.sub(" ", lead_free) if imperative else view.lower
    if imperative:
        content = tuple(w for w in content_without_time(text_view(named)) if w not in SHIFT_WORDS)
    if "ones" in things:  # "update the list with the new ones": "new ones" names nothing of its own
        content = content_without_time(text_view(KIND_ALONE_RE.sub(" ", ANAPHORIC_NP_RE.sub(" ", named))))
    # A long message usually carries its own antecedent ("my phone keeps crashing, can I fix it?"), unless it
    # points back at an earlier turn ("add what we talked about to my list") without naming what.
    points_back = deictic_object(view.lower) is not None
    # A request that points back needs the conversation ("go back to what we were saying"); a question about what
    # was told reads memory instead ("What was the printer IP I gave you?").
    # (A request put as a question still asks it done: "Can you just sort out those reminders from yesterday?".)
    asks = "?" in view.raw and request_object(view.lower) is None
    # Or its content is said to be on paper or a screen this conversation cannot see ("... They're on the timetable I
    # printed."), with no figure given.
    commanded = commanded_pointer(view.lower) or (imperative and HELD_ELSEWHERE_RE.search(view.lower) is not None and (
        not any(ch.isdigit() for ch in view.lower)))
    needs_context = (context_dependent or commanded or (points_back and not asks)
                     or (bool(things or persons) and (imperative or len(content) <= 2)))
    # "Instead" in a command offers another choice for something already there: "book the 9:15 instead".
    self_contained = not (context_dependent or points_back or commanded or (imperative and "instead" in things)) and (
        len(content) >= 4)
    # A pointer a command acts on needs an earlier turn even when no pronoun says so ("pop the things from the receipt
    # on my list").
    thing_ok = not (things or context_dependent or commanded) or self_contained or has_antecedent(False, working_memory)
    person_ok = not persons or self_contained or has_antecedent(True, working_memory) or bool(
        PERSON_CUE_RE.search(" ".join(view.content)) or CAPITALISED_RE.search(view.raw)
    )
    resolved = needs_context and thing_ok and person_ok
    return {
        "has_reference": flag(bool(things or persons)),
        "context_dependent": flag(context_dependent),
        "unresolved_reference": flag(needs_context and not resolved),
        "resolved_reference": flag(resolved),
        "points_back": flag(points_back),
        "commanded_pointer": flag(commanded),
    }
