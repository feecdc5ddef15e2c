"""What a request acts on: find the request in a message, read its object, and say whether the object names anything.

A structural check rather than a list of phrasings: "send the same to my brother", "could you add that one we talked
about?", "put her number in as well", "note something down for me, cheers" all have a request (a command verb, maybe
after a greeting, thanks or "can you") whose object is made only of pointers ("the same", "that one", "her number") or
of placeholders ("something", "a note"). Such a request needs an earlier turn, or asking. A pointer at the message's
own words ("My code is 4312, remember that", "save this - the number is ...") names what they name. The word lists
live in ``services/router/command_words.py``; ``services/router/references.py`` and ``services/router/signals.py``
use it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from services.router.ascii_twin import grouped
from services.router.command_words import (
    CALLING_ON_VERBS,
    CONTENT_FOLLOWS_RE,
    EDIT_MADE_RE,
    EDITING_VERBS,
    ENTRY_NOUNS,
    ENTRY_PLACES,
    FOR_WHOM_RE,
    FORWARD_POINTERS,
    GENERIC_WORDS,
    HANDED_OVER_RE,
    IT_THAT_RE,
    KIND_NOUNS,
    NAMING_WORDS,
    NEAR_POINTERS,
    NEW_CLAUSE_RE,
    NEW_VALUE_WORDS,
    NUMBERED_WORDS,
    OBJECT_ENDS,
    OBJECT_PARTICLES,
    OBJECT_VERBS,
    OWNED_VALUES,
    PAST_POINTERS,
    PAST_STATE_RE,
    PERSON_POSSESSIVES,
    PLACEHOLDERS,
    POINTING_MODIFIERS,
    PURPOSE_RE,
    REMINDING_VERBS,
    REMOVING_VERBS,
    REQUEST_LEADS,
    RETIMING_VERBS,
    SAID_OBJECT_RE,
    STORED_KINDS,
    STORING_VERBS,
    TEXT_LEADS,
    THE_STORED_RE,
    THING_ABOUT_RE,
    VAGUE_DEED_VERBS,
)
from services.router.cut_off import missing_by_form
from services.router.reference_words import DEICTIC_OBJECT_RE, PEOPLE_WORDS, THAT_CLAUSE_RE
from services.router.template_words import TEMPLATE_RE
from services.router.time_words import says_time, times_replaced
from services.router.typos import correct
from services.router.unseen_words import SOURCED_DATA_RE, UNSEEN_HELD_RE, UNSEEN_THING_RE, VALUE_HELD_RE
from services.router.words import POLITE_WORDS, REMIND_ASKS_RE, WORD_RE

# Sentences and dashes part requests; after a comma a request may open a clause ("Toda, and send ..."). A dot between
# digits is a time or a number, not a stop ("set me a reminder at 7.20 tomorrow to ...").
_SENTENCE_END_RE = grouped(r"(?:[!?;…]|\.(?!\d))+|\s[-–—]+\s|[–—]")
_DASH_RE = re.compile(r"\s*[-–—]")
_COMMA_RE = re.compile(",")
_LEAD_OBJECT_RE = re.compile(
    r"^\s*(?:(?:" + "|".join(sorted(OBJECT_PARTICLES)) + r"|me|us)\b\s*)*(?:(?<=me )(?:of|about|bout|abt)\b\s*)?")
_ABOUT_RE = re.compile(r"\s*(?:(?:to )?(?:you|u) )?about\b")  # "what I told you about my ex": a topic named
_ELONGATED_RE = re.compile(r"([a-z])\1{2,}")  # "dooo" is "do"
_DIGIT_RE = re.compile(r"\d")
# A call on the person asked for as a thing is a reminder: "give me a shout at 6" (of what?), "send me a nudge at 9 to",
# what it is about leading its text as after "remind me" ("give me a nudge about that one at 6": about which one?).
_CALL_ON_RE = re.compile(
    r"an? (?:quick |little |gentle )?(?:nudge|ping|prompt|buzz|shout|bell|holler|yell|heads[- ]up)\b"
    r"(?:\s+(?:about|bout|abt|of|re)\b)?")
_TEXT_LEAD_RE = re.compile(r"^[\s,]*(?:(?:about|of|re|that|to)\s+)?")  # a reminder's text after its time
_SOMETHING_ABOUT_RE = re.compile(r"(?:something|anything) (?:about|with)\b")
# A thing named by where it is, in something handed over or said where this conversation cannot see: "the address on
# the letter I just scanned", "the times in the email I forwarded" (a pointer at what holds it, ``DEICTIC_OBJECT_RE``).
_HELD_IN_RE = re.compile(r"(?:the|that|this|those|these|all the) (?:[a-z0-9'-]+ ){1,3}?(?:on|in|from|off|of|inside) ")
_POINTING_WORDS = PAST_POINTERS | NEAR_POINTERS
_CALLING_VERBS = frozenset("give send drop shoot".split())
_CREATING_VERBS = frozenset("make set create add start give".split())  # a new entry's
_CONVERTING_VERBS = frozenset("turn convert".split())  # "turn that into a goal"
_MADE_OUT_OF_RE = re.compile(r"^(?:a|an|one|my|me a|me an) (?:new )?(?:goal|target|note|reminder|list|task|entry) "
                             r"out of ")  # not "make a note of that number, it's ...": noted, not made of
_ONE_ENTRY = frozenset(word for word in ENTRY_NOUNS if not word.endswith("s"))
_CONTINUING = frozenset("now and also then".split())
_KNOWING_WORDS = frozenset("u you ya kno know knw remember mind".split())  # "u kno that thing, remind me ..."
_WISHING = frozenset("need want like".split())
_OBJECT_WORD_RE = re.compile(r"[a-z0-9]+(?:['-][a-z0-9]+)*")  # "a to-do list" is a list, not "a" going "to" it
# Words around a request that name nothing it could point at: a one- or two-word greeting or thanks in any language
# ("Kia ora — ...", "Aitäh — ..."), politeness after it ("..., cheers").
_MAX_GREETING_WORDS = 2


@dataclass(frozen=True)
class RequestObject:
    """A request's verb and what its object is: ``"pointer"`` (points at something said in an earlier turn),
    ``"generic"`` (a placeholder, nothing in particular) or ``"named"``; ``words``: the object as written; ``missing``:
    the slot the request leaves empty (``"what"``: its object or a reminder's text) and ``why``, when it is read from
    the request's form (an unfilled template, a command cut off, content announced and never given, a reminder with a
    time and no text)."""

    verb: str
    kind: str
    words: str = ""
    missing: str = ""
    why: str = ""

    def explain(self) -> str:
        """One line for ``engram route``: the verb, its object, what is missing."""
        verb = self.verb or "(no verb)"
        words = f' "{self.words}"' if self.words else ""
        missing = f"; missing: {self.missing} ({self.why})" if self.missing else ""
        return f"{verb}{words}: {self.kind}{missing}"


@lru_cache(maxsize=512)  # the signals ask for the same message's object more than once
def request_object(lower: str) -> RequestObject | None:
    """The first request in ``lower`` (lower-cased text) whose object could be read, or None when none is found.

    Content handed over after a colon names the object ("store this: the code is 5512"), unless it is an unfilled
    template ("save this note: <paste here>")."""
    if HANDED_OVER_RE.search(lower) and not TEMPLATE_RE.search(lower):
        return None
    breaks = list(_SENTENCE_END_RE.finditer(lower))
    starts = [0] + [match.end() for match in breaks]
    ends = [match.start() for match in breaks] + [len(lower)]
    for start, end in zip(starts, ends, strict=True):
        for part in [start] + [match.end() for match in _COMMA_RE.finditer(lower, start, end)]:
            found = _read(lower, part, end)
            if found is not None:
                return found
    return None


def _read(lower: str, start: int, end: int) -> RequestObject | None:
    """The request opening ``lower[start:end]`` (after its lead-in: "please", "can you", "now", ...), if one does."""
    clause = lower[start:end]
    matches = list(WORD_RE.finditer(clause))
    index = 0
    while index < len(matches) and matches[index][0] in REQUEST_LEADS:
        index += 1
    if index >= len(matches):
        return None
    verb = _ELONGATED_RE.sub(r"\1", matches[index][0])
    leads = {match[0] for match in matches[:index]}
    if "mind" in leads:  # "would you mind sending the same to Jo"
        verb = _base_of(verb)
    if verb in CALLING_ON_VERBS and index + 1 < len(matches) and matches[index + 1][0] in ("me", "us"):
        verb = "remind"  # "nudge me about what the plumber said": of what, said where?
    if verb in PLACEHOLDERS and index and matches[index - 1][0] in _WISHING and not PURPOSE_RE.match(
            clause, matches[index].end()):  # not "need something to switch off to": an idea asked for
        # "I need a reminder for seven in the evening": a wish whose object is the request's; only a placeholder or a
        # pointer is read here ("I need a coffee, then send the same to Jo" reads on).
        done = next((m for m in matches[index + 1:] if _is_participle(m[0])), None)  # "I need some items added"
        wished = _object_of(lower, start, end, matches[index - 1][0],
                            clause[matches[index].start():done.start() if done else None])
        return wished if wished is not None and wished.kind != "named" else None
    if verb not in OBJECT_VERBS:
        words = [match[0] for match in matches[index:]]
        more_of = _CONTINUING.intersection(leads) and PAST_POINTERS.intersection(words)
        if more_of and all(word in _POINTING_WORDS | GENERIC_WORDS | POLITE_WORDS for word in words):
            return RequestObject("", "pointer")  # "Merci! Now the rest as well please": more of what, with no verb
        return None
    if index and matches[index - 1][0] in ("i", "we"):
        return None  # "I add the salt last" tells; "can you add ..." asks
    if verb in REMINDING_VERBS and REMIND_ASKS_RE.match(lower, start + matches[index].start()):
        return None  # "remind me again — what's my PIN?": the question after it is what it asks
    missing = missing_by_form(lower, clause, matches, index, end)
    if missing:
        return RequestObject(verb, "generic", clause[matches[index].end():].strip(), "what", missing)
    return _object_of(lower, start, end, verb, clause[matches[index].end():])


def _object_of(lower: str, start: int, end: int, verb: str, after_verb: str) -> RequestObject | None:
    """What the request's object (the words ``after_verb``, in ``lower[start:end]``) is, if it can be read."""
    rest = NEW_CLAUSE_RE.sub("", after_verb)
    rest = _LEAD_OBJECT_RE.sub("", rest)  # after its particle and "me" ("give me a ...", "remind me of the thing")
    whom = FOR_WHOM_RE.match(rest)
    if whom:  # "do for the studio what you did for my sister": the object after whom it is for
        rest = rest[whom.end():]
    verb, rest = _recast(verb, rest)
    edit = EDIT_MADE_RE.match(rest) if verb in ("make", "do") else None
    if edit:  # "make a change to my goal" is "change my goal"
        verb, rest = "change", rest[edit.end():]
    said = _said_object(verb, rest)
    if said:
        about = _ABOUT_RE.match(said.string[said.end():]) is not None
        return RequestObject(verb, "named" if about and verb in REMOVING_VERBS else "pointer", said.string.strip())
    unnamed = _unnamed_by_kind(lower, start, verb, rest) or _meant_before(lower, start, end, verb, rest, after_verb)
    if unnamed is not None:
        return unnamed
    if THAT_CLAUSE_RE.match(rest.strip()) or IT_THAT_RE.match(rest.strip()):
        return RequestObject(verb, "named", rest.strip())  # "note that I'm away from the 3rd": a clause says what
    span = [correct(word) for word in _OBJECT_WORD_RE.findall(times_replaced(rest, " "))]  # "set a gaol": a goal
    around = _words_around(lower, start, end)
    text = span
    while text[1:] and text[0] in TEXT_LEADS:  # "about that": "that" is the text; "that" leading a clause is not
        text = text[1:]
    textless = all(w in (TEXT_LEADS - {"that"}) | GENERIC_WORDS | POLITE_WORDS for w in text)
    if verb in REMINDING_VERBS and textless and (not around or (
            _names_nothing_before(lower, start) and not _said_after(lower, end))):
        # "can you remind me at ten past six": when, but of what? ("The bins go out tonight. Remind me at 7" says.)
        why = "a time but no text" if says_time(rest) else "no text"
        return RequestObject(verb, "generic", rest.strip(), "what", why)
    if not span or span[0] in OBJECT_ENDS:
        return None  # "remind me to call mum", "add to my list": the object comes later or is no thing
    if FORWARD_POINTERS.intersection(span[:3]) and not _said_after(lower, end):
        return RequestObject(verb, "generic", rest.strip(), "what", "announced, never given")  # "the following."
    if PAST_STATE_RE.search(rest):
        return RequestObject(verb, "pointer", rest.strip())  # "change the goal back to what it was": said before
    elsewhere = around or NEW_CLAUSE_RE.search(after_verb) is not None
    if verb in EDITING_VERBS and not NEW_VALUE_WORDS.intersection(span) and not elsewhere and not (
            says_time(rest) or any(word.isdigit() for word in span)):
        # "change my running goal": to what? ("update my savings goal, I put another 200 in" says.)
        return RequestObject(verb, "generic", rest.strip(), "the new value", "an edit with nothing to change to")
    earlier = frozenset(WORD_RE.findall(lower[:start]))
    kind = _filled_kind(lower, end, verb, span, after_verb, _object_kind(span, around, earlier, elsewhere))
    if kind == "generic":
        return RequestObject(verb, kind, rest.strip(), "what", "a placeholder")
    return RequestObject(verb, kind, rest.strip())


