"""The ACT fast path: the innate skills' plainest requests, understood without an LLM planning step.

"Add milk and eggs to my shopping list", "Create a packing list with passport and charger", "What's on
my shopping list?", "Remind me tomorrow at 9 to call the dentist", "Please store this: the gate code is
5512", "Set a goal: read 20 books this year": a small model often fails to turn these into a tool call,
a regular expression does not. The router's signals decide whether a pattern may even be tried (the message must already
look like a list or reminder request), the skill runs through the same dispatcher and critic as any
model-chosen action, and the reply is written from the skill's result.
"""

from __future__ import annotations

import re
from datetime import datetime, tzinfo
from typing import Any

from services.act.config import DueWords
from services.act.list_items import POINTER_ITEM, SAYS_SOMETHING, as_typed, said_items
from services.act.list_items import QUOTES as _QUOTES
from services.act.reminder_request import EVERY, REMIND, reminder_action, time_sentence, with_hour_said_next
from services.act.request_words import (
    ASKS_SOMETHING,
    PLEASE_WORDS,
    POLITE,
    REQUEST_WORDS,
    SENTENCE_STARTS,
    PlainAction,
)
from services.router.list_words import LATIN_LETTERS
from services.router.textview import undictated
from services.router.words import REMIND_ASKS_RE
from services.text import OWNER_NAME, SENTENCE_BREAK, WHOSE

# "my shopping list", "his party list", and one named for whose it is: "Oisín's party list";
# "add carbón to asado list": learners and chat leave the article out (not "a list", "this list").
NAMED_LIST = (rf"(?:{WHOSE}\s+|(?={OWNER_NAME}\s))?"
              # ("the list" names none: "Put him on the list." added "him" to a list called "the")
              rf"(?!(?:a|an|this|that|another|your|some)\s|{WHOSE}\s+list\b)"
              # "my wishlist" is the wish list ("bday wishlist": "bday wish", as the list skill names it)
              r"(?P<name>[^\W_][\w' -]{0,40}?)(?:\s+|(?<=wish))list")
# What may follow the list's name and is no part of the request: "too", "as well", ", for the baklava", ", Rohit
# says I eat like a hostel kid" — but not a second request ("…, and remind me at 5 to …": the model plans both).
_AFTER_NAME_WORDS = rf"(?:\s+(?:too|as well|also|{PLEASE_WORDS}|thanks))*"
# More items joined on without a comma: "put tape on the party list plus balloons", "… list and also candles".
_MORE_JOINED = r"plus|and also|also|as well as"
AFTER_LIST = (_AFTER_NAME_WORDS + rf"(?:(?:\s*[,;.!]\s+|\s+(?=(?:{_MORE_JOINED})\s))"
              # ... nor an aside saying what a list is ("… to the messages list. messages list is the shopping")
              rf"(?![^.!?]*\b(?:{REQUEST_WORDS})\b(?!\s+(?:is|are|was|means)\b))[^?]*)?\W*$")
# The verbs that put items on a list, here and in services/act/list_edits.py: "stick porridge oats on instead".
ADD_VERBS = r"add|put|pop|stick|chuck|bung|whack"
LIST_ADD = re.compile(POLITE + rf"(?:{ADD_VERBS})\s+(?P<items>.+?)\s+(?:to|on|onto|in|into)\s+" + NAMED_LIST
                      + AFTER_LIST)
# The items asked onto a named list with no verb, politely: "oat milk and bananas on the shopping list please" (not
# "show me what's on the joining list pls": a list asked for).
LIST_PLEASE = re.compile(r"^(?!(?:(?:show|tell|read) (?:me|us) )?(?:what|wat|wot|whats|wots)\b)"
                         r"(?P<items>[^.?!:]{1,60}?)\s+(?:on|onto|to)\s+" + NAMED_LIST
                         + rf"(?:,?\s+(?:{PLEASE_WORDS}|thanks|thx|merci))+[.!]*$")
