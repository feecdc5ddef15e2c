"""Where a command's content is held when the message does not carry it: a photo, a letter, a ticket, a basket, a box.

Compiled once at import (pure data, no I/O), like ``services/router/command_words.py``, whose requests read them:
``services/router/objects.py`` takes such an object for a pointer, ``services/router/references.py`` a request whose
content is said, in a clause after it, to be on such a thing ("... They're on the timetable I printed.").
"""

from __future__ import annotations

import re

# Data kept somewhere else, named by where it is and never given: "add the figures from the banksman's sheet to my
# notes", "save the hoof measurements from this morning" (which figures?). Not an item ("add the milk from Aldi").
# A command's object held in something the conversation cannot see: "add everything in this photo to my list", "save
# all the dates on the attachment" (which are they?).
_MEDIUM = (
    # "the attached PDF", "that scanned letter", "my last screenshot": how it came does not show it.
    r"(?:this|that|the|my) (?:(?:attached|enclosed|scanned|linked|uploaded|forwarded|shared|last|latest|"
    # Or named by what it shows: "the whiteboard photo", "my receipt scan".
    r"new|other|first|second) )?(?:[a-z'-]+ )?(?:photo|picture|pic|screenshot|image|attachment|file|pdf|document|doc|"
    r"scan|video|voice (?:note|memo)|recording|spreadsheet|link|letter|e-?mail|receipt|flyer|leaflet|text|message|"
    r"voicemail|whatsapp|dm|"
    # Or a note on paper: "whatever's on the Post-it on my monitor", "the numbers on that sticky note".
    r"post-?it(?: note)?|sticky(?: note)?|napkin|whiteboard|"
    # Or a card, a label or a board held up or pinned somewhere: "the clinic card in this picture".
    r"card|label|board|poster|noticeboard|"
    # Or any paper it came on: "whatever's on the parking ticket", "the times on the timetable", "the invite".
    r"ticket|timetable|rota|invite|invitation|print-?out|sheet|form|menu|notice|brochure|pamphlet|booklet|"
    r"prescription|envelope|page|notebook|packet|sticker|"
    # Or what a cook or a teacher hands out: "the recipe below", "that worksheet".
    r"recipe|worksheet|handout|syllabus|itinerary|newsletter)s?\b"
)
_UNSEEN_MEDIUM = rf"(?:in|on|from) {_MEDIUM}"
# A list or reminders made out of such a thing, and nothing else said: "make a list from the recipe below", "make a
# list of everything on the label", "set reminders from the attached letter" (what does it say?). Not "make a list of
# films to watch" (writing) nor "make a list from this: eggs, milk" (given).
MADE_FROM_UNSEEN = (
    r"\b(?:list|checklist|to-?do list|reminders?|schedule|calendar|plan|goals?)"
    r"(?: (?:of )?(?:everything|all|whatever'?s?|what'?s|the (?:[a-z'-]+ )?(?:stuff|things|items|bits|dates|times))"
    r"(?: (?:that'?s|that is|which is|listed|written|printed))?)?"
    rf" (?:in|on|from|out of|off|using|based on) (?:{_MEDIUM}"
    r"(?: (?:below|above|attached|here|i (?:sent|pasted|attached|forwarded|got|have)))?|"
    # Or anything said to be above or below, as on a page: "make a to-do list from my notes above".
    r"(?:the|my|this|these|those) (?:[a-z'-]+ ){0,2}?[a-z'-]+ (?:below|above))"
    r"(?:,? (?:please|pls|thanks|for me|for us))*\W*$"
)
# The content said to be on such a thing, in a clause after the request: "Remember my train times for the week.
# They're on the timetable I printed.", "save my flight details, it's all in the email from the airline".
HELD_ELSEWHERE_RE = re.compile(
    r"[.!;,\u2013\u2014-]\s*(?:they'?re|they are|it'?s|it is|those are|these are|that'?s|everything'?s|all)(?: all)?"
    rf"(?: (?:written|printed|listed|scribbled|jotted|noted)(?: down)?)? {_UNSEEN_MEDIUM}"
)
# Entries named by their kind, held there: "the appointments that are written on the clinic card in this picture".
UNSEEN_HELD_RE = re.compile(
    # ("add what's on the whiteboard to my list": what it holds, unseen)
    r"^(?:everything|all|whatever|what|anything|the (?:[a-z'-]+ )?(?:stuff|things|items|bits|details|info|names|dates|"
    r"numbers|times|ingredients|words|figures|reminders|appointments|tasks|jobs|entries|events|meetings))"
    r"(?:'s| is| are|(?: that| which)(?:'s| is| are)?)?(?: (?:written|listed|shown|printed|typed|scribbled|jotted"
    rf"(?: down)?|noted(?: down)?|pictured))? (?:{_UNSEEN_MEDIUM}|"
    # Or in a container it cannot look into: "add whatever's in the basket to my list", "everything in my trolley".
    r"(?:in|on|from) (?:this|that|the|my|our) (?:[a-z'-]+ )?(?:basket|trolley|cart|bag|box|drawer|fridge|freezer|"
    r"cupboard|pantry|larder|tray|tin|jar|crate)s?\b)|"
    # Or what came with a thing or in the post: "store the instructions that came in the box", "the leaflet that came
    # with the kettle" (what do they say?).
    r"^(?:all )?the (?:[a-z'-]+ )?(?:instructions|directions|leaflets?|paperwork|details|info|information|codes?|"
    r"settings|numbers|dates|contents|stuff|things|bits|papers|forms|notes|manual|booklet|letter)"
    r"(?: that| which)? (?:came|come|arrived|was sent|were sent)(?: (?:to me|today|yesterday|this morning))? "
    r"(?:in|with|inside|on) (?:the|this|that|my|our|a|an)\b"
)
# One thing named and held there is no better (a reminder's text may name it: "remind me about the form in the email"):
# "remember the code on the photo", "save the address from the letter".
UNSEEN_THING_RE = re.compile(rf"^the (?:[a-z0-9'-]+ ){{1,2}}?{_UNSEEN_MEDIUM}")
# So is data named by the day it is from and put against something, none of it given: "put today's numbers against my
# goal", "log this week's figures towards the savings target".
SOURCED_DATA_RE = re.compile(
    r"^(?:(?:all )?(?:the|those|these)|(?:today|yesterday|tonight|this (?:week|month|morning|evening))'s) "
    r"(?:[a-z'-]+ ){0,2}(?:figures|measurements|numbers|readings|results|details|dates|"
    r"times|prices|scores|stats|statistics|info|information|codes|minutes|points|names|addresses|amounts|totals|"
    # Or what a recipe or a programme holds: "add the ingredients from that curry recipe to my list".
    r"quotes|sizes|specs|notes|ingredients|steps|instructions|quantities|lyrics) (?:from|off|on|in|against|towards?) "
    r"(?!(?:my|your|the) (?:notes|memory)\b)"
)
# A value named by where it is written, with no figure anywhere in the message: "Save the number on the side of the
# van", "note the code on the back of the gate" (what is it?).
VALUE_HELD_RE = re.compile(
    r"^(?:the|that) (?:[a-z'-]+ ){0,2}?(?:number|code|pin|password|time|date|address|postcode|reference|serial|"
    r"registration|reg|extension|figure|price|amount)s? (?:on|from|off|at|in) (?:the|that|this|my|a|an|his|her|their|"
    r"our) "
)