def _said_object(verb: str, rest: str) -> re.Match[str] | None:
    """What someone said or gave, as the object (``SAID_OBJECT_RE``), also as a reminder's text after its time ("remind
    me tomorrow at 8 about what Jo's mum said")."""
    said = SAID_OBJECT_RE.match(rest)
    if said is None and verb in REMINDING_VERBS:
        said = SAID_OBJECT_RE.match(_TEXT_LEAD_RE.sub("", times_replaced(rest, " ")))
    return said


def _meant_before(lower: str, start: int, end: int, verb: str, rest: str, after_verb: str) -> RequestObject | None:
    """An object picked out as the one both sides know, when nothing here says which: "remember the thing about Dad's
    car", "move the reminder to Wednesday" (not with more said after it: ", the MOT is due in May")."""
    comma = after_verb.find(",")
    alone = not _words_around(lower, start, end) and (comma < 0 or all(
        word in POLITE_WORDS for word in WORD_RE.findall(after_verb[comma:])))
    if alone and ((verb in STORING_VERBS and THING_ABOUT_RE.match(rest)) or (
            verb in EDITING_VERBS | REMOVING_VERBS | RETIMING_VERBS and THE_STORED_RE.match(rest))):
        return RequestObject(verb, "pointer", rest.strip())
    return None