# "What's on my shopping list?"; as typed and as learners ask it: "wots on my tools list", "What I have on my garden
# list?", "What is on cottage list?" (a name of its own is needed without "my" or "the"), "wat we got on the list for
# the beach so far", "What have I put on my list for the garden thus far?", "Tell me what is in my joining list".
LIST_VIEW = re.compile(POLITE + r"(?:(?:(?:(?:show|tell|read) (?:me|us) )?(?:what|wat|wot)(?:'s|s| is| are)?"
                       r"(?: (?:do|have|did) (?:i|we)| (?:i|we|you))?(?: (?:got|have|put|added))?(?: so far)?"
                       # "what left on my thesis list?", "what's still left on …"
                       r"(?:(?: still)? (?:left|remaining))?"
                       r"|wots|wats|wot's)\s+(?:on|in)|show(?: me)?|read(?: me)?|tell me)\s+"
                       r"(?:(?:my|the|our) list for (?:the |my |our )?(?P<purpose>[a-z0-9][a-z0-9' -]{0,30}?)|"
                       + NAMED_LIST + r"|(?P<bare>(?!(?:a|an|the|my|our|this|that|your)\b)[a-z0-9][a-z0-9'-]{2,30}"
                       r"(?: [a-z0-9'-]+)?) list)(?:\s+(?:so far|thus far|now|atm|at the moment|right now|again))?"
                       r"(?:\s+(?:please|pls|plz))?\W*$")
# "Create a packing list with passport and charger", "start a new list for the party: balloons, candles",
# "I need a list for the camping weekend. tent, sleeping bags, headlamp", "make me a wishlist w/ a kindle, a pan".
LIST_CREATE = re.compile(
    # "I want (to) make a list …", as learners and chat say it, is a making (the list was called "to make a").
    POLITE + r"(?:create|make|start|set up|open|begin|put together|"
    r"(?:i (?:need|want|would like)|i'd like)(?: to)?(?: (?:make|create|start|have))?)(?: me| us| for (?:me|us))? "
    r"(?:a |an |another )?(?:new )?(?:(?P<name>(?!to )[^\W_'][\w' -]{0,40}?) )?(?:(?P<wish>wish)?list|checklist)"
    # "make new list, name it truck list, with …"
    r"(?:(?: called| named| titled|,? (?:and )?(?:name|call) it) (?P<called>[^:,]{1,40}?)"
    r"| (?P<quoted>'[^']{1,40}'|\"[^\"]{1,40}\")"
    # "Make for me a list of shopping: rice, oil" (not "a list of interview questions": no items follow)
    r"| of (?P<of>[^\W\d_][\w' -]{0,30}?)(?=\s*:))?"
    # Names as typed, accents and all: "Create a list for my trip to Chiloé with sunscreen, boots, …".
    r"(?: for (?:the |my |our )?(?P<purpose>[^\W_][\w' -]{0,30}?))?"
    # Chat's "w" is "with": "create an apartment list w mini fridge, string lights, …".
    r"\s*(?:,?(?: with| w/| w(?= )| containing| including)(?: the following(?: items| things)?)?\s*:?|:|,|-|\.)\s*"
    r"(?P<items>.+?)\W*$"
)
# A named list and its items with no verb: "Shopping list: milk, eggs, bread", "packing list - passport, charger".
_WORD = rf"[a-z0-9'{LATIN_LETTERS}][a-z0-9'{LATIN_LETTERS}-]*"  # "fête list: candles, cake"
LIST_ITEMS = re.compile(
    rf"^(?:[^:]*? (?:on|onto|to|in|for) )?(?:(?:my|the|our|a) )?(?:(?:(?P<name>{_WORD}(?: {_WORD}){{0,2}}) )?"
    r"(?:(?P<wish>wish)?list|to-?dos)|(?P<groceries>groceries))"
    r"(?: for (?:the |my |our )?(?P<purpose>[a-z0-9][a-z0-9' -]{0,30}?))?\s*(?::|-|\u2013|\u2014)\s*(?P<items>.+?)\W*$"
)
# The verbs that take items off a list ("tek": Jamaican English's "take"), here and in services/act/list_edits.py.
REMOVE_VERBS = r"take|tek|cross|remove|delete|strike|scratch|knock|drop|scrap|ditch|nix|bin"
# What follows a list's name and a colon when it changes the list rather than lists its items.
# (A verb that also names a thing only with its object: "bin the relaxer", not "bin bags, toilet roll"; "scrap the
# Irn Bru", not "scrap paper"; "scratch that", not "scratch cards".)
_TAKES_OFF = re.compile(rf"(?:(?:please|pls|ok|so|and)[, ]+)*(?:(?:remove|delete|nix|tek)\b|(?:{REMOVE_VERBS})\b"
                        r"(?=\s+(?:off|out|the|that|this|those|these|them|it|my|our|a|an|all|any)\b))")
