"""Lexicons of what the person keeps with the assistant: showing it, asking about it, being prompted, editing it.

Compiled once at import (pure data, no I/O), like ``services/router/words.py``; ``services/router/signals.py``
turns them into ``shows_stored``, ``past_question``, a scheduled prompt's ``skill_schedule`` and ``names_nothing``.
"""

from __future__ import annotations

import re

from services.router.ascii_twin import grouped
from services.router.list_words import CLAUSE_START
from services.router.prefilter import prefiltered

# Asking to be prompted, opening a clause: with a time it is a scheduled prompt ("Every Monday at 8, ask me what my
# priorities are"); "my boss will ask me about it on Monday" opens no clause with it.
PROMPT_ME_RE = re.compile(rf"{CLAUSE_START}(?:ask|quiz|prompt|check in (?:with|on)|check on) me\b")
# An edit of something never named: "Can you change the time?", "update the list" (no earlier turn: which one?).
BARE_EDIT_RE = re.compile(
    r"^(?:change|update|edit|move|adjust|modify|fix|redo|undo|switch|rename|cancel)(?: (?:the|that|this))? "
    r"(?:time|date|day|list|reminder|alarm|goal|plan|note|entry|item|name|title)"
    # The new value says what it becomes, not what is changed: "change the time to 5 instead".
    r"(?: (?:to|for) [^.?!,]{1,25}?)?(?: instead)?\W*$"
)
# A thing to store named by its kind alone: "save the number", "remember the code" (which number? what code?).
BARE_STORE_RE = re.compile(
    r"^(?:save|store|remember|note(?: down)?|keep|log|record|jot down|write down|memori[sz]e|make a note of|"
    r"(?:hold|hang) on to|keep hold of) (?:the|my|our|that|this) "
    r"(?:[a-z'-]+ )?(?:number|code|address|password|pin|name|date|details?|info|information|link|figure|amount)"
    # Or whose it is, which says which one but not what: "remember the name of that place".
    r"(?: of (?:the|that|this|his|her|their|our|my) [a-z'-]+)?"
    # What it belongs to says which kind, not which one: "save the new number for the garage".
    r"(?: (?:for me|for later|please|pls|for (?:the|my|our) [a-z'-]+))*\W*$"
)
# Numbered, bulleted, boxed or quoted entries left empty after a colon or under a heading line: "things to
# pack:\n1.\n2.\n3.", "Shopping for the party:\n>\n>", "to do:\n[ ]\n[ ]", "Camp list\n•\n•", "Packing:\na.\nb.", hollow
# circles or squares ("Jobs:\n○\n○"), tildes or plus signs ("Tent list:\n~\n~") (a form to fill, no item).
EMPTY_ENTRIES_RE = re.compile(r"(?::|\n)\s*(?:(?:\d{1,2}[.)]|[a-h][.)]|[-*•>▪◦☐○●◯□■▢▫◇◆~+·–—=]|\[ ?\])\s*){2,}$")
# A command to show what is stored (issue 31, fourth round): a display verb, then the person's stored things or what
# was kept ("show my reminders", "list my goals", "pull up the memories you saved about Jamie", "look up what I told
# you about X", "list everything I've asked you to store"). Not "show me how to ...", "list the goals of the
# treaty", "find my keys". A list read by name is the list skill's own ("read me the shopping list").
_SHOWN = (r"(?:reminders?|alarms?|timers?|goals?|resolutions?|notes?|memor(?:y|ies)|check-?ins?|appointments?|events?|"
          r"meetings?|facts?|entries|records?)")