def _filled_kind(lower: str, end: int, verb: str, span: list[str], after_verb: str, kind: str) -> str:
    """The object's kind once what is around it is read: a learner's bare "make goal for me" is a placeholder, and a
    placeholder is filled by what follows a dash or by the next sentence or clause saying what is wanted ("track a new
    goal - practise guitar 20 minutes a day", "you can make a goal for me please? I want pass the B2 English exam in
    June.", "make goal for me, I want learn 300 kanji"); so is a pointer made into an entry ("turn it into a goal, I
    want to swim 2k by March")."""
    if kind == "named" and verb in _CREATING_VERBS and _bare_entry(span):
        kind = "generic"
    clause = NEW_CLAUSE_RE.search(after_verb)
    made_entry = kind == "pointer" and verb in _CREATING_VERBS | _CONVERTING_VERBS and ENTRY_NOUNS.intersection(span)
    if (kind == "generic" or made_entry) and ((_DASH_RE.match(lower, end) and _said_after(lower, end)) or (
            CONTENT_FOLLOWS_RE.match(lower, end) is not None) or (
            clause is not None and CONTENT_FOLLOWS_RE.match(after_verb, clause.start()) is not None)):
        kind = "named"
    return kind


def _bare_entry(span: list[str]) -> bool:
    """Whether the object is one kind of entry alone, with no article ("make goal for me", "set reminder"; not "can you
    set reminders?": the kind in general)."""
    head = []
    for word in span:
        if word in OBJECT_ENDS:
            break
        head.append(word)
    return bool(head) and all(word in _ONE_ENTRY or word == "new" for word in head) and not any(
        word not in GENERIC_WORDS | OBJECT_ENDS | POLITE_WORDS for word in span[len(head):])