# Clause openings a stored fact or goal may follow: "Thanks for earlier. Also, please remember that ...".
_CLAUSES = re.compile(r"(?:^|(?<=[.!?])\s+)(?:(?:also|and|but|oh|so|ok|okay|anyway|hey|hi)[, ]+)*", re.IGNORECASE)
MEMORIZE = re.compile(
    r"(?:(?:please|pls|plz|kindly|bitte|por favor)[, ]+)?(?:(?:can|could|would|will) (?:you|u)(?: please)? |"
    r"i (?:want|need|would like|'m wanting|am wanting|'m needing|am needing) "
    r"you to |i'?d like you to )?(?:(?:please|pls|plz|kindly) )?"
    r"(?:store|save|remember|remeber|rember|note(?: down)?|memori[sz]e|keep in mind|jot down|write down|make a note|"
    r"keep a note|file(?: away)?|for future reference|storing|saving|remembering|noting|(?:hold|hang) on ?to|"
    r"keep hold of|"
    # The storing verbs of other languages, which the router reads only before a colon ("bitte merken: ...").
    r"(?:merken|merk dir|notieren|speichern|apunta|anota|guarda|recuerda|notez|retiens|enregistre)"
    r"(?: (?:esto|eso|das|dies|ça|cela))?(?=\s*:))"
    # "note to self but store it: ..." stores what follows the second verb.
    r"(?: to (?:self|myself)(?:,? (?:but|and|so|just) (?:store|save|keep|remember|note)(?= (?:it|this)\s*:))?)?"
    r"(?: (?:this|the following|it|the (?:fact|info|information|detail)s?))?(?: (?:verbatim|info|information|note|"
    r"for me|please))*"
    r"(?:\s*[:\-\u2013\u2014,]\s*|\s+that\s+|\s+)(?P<text>\S.+?)\W*$",
    re.IGNORECASE,
)
# The fact first, then the ask to keep it: "my locker code is 4411, save that", "Pin for the garage: 8812. Keep it
# for me", "the wifi password is Tulip-2219 - remember it please".
MEMORIZE_AFTER = re.compile(
    r"^(?P<text>[^?]{6,}?)\s*(?:[,;.!]|\s-|\s\u2013)\s*"
    r"(?:(?:and|so|please|pls|plz|kindly|can you|could you|would you)\s+)*"
    r"(?:remember|save|store|note|keep|memori[sz]e|jot down)\s+(?:it|that|this)(?: down)?(?: for me)?"
    r"(?:,?\s*(?:please|pls|plz|thanks|thank you|thx))?[\s.!]*$", re.IGNORECASE)  # "…, remember it?" asks
GOAL = re.compile(r"\bgoal(?: for [a-z ]{1,20}?)?\s*(?::|-|\u2013|\u2014)\s*(?P<colon>.+)|"
                  r"\bgoal (?:is |would be )?(?:to|of) (?P<to>.+)|"
                  # "I want to read 20 books this year, can you keep track of that goal?": the wish, then the ask.
                  r"\bi (?:really )?(?:want|'d like|would like|plan|hope|intend|need|'m going|am going|aim) to "
                  # A number's thousands comma stays in it: "I want to hit 10,000 steps a day, can you track that?".
                  r"(?P<want>(?:[^.!?,;]|(?<=\d)[,.](?=\d))+)[,.;!]\s*"
                  r"(?=[^.!?]*\b(?:goal|track|hold me|accountable)\b)", re.IGNORECASE)
# What follows the goal itself: "..., can you track it?", "... Keep track of it for me, would you?".
_TRACKING_TAIL = re.compile(
    r"(?:[,.;!-]\s*|\s+(?:and|so)\s+)(?:(?:can|could|would|will) you\s+|please\s+|pls\s+)*(?:keep track|track|"
    r"hold me|keep me|help me|record it|log it|note it|make it)\b.*$|[,.;!]?\s*(?:please|pls|thanks|thank you|thx)\W*$",
    re.IGNORECASE,
)


