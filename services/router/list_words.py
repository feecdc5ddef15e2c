"""Lexicons of lists and of the clause a command opens: where an imperative can start, a named list, a list and its
items with no verb, a list made with its content, and the edits of stored things (``services/router/words.py`` builds
the skills' patterns from them)."""

from __future__ import annotations

from services.router.form_words import PLEASE_ABROAD

# Where an imperative can start: the top of the message, a new clause, or after a polite lead-in.
# (One factored alternation: re scans it several times faster than a list of "\bword " branches.)
CLAUSE_START = (
    # After a comma "so" or "then" opens a command: "..., so record that my manager is called Femi"; so does a question
    # before it: "What have I saved about the boiler? Show me the notes."; "so" without its comma too: "I keep losing
    # this so store it: ..." (the skills' patterns still want their verb and object after it).
    # After a dash too: "Arigatou in advance — show me my reminders" (a hyphen only with a space beside it).
    rf"(?:^|(?:[,.;!:?\u2013\u2014]|\s-+\s)\s*(?:(?:so|then) )?|\b(?:so|please|pls|plz|kindly|{PLEASE_ABROAD}|"
    r"can you|could you|would you|will you|can u|could u|you can|you could|u could|and(?: also)?|also|but|just|now|"
    r"mind|be possible to|as to|"
    r"(?:need|want)(?:ing)? you to|let'?s|"
    r"(?:like|want) that (?:you|u)|if (?:you|u) (?:would|could)) |"  # "I would like that you save ...": a learner's
    r"\bif (?:you|u)'d )"  # request; "I would be grateful if you would create …"
)
STORED = r"(?:reminders?|alarms?|timers?|appointments?|meetings?|events?|notifications?)"
# A name's letters in the list and goal patterns: the Latin alphabets' (ß to ɏ, the text is lower case), an apostrophe
# and a hyphen: "a baptême list", "my fête list", "Oisín's party list".
LATIN_LETTERS = r"\u00df-\u024f"  # the Latin alphabets' lower-case letters beyond a-z, ß to ɏ (a class's range)
NAME_CHAR = rf"[a-z{LATIN_LETTERS}'-]"
# A named list: "my shopping list", "the packing list", "our to-do list" (the name is group 1).
NAMED_LIST = (
    rf"(?:my|our|the|this|that) ((?:(?!(?:from|off|on|onto|to|of) ){NAME_CHAR}+ ){{0,3}})"
    r"(?:list|to-?do list|to-?dos?)\b"
    r"(?! of)"
)
WHOLE_LIST = rf"(?:delete|remove|clear|empty|wipe|reset|rename|archive)(?: out)? {NAMED_LIST}"
# The imperative alternatives of "manage" share one clause start: one pass over the text, not one per alternative.
MANAGE_AT_CLAUSE = (
    r"(?:cancel|delete|remove|clear|stop|pause|turn off|disable|snooze|move|push|shift|postpone|reschedule|change|"
    rf"update|edit|scrap|ditch|bin|drop|get rid of)\b[^.?!]{{0,40}}?\b{STORED}\b|"
    r"stop (?:reminding|pinging|nudging|bugging) me\b|"
    rf"un(?:check|tick)\b|(?:check|tick|cross|strike) off\b|tick\b|{WHOLE_LIST}|"
    rf"(?:create|make|start|set up|open)(?: me)? (?:a |an )?new (?:{NAME_CHAR}+ ){{0,2}}list\b|"
    r"(?:mark|complete|finish|close|drop|delete|remove|cancel|abandon|archive|pause|update|change|edit|raise|lower)\b"
    r"[^.?!]{0,30}?\bgoals?\b"
)