def _recast(verb: str, rest: str) -> tuple[str, str]:
    """A request in another's shape: a call on the person given as a thing is a reminder ("give me a shout at 6" is
    "remind me at 6": of what?), an entry made out of something turns it into one ("make a goal out of the plan in
    the document" is "turn the plan in the document into a goal": which plan?)."""
    call = _CALL_ON_RE.match(rest) if verb in _CALLING_VERBS else None
    made = _MADE_OUT_OF_RE.match(rest) if verb in _CREATING_VERBS else None
    return ("remind", rest[call.end():]) if call else ("turn", rest[made.end():]) if made else (verb, rest)


def deed_again(lower: str) -> bool:
    """Whether the request is a deed done again on a pointer: "do the same for Dad's list", "do what you did"."""
    found = request_object(lower)
    return found is not None and found.kind == "pointer" and found.verb in VAGUE_DEED_VERBS


def _unnamed_by_kind(lower: str, start: int, verb: str, rest: str) -> RequestObject | None:
    """An object that names a kind of thing but not the thing: data kept elsewhere ("the figures from the sheet", with
    no figure given before the request), a deed left open ("do something about my goals": done how?), or a pointer at
    a slot left unfilled ("New goal: {% goal %}, please track it")."""
    if (SOURCED_DATA_RE.match(rest) and not _DIGIT_RE.search(lower, 0, start)) or UNSEEN_HELD_RE.match(rest) or (
            verb not in REMINDING_VERBS and UNSEEN_THING_RE.match(rest)) or (VALUE_HELD_RE.match(rest) and not (
            _DIGIT_RE.search(lower))):
        return RequestObject(verb, "pointer", rest.strip())
    held = _HELD_IN_RE.match(rest)
    if held and DEICTIC_OBJECT_RE.match(rest, held.end()):
        return RequestObject(verb, "pointer", rest.strip())
    if verb in VAGUE_DEED_VERBS and _SOMETHING_ABOUT_RE.match(rest):
        return RequestObject(verb, "generic", rest.strip(), "what", "a placeholder deed")
    if TEMPLATE_RE.search(lower) and all(w in _POINTING_WORDS | GENERIC_WORDS | POLITE_WORDS for w in WORD_RE.findall(
            rest)):  # "New goal: {% goal %}, please track it": what "it" stands for is a slot left unfilled
        return RequestObject(verb, "generic", rest.strip(), "what", "points at an unfilled template")
    return None