def plain_action(text: str, signals: dict[str, Any], now: datetime, zone: tzinfo,
                 words: DueWords | None = None) -> PlainAction | None:
    """The one action a plain list, reminder, memory or goal request asks for, or None (the LLM plans it); ``words``
    are configs/act.toml [due] ("in a few minutes")."""
    text = undictated(text)  # "add eggs comma flour to the list full stop", as the router read it
    lowered = " ".join(text.replace("\u2019", "'").lower().split())
    if signals.get("skill_list") or signals.get("skill_manage"):
        action = _list_action(lowered)
        if action is not None:  # its items as typed: "Wolf Hall", not "wolf hall" (a view has none)
            items = action.arguments.get("items")
            return PlainAction("list", {**action.arguments, "items": as_typed(items, text)}) if items else action
    if signals.get("skill_remind") and (signals.get("has_time") or EVERY.search(lowered)):
        reminder = _reminder_action(lowered, now, zone, words)
        if reminder is not None:  # its text as typed: "book the MOT", "call Grandma"
            return PlainAction("schedule", {**reminder.arguments,
                                            "text": as_typed([reminder.arguments["text"]], text)[0]})
    plain = " ".join(text.replace("\u2019", "'").split())  # the person's own case: stored as given
    writes = signals.get("slots_complete") and not signals.get("skill_manage") and not signals.get("skill_remind")
    if writes and signals.get("skill_goal"):
        goal = _first_match(GOAL, plain, lambda m: m["colon"] or m["to"] or m["want"])
        if goal:
            return PlainAction("goal", {"operation": "create", "text": goal})
    if writes and signals.get("skill_remember"):
        fact = _first_match(MEMORIZE, plain, lambda m: m["text"], anchored=True)
        after = MEMORIZE_AFTER.match(plain)
        fact = fact or (after["text"].strip(" .,;:-" + _QUOTES) if after else None)
        if fact and not fact.lower().startswith("to "):  # "remember to call mum" is a task, not a fact
            return PlainAction("memorize", {"text": fact})
    if asks_for_reminders(lowered, signals) or (signals.get("shows_stored") and _TIMED_THINGS.search(lowered)):
        return PlainAction("schedule", {"operation": "list"})
    if signals.get("shows_stored") and _GOALS.search(lowered):
        return PlainAction("goal", {"operation": "list"})  # "list my goals"
    if (signals.get("question") or signals.get("shows_stored")) and not signals.get("action_request"):
        # "Bring up what I saved about the boiler" searches memory like a question about it does.
        # A question routed to ACT reads memory: recall with the question itself, the model then answers from it.
        return PlainAction("recall", {"query": text.strip()})
    return None


# What a command to show stored items (the router's ``shows_stored``) names: the schedule's items, or the goals.
_TIMED_THINGS = re.compile(r"\b(?:remind\w*|alarms?|timers?|check-?ins?|appointments?|events?|meetings?)\b")
_GOALS = re.compile(r"\b(?:goals?|resolutions?)\b")
# "What was it that you were to prompt me about tomorrow morning?" asks for the reminders as "remind" does.
_REMINDING = re.compile(r"remind|\b(?:ping|nudge|prompt|alert|buzz) me\b")
_CHANGE_WORDS = re.compile(r"\b(?:cancel|delete|remove|move|change|push|postpone|snooze|stop|turn off)\b")


# "remind me" as a question's tag asks the question again, never for the reminders: "Where I does live now, remind me
# nah?" was answered with the reminders' list.
_REMIND_TAG = re.compile(r"[,;]?\s*\bremind me(?:,?\s+(?:again|please|pls|nah|na|lah|ah|eh|ya|no|o|abeg|sis|bro))*"
                         r"\s*[?!.]*\s*$")


def asks_for_reminders(lowered: str, signals: dict[str, Any]) -> bool:
    """"Did I set a reminder for Monday?", "What did I ask you to remind me about tomorrow?": the reminders, read
    as they are (a 0.5B model given them as notes answered "Yes, I asked you to remind me of anything on Friday")."""
    lowered = _REMIND_TAG.sub("?", lowered)
    return bool(signals.get("question") and _REMINDING.search(lowered)
                and not any(REMIND.match(opening) for opening in request_openings(lowered))
                and _CHANGE_WORDS.search(lowered) is None)


def _first_match(regex: re.Pattern[str], text: str, part: Any, anchored: bool = False) -> str | None:
    """The wanted part of the first clause ``regex`` matches (at a clause opening when ``anchored``), trimmed."""
    for start in _CLAUSES.finditer(text):
        clause = text[start.end():]
        match = regex.match(clause) if anchored else regex.search(clause)
        if match:
            found = _TRACKING_TAIL.sub("", part(match)).strip(" .,;:-" + _QUOTES)
            return found if len(found.split()) >= 2 else None
        if not anchored:
            return None  # search already looked at the whole rest of the text
    return None