# Three or more short items separated by commas: "tent, sleeping bags, headlamp".
ITEM_RUN = r"[^.?!,:;]{1,40}(?:,[^.?!,:;]{1,40}){2,}"
# A named list and its items with no verb at all: "Shopping list: milk, eggs, bread", "packing list - passport".
LIST_ITEMS = (
    # Or wished for mid-sentence, after what it is for: "For the race I need a list: booties, wax, headlamps".
    rf"(?:^|[.!]\s+|\b(?:on|onto|to|in|for) |\b(?:i|we) (?:need|want|would like|'d like) )"
    rf"(?:(?:my|the|our|a|an|another|new) )?(?:{NAME_CHAR}+ ){{0,3}}?"
    # A learner's "my list of shopping" is the shopping list.
    r"(?:list(?: of shopping)?|to-?do list|todo list|checklist|wishlist|to-?dos|groceries|shopping|"
    r"things to (?:buy|get|pack|bring|do))"
    # A hyphen separates only with a space beside it: "a checklist for a first-time lambing season" has no items.
    # What it is for may take a few words: "List for the harvest at the Mendoza vineyard: secateurs, ...".
    # Or a heading on a line of its own, its entries on the lines below: "Camp list\n• tent\n• stove".
    # Or its items after "with", a run of them ending the message: "Picnic list please, with crisps, squash and a rug".
    r"(?: for [^.?!:,]{1,60}?)?(?:,? (?:please|pls))?(?:\s*:|\s+-|-\s|\s*\u2013|\s*\u2014|[ \t]*\n|,?\s+with\s+"
    r"(?=[^,.?!]{1,40},(?:[^,.?!]{1,40},)*[^,.?!]{0,40}\band\b[^,.?!]{1,40}[.!]*\s*$))\s*[^?\s][^?]*$"
)
# Items asked onto a named list with no verb, politely: "butter and cheese on the shopping list please" (not a
# question: "anything on the list, please?").
LIST_PLEASE = (
    r"(?:^|[.!\u2013\u2014-]\s*)(?!(?:what|which|who|how|is|are|anything|nothing|there)\b)[^.?!:]{1,60}? "
    rf"(?:on|onto|to) (?:my|our|the) (?:{NAME_CHAR}+ ){{0,2}}(?:list|to-?do list|checklist|groceries)"
    rf"(?:,? (?:please|pls|plz|{PLEASE_ABROAD}|thanks|thx|merci))+[.!]*\s*$"
)
# The list named first, then what goes on it: "For the under 9s kit list add cones, bibs and the ball pump".
LIST_FIRST = (
    # An order is a list to fill: "on my zoo shop order add penguin keyrings".
    r"(?:(?:^|[.!]\s+)(?:for|on|to|onto|in) (?:my|our|the) (?:[a-z0-9'-]+ ){0,3}(?:list|to-?do list|checklist|wishlist|"
    r"order),? "
    # Or named alone at the start, as a heading: "boat list. take the bucket off. add anchor and a spare battery".
    # Or with what it is: "pasalubong list change: remove the polvoron", "right the messages list, scrap the Irn Bru".
    r"|^(?:(?:my|our|the) )?(?:[^\W\d_][\w'-]* ){1,3}list(?: (?:changes?|updates?|edits?))?[.:!,]? (?:- )?)"
    r"(?:(?:please|pls|can you|could you|just) )?(?:add|put|include|pop|stick|chuck|bung|jot down|remove|delete|strike|"
    r"drop|scrap|ditch|nix|bin|scratch|(?:take|tek|cross|knock)(?: [^.?!]{0,40}?)? off)\b"
)
# Making a list that names its content: "create a packing list with X and Y", "new list called gifts: ...",
# "I need a to-do list for Saturday with ..."; or with nothing after it at all ("Create a list.": its slot is
# missing). Not "make me a list of interview questions" (writing, RESPOND) unless items follow a colon.
LIST_CREATE = (
    rf"{CLAUSE_START}(?:(?:create|creating|make|making|start|starting|set(?:ting)?(?: me| us)? up|open|opening|begin|"
    # "I'd like to start a reading list with …", "I want make a list for …" (a learner's)
    r"put(?:ting)? together|(?:i (?:need|want|would like)|i'?d like)(?: to)?(?: (?:make|create|start|have))?)"
    r"(?: me| us| myself| for (?:me|us))? (?:a |an |another )?(?:new )?|"
    r"new )"
    rf"(?:{NAME_CHAR}+ ){{0,3}}?(?:list|to-?do list|todo list|checklist|wishlist)\b"
    # Its items after a colon or a spaced dash: "set us up a packing list - passports, adapters".
    r"(?:(?! of)[^.?!]{0,40}?(?::|\s[-\u2013\u2014]\s|\bwith\b|\bw/|\bw (?=[^\W\d_])|\bcontaining\b|\bincluding\b|"
    r"\bcalled\b|\bnamed\b|"
    r"\btitled\b|['\"])|"
    # "I need a list for the camping weekend. tent, sleeping bags, headlamp": the items follow in a run of their own.
    rf"(?! of)[^.?!]{{0,40}}?[.!]\s+{ITEM_RUN}|"
    # "make a list for the bucks, esky, ice, fishing rods, snags": what it is for, then its items.
    rf" for [^.?!,:]{{1,30}}?,\s*{ITEM_RUN}|"
    r" of [^.?!:]{1,40}:| of (?:those|these|them)\b|"
    rf"(?: for (?:me|us))?(?:,? (?:please|pls|{PLEASE_ABROAD}|thanks|thank you|thx|cheers|merci))*"
    r"\W*$)"
)