def _said_after(lower: str, end: int) -> bool:
    return any(word not in POLITE_WORDS for word in WORD_RE.findall(lower[end:]))  # anything but politeness after


def _is_participle(word: str) -> bool:
    """Whether ``word`` is a request verb done ("added", "saved", "jotted"): "I need some items added to my list"."""
    return word.endswith("ed") and any(stem in OBJECT_VERBS for stem in (word[:-2], word[:-1], word[:-3]))


def _base_of(gerund: str) -> str:
    """The verb of a gerund ("sending" -> "send", "saving" -> "save", "putting" -> "put"), or the word as it is."""
    stem = gerund[:-3] if gerund.endswith("ing") else ""
    for verb in (stem, f"{stem}e", stem[:-1]):
        if verb in OBJECT_VERBS:
            return verb
    return gerund


def _object_kind(span: list[str], words_around: bool, earlier: frozenset[str] = frozenset(),
                 said_near: bool = False) -> str:
    """What the object's words (up to where it goes or when) name; ``words_around``: the message says more than the
    request, so "it" or "that" may point at its own words; ``earlier``: the words before the request; ``said_near``:
    words around it or a clause after it ("make a note of that number, it's ...") may say what a pointer holds."""
    head = []
    for word in span:
        if word in OBJECT_ENDS:
            break
        head.append("some" if word == "sum" and len(span) > len(head) + 1 else word)  # "add sum stuff": texted
    if any(word in NUMBERED_WORDS and after.isdigit() and len(after) <= 2  # not "the number 07700 900123"
           for word, after in zip(span, span[1:], strict=False)):  # (a "4" may end the head: "do it 4 me")
        return "pointer"  # "cross off number 3": of a list shown before
    pointed = _pointed(head)
    named = [w for i, w in enumerate(head) if w not in _POINTING_WORDS | GENERIC_WORDS and not pointed[i]]
    if named:
        return "named"
    owned = [head[i + 1] for i, word in enumerate(head[:-1]) if word in PERSON_POSSESSIVES and pointed[i + 1]]
    if owned and PEOPLE_WORDS & earlier and NAMING_WORDS.issuperset(owned):
        return "named"  # "write to my supervisor, use his name", "… use her first name": the person is said
    if any(noun not in GENERIC_WORDS and noun not in earlier for noun in owned):
        return "pointer"  # "add her list of must-have shots": never shown
    if PAST_POINTERS.intersection(head):
        return "pointer"  # "the same", "the others as well": more of an earlier turn
    the_kind = "the" in head and KIND_NOUNS.intersection(head)  # "the things from the call": the ones meant before
    unnamed = GENERIC_WORDS | OBJECT_ENDS | _POINTING_WORDS | ENTRY_PLACES
    # Filled by words of its own, not by a pointer: "a note of that number" is filled by nothing said here.
    spanned = _pointed(span) if not said_near else [False] * len(span)
    filled = ENTRY_NOUNS.intersection(head) and not all(
        word in unnamed or spanned[i] for i, word in enumerate(span))
    if filled and _POINTING_WORDS.intersection(head):
        return "named"  # "make it a goal to call Grandma every Sunday": the goal is said
    # A pointer standing for the whole thing ("make it a goal", "track that as a goal"), not one picking out a stored
    # kind ("snooze that reminder": the skill knows which).
    alone = [w for i, w in enumerate(head) if w in _POINTING_WORDS and not (
        i + 1 < len(head) and head[i + 1] in STORED_KINDS)]
    if (the_kind and not STORED_KINDS.intersection(head)) or alone:
        # "it", "that", "her number": the message's own words may name it ("we need bin bags, add them").
        return "named" if words_around else "pointer"
    # "something down for me", "a couple of bits to the shopping": nothing in particular; "a reminder on Friday" too,
    # unless what follows says what it is ("a reminder for my flight").
    return "generic" if PLACEHOLDERS.intersection(head) and not filled else "named"