# Skills whose questions change something ("can you delete my reminder?"): the loop plans those.
_CHANGING = ("skill_manage", "skill_forget", "skill_goal", "skill_schedule")
# Skills a question may be about that the small-model notes hold (services/memory/notes.compact_notes):
# what the person told (recall), their next reminders and their lists.
_NOTED = ("skill_recall", "skill_remind", "skill_list")


def answers_from_memory(text: str, signals: dict[str, Any]) -> bool:
    """A question about what the person told or set ("What is my dog's name?", "What did I ask you to remind me
    about tomorrow?", "What do I need to buy?") that the router sent to ACT.

    The fast path would run ``recall`` with the question and have the model word a reply from the skill's
    JSON result; the turn's own notes were assembled from the same question and hold the next reminders and
    the lists, so a small model answers better from them as a plain reply (and a planning failure can never
    end it). A list read by name ("What's on my shopping list?") stays with the fast path, which reads it
    exactly; a request the fast path takes ("Can you remind me at 9 to …?") is no question about memory.
    """
    if not signals.get("question") or any(signals.get(name) for name in _CHANGING):
        return False
    if not any(signals.get(name) for name in _NOTED):
        return False
    lowered = " ".join(text.replace("\u2019", "'").lower().split())
    if asks_for_reminders(lowered, signals):
        return False  # read from the reminders themselves (plain_action)
    if REMIND_ASKS_RE.search(lowered) and not signals.get("has_time"):
        return True  # a question about what was told (the planner given one set the person's last reminder again)
    takes = (LIST_VIEW, LIST_ADD, LIST_CREATE, REMIND)
    # ... also after a greeting or news that asks nothing ("Morning! Could you add milk to my shopping list?").
    requested = any(pattern.match(opening) for opening in request_openings(lowered) for pattern in takes)
    return not requested and _first_match(MEMORIZE, text, lambda m: m["text"], anchored=True) is None


# Skills a statement may ask for without a question ("I need to buy milk" → a list): those stay with ACT.
_SKILLS = ("skill_list", "skill_remind", "skill_schedule", "skill_goal", "skill_manage", "skill_forget",
           "skill_remember", "skill_recall", "skill_introspect", "skill_continuation")


_CLOSING = ("thanks", "farewell", "phatic_only")
CONTINUATION_WORDS = 8


def only_tells(signals: dict[str, Any]) -> bool:
    """A message that only tells something ("Oh and my sister is getting married in June!") though the router
    sent it to ACT (after an ACT turn, say): no question, no request, no skill of its own in it.

    A 0.5B planner given one ran ``recall`` with it and wrote "The person found Funmi's marriage on the 14th
    of June"; under the small-model profile it is answered as what it is, a statement.
    """
    asks = ("question", "action_request", "imperative", "writing_task")
    if any(signals.get(name) for name in asks + _SKILLS if name != "skill_continuation"):
        return False
    # Thanks or goodbye after a reminder ("Thanks, that's all for now") continues nothing; nor does news of a
    # dozen words that happens to hold a date ("…my sister is getting married on the 14th of June!"): the router
    # counts any message with a time as a slot filled, but a slot answer is short ("tomorrow at 9 please").
    longer_than_a_slot_answer = signals.get("word_count", 0) > CONTINUATION_WORDS
    return (not signals.get("skill_continuation") or longer_than_a_slot_answer
            or any(signals.get(name) for name in _CLOSING))


# More items after the list's name: "add hazelnuts to my supplier list please, and also dark chocolate" (not "…, and
# also it's for Saturday": a clause).
_MORE_ITEMS = re.compile(r"^\s+list" + _AFTER_NAME_WORDS + r"\s*,?\s*(?:and also|and|also|plus|oh and|as well as)\s+"
                         r"(?P<more>[^.!?;]+?)\W*$")


def _more_items(after_name: str) -> list[str]:
    more = _MORE_ITEMS.match(after_name)
    if more is None or SAYS_SOMETHING.search(more["more"]):
        return []
    return [item for item in said_items(more["more"]) if len(item.split()) <= 4]