# "everything you've got saved about my passport": what was kept, with "got" before it.
_KEPT = (r"(?:(?:got )?(?:saved|stored|kept|noted|remembered|memori[sz]ed|recorded|logged)|told (?:you|u)|said|"
         r"mentioned|wrote|shared|(?:got|have) (?:on|about)|"
         # Handed over to be kept: "what I had you save about the boiler", "everything I got you to store", "what I
         # asked you to hold on to", "the notes I gave you".
         r"(?:asked (?:you|u) to |(?:had|got) (?:you|u) (?:to )?)(?:store|save|remember|keep|note|log|record|"
         r"memori[sz]e|hold on to|hang on to|keep hold of)|(?:gave|handed) (?:you|u)|left with (?:you|u))")
# Only what was kept, not anything said: "the wifi passwords I've saved" (not "the essay I wrote").
_STORED_BY_ME = (r"(?:(?:got )?(?:saved|stored|kept|noted|memori[sz]ed|recorded|logged)|"
                 r"(?:asked you to |(?:had|got) (?:you|u) (?:to )?)(?:store|save|remember|keep|note|memori[sz]e|"
                 r"hold on to|hang on to|keep hold of)|(?:gave|handed) (?:you|u)|left with (?:you|u))")
# Texted or slipped, too: "shw me my goals pls".
SHOW_STORED_RE = grouped(
    rf"{CLAUSE_START}(?:show|shw|shwo|list|display|pull up|bring up|give|get|fetch|retrieve|read(?: out| back)?|"
    r"look up|find|"
    r"search|run through|go over|(?:talk|run|walk|take) (?:me|us) through|"
    r"dig out|go through|print(?: out)?|export|open(?: up)?|view|review|recite|repeat(?: back)?|"
    # Found again where they are kept: "dig up what I told you about ...", "fish out the notes I gave you".
    r"dig up|fish out|look through|(?:bring|pull|call) back up|call up|"
    # Asking to see them: "let me see my reminders", "can I see my goals?", "I'd like to see my notes".
    r"(?:let me|(?:can|could|may) i|i'?d like to|i want to|i wanna) (?:see|view|look at|have a look at|check))"
    # "show to me please my reminders of the next days": a learner's word order says the same.
    # "show me what's in my reminders for tomorrow": what they hold is them.
    r"(?: (?:to )?(?:me|us))?(?:,? (?:please|pls|plz))?(?: out| back)?"
    r"(?: (?:(?:a|the)(?: full| whole| complete| quick| brief| short)? (?:list|rundown|run-?down|recap) of|all(?: of)?|"
    # A look given at them: "give me a quick look at all the things you've remembered".
    r"(?:a|an)(?: quick| brief| short| little)? (?:look|peek|glance|overview) (?:at|of)(?: all(?: of)?)?|"
    r"(?:what'?s|whats|what is|everything) (?:in|on)))? "
    # "show me tomorrow's reminders": named by their day.
    rf"(?:(?:my|our|the|all|every|each|(?:(?:this|next|last|the) )?[a-z]+'s)(?: [a-z'-]+){{0,3}}? {_SHOWN}\b"
    r"(?! of\b(?! (?:the )?(?:next|coming|past|last|"
    r"this|upcoming)\b))|"
    # Named with how they came to be: "show me what reminders I have set", "every reminder I've scheduled".
    rf"(?:what|which|the|all(?: the)?|every|each|any)(?: [a-z'-]+)? {_SHOWN} (?:that )?(?:i|i've|i have|we|we've|you|"
    r"you've|you have)(?: (?:already|ever))? (?:set(?: up)?|scheduled|booked|added|made|got|have(?: set)?|"
    rf"{_STORED_BY_ME})\b|"
    # Anything called kept: "show my stored info", "list all the saved passwords".
    rf"(?:(?:my|our|the|all)(?: the| my)? )?(?:saved|stored|kept|remembered|noted|recorded|logged) [a-z'-]+|"
    rf"(?:everything|whatever|what|anything|all|(?:the )?(?:things|stuff|memories|notes|facts))(?: that)? "
    rf"(?:i|i've|ive|i have|we|you|you've|you have|u)(?: (?:already|ever))? {_KEPT}|"  # texted: "ive told u"
    # Anything named, then what was kept of it: "show me the wifi passwords I've saved".
    rf"(?:my|our|the|all(?: the| my)?)(?: [a-z'-]+){{1,3}}?(?: that)? (?:i|i've|i have|we|you|you've|you have)"
    rf"(?: (?:already|ever))? {_STORED_BY_ME})|"
    # The stored things named in a question, then shown by a pointer at them: "Which goals have I got? Show me them",
    # "what notes do you have on the van? read them out" (the pointer stands for what the question named).
    rf"\b{_SHOWN}\b[^.?!]{{0,40}}[.?!]+\s*(?:(?:and|now|then|just|please|pls|can you|could you|would you) )*"
    r"(?:show|list|display|pull up|bring up|give|read(?: out| back)?|print(?: out)?|open(?: up)?)(?: (?:me|us))?"
    r"(?: (?:out|back|up))? (?:them|those|these|it|all of them|them all|the lot|all)\b"
)
# Stored things shown in shapes the display verbs above do not take, searched only in a message holding their words
# (issue 31, fifteenth round).
SHOWN_MORE_RE = prefiltered(
    # Terse, with no "my": "show reminders", "list goals for this week" (only the plural kept kinds, ending the message
    # or before when they are for; "show notes on how to ..." asks for a how-to).
    rf"{CLAUSE_START}(?:show|list|display|view|open|read out|pull up|bring up) (?:reminders|goals|notes|memories|"
    r"alarms|resolutions)(?:\W*$| (?:for|from|today|tomorrow|tonight|this|next|pls|please)\b)|"
    # The particle after what is shown: "pull my notes on the boat up", "dig the reminders for June out", "bring my
    # goals up, I want to see where I am" (a clause of its own may follow).
    # Thrown or put up where they are seen: "throw my goals up on the screen, would you".
    rf"{CLAUSE_START}(?:pull|dig|look|bring|call|throw|stick|pop|chuck|flash) (?:my|our|the|all(?: (?:my|the))?)"
    rf"(?: [a-z'-]+){{0,3}}? {_SHOWN}"
    r"(?: (?:on|about|for|from|of) [^.?!,]{1,40}?)? (?:up|out)(?: for (?:me|us))?"
    # Or for when they are: "bring my reminders up for next Monday, I think I double booked".
    r"(?: (?:for|from) (?:(?:next|this|last|the) )?(?:(?:mon|tues|wednes|thurs|fri|satur|sun)day|week|weekend|month|"
    r"tomorrow|today|tonight))?"
    # With what goes with them: "pull my savings goal up with the progress so far", "... with the progress on each";
    # where they are shown, before or after it: "Pull my goals up on screen, please."
    r"(?: on (?:the |my |your )?(?:screen|phone|display|laptop))?"
    r"(?: (?:with|and) (?:the |my |all the |its |their )?(?:progress|details|figures|numbers|stats|dates|totals|notes)"
    r"(?: (?:on|for|of) (?:each|each one|every one|them|them all|all of them))?"
    r"(?: (?:so far|to date|too|as well))?)?"
    r"(?: on (?:the |my |your )?(?:screen|phone|display|laptop))?"
    r"(?:,? (?:please|pls|thanks|thx|(?:would|will|could|can|won't) (?:you|u)))?"
    r"(?:\W*$|\s*[,.;!]\s*(?:i|i'd|i'm|so|just)\b)|"
    # Where the person stands on them, shown: "show me where I'm up to with my reading goal", "bring up how I'm doing on
    # my goals", "display my progress on the savings goal" (the goal's progress read back, none recorded).
    rf"{CLAUSE_START}(?:show|display|pull up|bring up|give)(?: (?:me|us))? (?:where (?:i'?m|i am|we'?re|we are)"
    r"(?: up to)?|how (?:far )?(?:i'?m|i am|we'?re|we are|i'?ve|we'?ve) (?:doing|getting on|got|gotten)|"
    r"(?:my|our|the) progress) (?:on|with|for|towards?) (?:my|our|the|all(?: my| the)?)(?: [a-z'-]+){0,3}? "
    r"(?:goals?|resolutions?|targets?)\b|"
    # Asked for by a label with no verb: "Quick rundown of this week's reminders please.", "recap of my goals pls".
    r"^(?:(?:a|the) )?(?:(?:quick|brief|short|full|whole|complete) )?(?:rundown|run-?down|recap|overview) of "
    rf"(?:(?:my|our|the|all(?: my| the)?|(?:(?:this|next|last|the) )?[a-z]+'s)(?: [a-z'-]+){{0,3}}? )?{_SHOWN}"
    r"(?: (?:for|from|on|this|next)(?: [a-z'-]+){1,3}?)?(?:,? (?:please|pls|plz|thanks|thx))?\W*$|"
    # "Recall" as the command to show what was kept: "recall all the facts you've saved about the boat".
    rf"{CLAUSE_START}recall (?:for me )?(?:all(?: of)?(?: the| my)?|every|each|the|my|everything|whatever|what)"
    rf"(?: [a-z'-]+){{0,2}}? (?:{_SHOWN} )?(?:that )?(?:i|i've|i have|we|you|you've|you have|u)(?: (?:already|ever))? "
    rf"{_STORED_BY_ME}\b|"
    # What was kept, named in a clause of its own (asked about, or forgotten), then a bare command to show it:
    # "Can't remember what I had you save about the boiler - show me please", "What have I got stored about the car?
    # Bring it up".
    r"\bwhat(?:ever)? (?:(?:have|had|did|do) )?(?:i|we)(?:'ve| have| had)? (?:(?:had|got|get|asked) (?:you|u) (?:to )?|"
    r"got )?(?:save|saved|store|stored|keep|kept|note|noted|log|logged|record|recorded|remember|remembered|"
    r"memori[sz]e|memori[sz]ed|hold on to|hang on to)\b[^.?!,\u2013\u2014]{0,40}?"
    # Its own clause ends with a mark, a dash or a comma ("I've lost track of what I asked you to keep about the
    # landlord, pull it up please").
    r"(?:[.?!;,]+|\s[-\u2013\u2014]+|[\u2013\u2014])\s*"
    r"(?:(?:and|now|then|just|please|pls|can you|could you|would you) )*"
    r"(?:show|pull|bring|dig|read|give|fetch|get|call)(?: (?:me|us))?(?: (?:it|them|that|those|the lot))?"
    r"(?: (?:up|out|back)){0,2}(?: to (?:me|us))?(?:,? (?:please|pls|plz|for (?:me|us)|thanks|cheers))*\W*$"
)
# A question about what the person told, or about a fact of theirs, wants an answer in words (RESPOND): "what did I
# tell you about my landlord?", "do you remember where I parked?", "remind me what my passport number is". Asked
# about a skill's own store it reads that store (ACT): "what's my next reminder?", "what are my goals?" — unless it
# asks what was *said* about it ("when did I say my dentist appointment was?").
ASKS_IN_WORDS_RE = re.compile(
    r"\b(?:remind|tell) me(?: again)? (?:what|who|where|when|which|how|whether|if)\b|"
    r"\brecall (?:for me )?(?:what|who|where|when|which|how|whether|if)\b"
)
SKILL_STORE_RE = re.compile(
    r"\b(?:remind\w*|alarms?|timers?|appointments?|meetings?|events?|calendar|schedule\w*|agenda|diary|lists?|"
    r"to-?dos?|goals?|resolutions?)\b"
)
SAID_RE = re.compile(
    r"\b(?:i|we) (?:told|said|mentioned)\b|\b(?:did|have|had|didn'?t|haven'?t) (?:i|we) (?:ever )?(?:tell|say|mention|"
    r"told|said|mentioned)\b"
)