def _pointed(head: list[str]) -> list[bool]:
    """Which of the object's words are pointed at: the word after "that", "her", "the other" (what is said of it after
    "of": "her list of must-have shots"; a two-word noun ending it after a person's: "his email address")."""
    pointed, carried = [False] * len(head), False
    for i in range(1, len(head)):
        carried = carried or (head[i] == "of" and pointed[i - 1]) or (
            i == len(head) - 1 > 1 and head[i - 2] in PERSON_POSSESSIVES and head[i] in OWNED_VALUES)
        pointed[i] = carried or head[i - 1] in POINTING_MODIFIERS
    return pointed


def _names_nothing_before(lower: str, start: int) -> bool:
    """Whether the words before a request only point or hail ("u kno that thing, remind me at 9pm"): no text there."""
    return all(word in _POINTING_WORDS | GENERIC_WORDS | POLITE_WORDS | _KNOWING_WORDS
               for word in WORD_RE.findall(lower[:start]))


def _words_around(lower: str, start: int, end: int) -> bool:
    """Whether words outside the request could name what it points at: more than a short greeting before it, or
    anything but politeness after it."""
    before = WORD_RE.findall(lower[:start])
    after = [w for w in WORD_RE.findall(lower[end:]) if w not in POLITE_WORDS]
    return len(before) > _MAX_GREETING_WORDS or bool(after)