# A request after news in the same sentence: "The kettle broke, so add a new kettle to my shopping list", "it broke so
# add a kettle to the list", "the dog ate it, can you add a charger to my list".
_CLAUSE_REQUEST = (r"(?:,\s+(?:so\s+)?|\s+so\s+)(?=(?:(?:please|pls|plz|(?:can|could|would|will) (?:you|u))\s+)*"
                   rf"(?:(?:{ADD_VERBS})\s|remind me\b))")
_OPENINGS = re.compile(rf"{SENTENCE_STARTS.pattern}|{_CLAUSE_REQUEST}")


def request_openings(text: str) -> list[str]:
    """Where a request may begin: the message, and each sentence or clause after a greeting or news that asks nothing
    ("me n the girls are off to lisbon in may!! create a packing list with passport, …", "Quick one. Can you remind me
    at 5 to …?", "The kettle broke, so add a kettle to my list"); none after an earlier request (the model plans the
    whole message)."""
    openings = []
    for start in _OPENINGS.finditer(text):
        if start.start() and ASKS_SOMETHING.search(text[:start.start()]):
            break
        openings.append(text[start.end():])
    return openings


def _list_action(text: str) -> PlainAction | None:
    """The list request of the message, at its start or after what asks nothing (``request_openings``)."""
    return next(filter(None, map(_list_action_at, request_openings(text))), None)


def _reminder_action(text: str, now: datetime, zone: tzinfo, words: DueWords | None = None) -> PlainAction | None:
    """The reminder request of the message (``request_openings``), read from its own sentence first: "Remind me on
    Friday at ten to take Pickle to the vet. He hates the vet." is to take Pickle to the vet (the whole rest was the
    reminder's text)."""
    for index, opening in enumerate(request_openings(text)):
        sentences = SENTENCE_BREAK.split(opening, maxsplit=2)
        action = reminder_action(sentences[0], now, zone, words)
        read = sentences[0]
        if len(sentences) > 1:
            # Its time in the next sentence ("Remind me to call mum. Tomorrow at 9."): the two read as one, the task
            # all in the first; or the hour of its day ("Remind me tomorrow to call mum. At 6pm.").
            said = time_sentence(sentences[1])
            told = (with_hour_said_next(action, sentences[0], said, now, zone, words) if action is not None
                    else reminder_action(f"{sentences[0].rstrip(' .!?')} {said}", now, zone, words))
            if told is not None and told is not action and told.arguments["text"] in sentences[0]:
                action, read = told, f"{sentences[0]} {sentences[1]}"
        if action is not None:  # ... unless a second request follows: the model plans both
            return None if ASKS_SOMETHING.search(opening[len(read):]) else action
        # Else the message read whole, once ("Remind me to call mum. It's her birthday tomorrow.").
        whole = reminder_action(opening, now, zone, words) if index == 0 and len(sentences) > 1 else None
        if whole is not None:
            return whole
    return None



def _list_action_at(text: str) -> PlainAction | None:
    for created in (LIST_CREATE.match(text), LIST_ITEMS.match(text)):
        if not created or _TAKES_OFF.match(created["items"]):  # "Batumi list: remove corkscrews …": list_edits
            continue
        named = {key: created.groupdict().get(key)
                 for key in ("called", "quoted", "of", "name", "purpose", "wish", "groceries")}
        # "a bday wishlist" is the "bday wish" list, found again as "my wishlist" (the list skill's ``list_name``)
        wished = named["name"] and named["wish"] and f"{named['name']} wish"
        name = (named["called"] or named["quoted"] or named["of"] or wished or named["name"] or named["purpose"]
                or named["wish"] or named["groceries"] or "")
        name = name.strip(" " + _QUOTES)
        items = said_items(created["items"])
        if name and name != "new" and items and len(items) <= 10:
            return PlainAction("list", {"operation": "add", "name": name, "items": items})
    added = LIST_ADD.match(text) or LIST_PLEASE.match(text)
    if added:
        items = said_items(added["items"]) + _more_items(text[added.end("name"):])
        # "I need flour, add it to my shopping list": which thing "it" is, the planner reads
        if items and len(items) <= 10 and not any(POINTER_ITEM.match(item) for item in items):
            return PlainAction("list", {"operation": "add", "name": added["name"].strip(), "items": items})
    viewed = LIST_VIEW.match(text)
    if viewed:
        name = viewed["name"] or viewed["purpose"] or viewed["bare"]
        return PlainAction("list", {"operation": "view", "name": name.strip()})
    return None
