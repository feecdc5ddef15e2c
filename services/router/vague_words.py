"""Vague asks: a request for help, an undertaking or an area of chores handed over with no part of it named ("sort
out my life", "get the dentist stuff done for the kids", "new task"), which ``services/router/signals.py`` turns into
``vague_request``. Compiled once at import (pure data, no I/O), like ``services/router/command_words.py``.
"""

from __future__ import annotations

import re

from services.router.time_words import DAYS, MONTHS

# A tag after a request asks nothing more: "sort it all out, would you?", "get it all sorted for me, yeah?".
_ASK_TAG = r"(?:,? (?:would you|will you|could you|can you|won't you|yeah|ok|okay|right|alright|thanks|cheers))"
VAGUE_ASK_RE = re.compile(
    r"^(?:i )?(?:need|want|would like|could use|have) (?:some |your |a little )?(?:help|a favou?r|a question)"
    r"(?: to ask(?: you)?)?"
    r"(?: (?:with|on|about) (?:something|this|that|it|stuff))?(?: please)?\W*$|^(?:can|could) you help(?: me)?"
    r"(?: (?:with|on) (?:something|this|that|it))?\W*$|"
    # A whole undertaking to sort, named by one word and no more: "help me sort the wedding", "sort out my life", "take
    # care of the move" (which part of it? Not a stored thing: "sort my shopping list" is the list's).
    r"^(?:(?:please|pls|plz|can you|could you|would you|just|can u|could u) )*(?:help (?:me|us) (?:to )?)?"
    r"(?:sort|sort out|get sorted|take care of|deal with|see to|handle|tackle) (?:my|our|the) "
    r"(?!(?:[a-z'-]+ )?(?:lists?|notes|reminders?|goals?|calendar|diary)\b)"
    rf"[a-z'-]+(?: out)?(?:,? (?:for me|for us|please|pls))?{_ASK_TAG}?\W*$|"
    # Or asked as the state it should be in: "get my year organised", "get the move in order".
    r"^(?:(?:please|pls|plz|can you|could you|would you|just|can u|could u) )*get (?:my|our|the) "
    r"(?!(?:[a-z'-]+ )?(?:lists?|notes|reminders?|goals?|calendar|diary)\b)[a-z'-]+ (?:sorted(?: out)?|organi[sz]ed|"
    rf"in order|straight|together)(?: (?:for me|for us|please|pls))*{_ASK_TAG}?\W*$|"
    # Or a whole run of chores to be done: "get my life admin done", "get the paperwork dealt with" (which of them?).
    r"^(?:(?:please|pls|plz|can you|could you|would you|just|can u|could u) )*get (?:my|our|the|all my|all the) "
    r"(?:[a-z'-]+ )?(?:admin|paperwork|chores|errands|jobs|tasks|affairs|stuff|things) (?:done|sorted|dealt with|"
    rf"handled|out of the way|over with)(?:,? (?:for me|for us|please|pls))*{_ASK_TAG}?\W*$|"
    # A new entry asked for by its kind alone: "new task", "another note pls" (saying what?).
    r"^(?:(?:a|another|one more|new|add|add a|make a|start a) )+(?:new )?(?:task|note|item|entry|to-?do|thing to do)"
    r"(?: (?:please|pls|plz))?\W*$|"
    # Something unnamed done about a stored thing: "Do something about my notes, they're a mess."
    r"^(?:(?:please|pls|plz|can you|could you|would you|just|can u|could u) )*(?:do|sort|fix) (?:something|anything) "
    r"(?:about|with) (?:my|our|the|this|that|these|those|all) (?:[a-z'-]+ )?(?:notes|lists?|reminders|goals|calendar|"
    r"diary|schedule|week|stuff|things|inbox)\b"
)
# A deed on things named only by where they belong, no thing in particular: "can you deal with all the house stuff?",
# "handle the work things for me" (which of them? Not "handle the school run": a thing named).
# One thing named by its topic alone is no better: "deal with the rink thing", "get the chess stuff done" (done how?).
_HOLIDAYS = r"christmas|xmas|easter|thanksgiving|new year|hanukkah|diwali|eid|half[- ]term"
# Who or what it is for names no part of it: "get the dentist stuff done for the kids", "... ready for the move".
_FOR_WHAT = rf"for (?:(?:the|my|our|this|next) [a-z'-]+|{DAYS}|tomorrow|tonight)"
STUFF_ASK_RE = re.compile(
    r"^(?:(?:please|pls|plz|can you|could you|would you|will you|just|can u|could u) )*"
    # ("Get next month organised for me": put in order, which part of it?)
    r"(?:(?:deal with|handle|take care of|see to|look after|sort(?: out)?|do|tackle)(?= )|get(?=.* (?:done|sorted|"
    r"organi[sz]ed|in order|finished|over with|out of the way)"
    rf"(?: (?:for me|for us|please|pls|today|this week|{_FOR_WHAT}))*"
    rf"{_ASK_TAG}?\W*$))(?: (?:all|all of))? "
    # An area of chores named as a state of affairs is no better: "Deal with the boiler situation", "the parking issue".
    # Named by a few words of what it is about, it is no better: "Take care of the car insurance thing".
    r"(?:(?:my|our|the) (?:[a-z'-]+ ){0,3}(?:stuff|things?|bits|business|bits and pieces|side of things|situation|"
    r"issues?|problem|matter|mess|saga|palaver|drama|admin|malarkey)|"
    # Or a whole stretch of time or a holiday: "Deal with my weekend", "handle Easter for me this year" (which part?).
    rf"(?:(?:my|our|the|this|next) (?:day|week|weekend|month|year|morning|afternoon|evening|{DAYS}|{MONTHS}|"
    rf"{_HOLIDAYS})|tomorrow|today|tonight|{DAYS}|{_HOLIDAYS}))"
    r"(?: (?:out|done|sorted|organi[sz]ed|in order|finished|over with|out of the way|for me|for us|please|pls|today|"
    rf"this week|this year|{_FOR_WHAT}))*"
    # Maybe with why it is handed over, which names no part of it: "..., I can't face it", "... - I'm shattered".
    rf"(?:{_ASK_TAG}|\s*[,;\u2013\u2014-]\s*(?:i|i'm|im|i've|ive) "
    r"[^?]{0,40})?\W*$|"
    # Or nothing named at all, only put in order: "sort everything out", "get it all sorted for me, yeah?" (a vague
    # request until issue 31's twenty-ninth round, which a tag question then took for a question to answer).
    r"^(?:(?:please|pls|plz|can you|could you|would you|just|can u|could u) )*(?:get|put|sort(?: out)?|organi[sz]e|"
    r"tidy(?: up)?|straighten(?: out)?|clean up)(?: (?:all|all of))? (?:my |our |the )?(?:stuff|things|everything|"
    r"it all|all of it|the lot|lot|bits|mess)(?: (?:out|up|sorted|organi[sz]ed|tidied|in order|straight|together|ready|"
    rf"for me|for us|please|pls|{_FOR_WHAT}))*{_ASK_TAG}?\W*$"
)
