"""Lexicons of asking for a written answer in a skill's words: writing tasks, plans drawn up, advice, how-to and
capability questions ("draft a reminder email to my team", "create a weekly cleaning schedule", "any tips for sticking
to my goals?", "how do I set an alarm on my iPhone?", "can you set reminders?").

Compiled once at import (pure data, no I/O), like ``services/router/words.py``; ``services/router/signals.py`` turns
them into ``writing_task`` and ``capability_question``.
"""

from __future__ import annotations

import re

from services.router.ascii_twin import twinned
from services.router.list_words import NAME_CHAR
from services.router.prefilter import prefiltered

# A writing task ("could you write me a poem", "draft a reminder email to my team") asks for text, not for
# something stored; "write it down" and "write X on my list" are still stores.
WRITING_RE = prefiltered(
    # Not told of oneself: "I just write on my hand".
    r"(?:(?:^|[,.;!:]\s*|\b(?:mind|kindly|as to|you|u|could|can|would|please|pls|and|(?<!\bi )(?<!\bwe )just) )"
    r"(?:write|writing|draft|"
    r"drafting|compose|composing|pen|rewrite|proofread|"
    r"summari[sz]e|translate|come up with|think up|dream up)|"
    # Suggesting is writing an answer too, when asked for: "Suggest a few reminders a new dog owner should set up" (not
    # "any recipes you suggest", said of the assistant).
    # ... and a learner's "propose me one dish I can cook" (not "propose to her").
    r"(?:^|[,.;!:]\s*|\b(?:please|pls|kindly|just|(?:can|could|would|will) (?:you|u)) )(?:suggest|recommend|"
    r"propose(?= (?:me|us|a|an|some|one|two|three|\d+)\b)))\b"
    r"(?!(?: (?:it|this|that|these|them))? down\b)"
    rf"(?![^.?!]{{0,60}}\b(?:on|onto|to|in|into) (?:my|our|the|your) (?:{NAME_CHAR}+ ){{0,2}}"
    r"(?:list|calendar|memory|notes|diary)\b)"
)
# How to do something oneself: "How do I set an alarm on my iPhone?" asks for an explanation.
# Also as a clause of its own: "My to-do list is huge: how do I pick what to do first?".
HOWTO_RE = prefiltered(
    r"(?:^|[.:;!?]\s+|[,:;]\s*)(?:(?:so|and|but|ok) )?how (?:do|can|could|should|would|did) "
    r"(?:i|you|we|one|people|u)\b|"
    r"^how to\b|"
    # "Is there a way to make my reminders app louder?", "any way to stop the alarm snoozing itself?": how, asked.
    r"(?:^|[.:;!?]\s+|[,:;]\s*)(?:(?:so|and|but|ok) )?(?:is there|are there|there is|any)(?: an?| any)?"
    r"(?: (?:easy|easier|simple|simpler|quick|quicker|good|better|best|other))? ways? (?:to|of)\b"
    # Not the assistant asked to do it: "is there a way to remind me at 6 to call Mum?" asks for the reminder.
    r"(?! (?:remind|ping|nudge|buzz|wake|alert|tell|text|message) (?:me|us)\b)|"
    r"\b(?:show|tell|teach) (?:me|us) how (?:to|do|does|can|you)\b"  # "show me how to set an alarm on android"
)
# A question about what the assistant can do, with nothing to do it on: "Can you set reminders?".
CAPABILITY_RE = re.compile(
    r"^(?:are you able to|is it possible (?:for you )?to|do you know how to|can you|could you|will you|do you) "
    r"(?:[a-z'-]+ ){1,2}?(?:reminders|lists|goals|notes|alarms|timers|memories|things|facts|information|info|stuff)"
    r"(?: (?:for|about) (?:me|people|us|users|them))?\W*$"
)
# Drawing up a schedule, a timetable, a routine or a plan is writing one, not booking anything: "create a weekly
# cleaning schedule for a house with 4 people" (not when the entries follow a colon: "make a schedule: gym Mon 6pm").
PLAN_WRITING_RE = twinned(
    r"\b(?:create|make|draw up|put together|set out|lay out|map out|sketch out|design|build|plan|come up with|"
    r"work out|devise|write)(?: me| us)? (?:a|an) "
    r"(?:[a-z'-]+ ){0,3}?(?:schedule|timetable|rota|routine|plan|itinerary)\b(?![^.?!]{0,60}:)"
)
# Asking for advice wants a written answer even in a skill's words: "my goal is to be happier, any advice?".
ADVICE_RE = prefiltered(
    # "need a good name for my candle shop", "need a quick tea idea after work", "Need a quick pico de gallo recipe"
    # (not "any recipes you give me", nor "I need to buy some recipe books").
    r"\b(?:any|some|got any|need|want|looking for)(?: an?| some)?(?: (?!to\b|for\b)[a-z]+){0,3} (?:advice|tips?|"
    r"suggestions?|ideas?|pointers|recommendations?)\b|\b(?:need|want|looking for)(?: an?| some)?"
    r"(?: (?!to\b|for\b)[a-z]+){0,4} (?:names?|recipes?|slogans?|captions?)\b(?! books?\b)|"
    # The assistant's suggestion asked for: "… a reminder system for the volunteers, what would you suggest?"
    r"\bwhat (?:would|do|could|can|should|might) (?:you|u) (?:suggest|recommend|advise|propose)\b|"
    # A topic named as the thing wanted: "pros and cons of electric bikes", "recipe for banana bread please".
    r"^(?:the )?(?:pros and cons|(?:pros|cons|benefits|advantages|disadvantages|downsides|risks) of|recipes? for|"
    r"difference between|top \d+|best way to)\b|"
    # The assistant's view asked for by its topic: "thoughts on whether I should retake the exam"; or what something is
    # for: "what's even the point of reminders if I never look at them?".
    r"^(?:any |your |ur )?(?:thoughts|opinions?|views?) (?:on|about)\b|"
    r"^(?:(?:so|but|honestly|seriously),? )?(?:what'?s|whats|what is)(?: even| really)? the point (?:of|in)\b|"
    # A query typed as its topic with no verb of its own: "ideas for a 6yo's birthday", "synonym for 'relentless'",
    # "boiling point of water at 3000m" (not a fact told or handed over: "the height of the van is 4.1m, save it").
    r"^(?:(?:(?:the|a|an|some|any|good|quick|fun|cheap|easy) )*(?:[a-z'-]+ )?(?:ideas?|tips?|suggestions?|advice|"
    r"recommendations?) (?:for|on|about)|"
    r"(?:the |a |an )?(?:synonyms?|antonyms?|(?:another|other) words?|rhymes?|plural|meaning|definition|origin|"
    r"translation|spelling|pronunciation|(?:boiling|melting|freezing) point|capital(?: city)?|population|"
    r"distance|conversion|half-life|speed|height|weight|depth|length|calories|symptoms|side effects) "
    r"(?:for|of|between|from|in))\b(?![^.?!]*(?:\b(?:is|are|was|were|it'?s|equals)\b|[:=]))"
)
