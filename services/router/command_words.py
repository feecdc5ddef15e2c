"""Lexicons of commands: the verbs that open one, placeholders and vague asks where a command's object would be, a
command closing a message on a pointer, and a label that only looks like one.

Compiled once at import (pure data, no I/O), like ``services/router/words.py``; ``services/router/signals.py`` turns
them into ``imperative``, ``vague_request`` and ``names_nothing``.
"""

from __future__ import annotations

import re

from services.router.time_words import DAYS

VAGUE_ASK_RE = re.compile(
    r"^(?:i )?(?:need|want|would like|could use|have) (?:some |your |a little )?(?:help|a favou?r|a question)"
    r"(?: (?:with|on|about) (?:something|this|that|it|stuff))?(?: please)?\W*$|^(?:can|could) you help(?: me)?"
    r"(?: (?:with|on) (?:something|this|that|it))?\W*$"
)
# "I want to add something to a list", "remember something for me": a placeholder where the content would be
# (group 1 is the verb, which must be a command's).
PLACEHOLDER_RE = re.compile(
    r"^(?:(?:i (?:want|need|would like)|i'd like) (?:you )?to |please |can you |could you )?([a-z]+)"
    # "sort out something", "take care of something".
    r"(?: (?:out|up|with|into|care of))? (?:something|"
    r"a thing|an item|an entry|a task|smth|"
    # A number of things is no thing either: "could you put a couple of things on my list?".
    r"(?:a (?:few|couple(?: of)?|bunch of|load of)|some|several|various) (?:things|items|bits|stuff|entries|tasks)|"
    r"stuff)(?: (?:up|down|out|aside))?(?: (?:to|on|in|into|for) (?:a|an|my|the|me)(?: [a-z-]+){0,2})?"
    # When it is for says nothing of what: "could you arrange something for Saturday", "handle something before Friday".
    rf"(?: (?:for|on|by|before|until|till|after)(?: the)? (?:{DAYS}|weekend|tomorrow|tonight|later|next week))?\W*$"
)
# A verb with the person as its object opens a request: "teach me ...", "convince me to ...", "walk us through",
# also after a first clause ("Just a quick one: show me how ...").
# Not "excuse me", "lucky me", "trust me" (said, not asked), nor a pronoun or an auxiliary before "me".
VERB_ME_RE = re.compile(
    r"(?:^|[.:;!?]\s+)(?!(?:excuse|lucky|poor|silly|trust|beats|bless|love|like|miss|with|about|for|to|from|of|and|"
    r"but|not|even|just|let|help)\b)[a-z]+ (?:me|us)\b(?! (?:too|neither|either)\b)"
)
# "Update: I sold the car!": a word before a colon labels what follows, it commands nothing.
LABEL_RE = re.compile(r"^[a-z]+\s*:")
IMPERATIVE_VERBS = frozenset(
    "add book buy call cancel change check delete do email explain find fix get give help keep let list make move "
    "note open plan put read remember remind remove reply reschedule save schedule send set share show summarize "
    "summarise take tell text track translate update write draft describe compare suggest recommend create start "
    "stop finish forward message sort clear mark print erase rename uncheck untick snooze unlearn store log record "
    "use brainstorm teach convince outline rank pick choose calculate convert design devise invent propose arrange "
    "organise organize handle "
    # Moving a thing in time or place: "bump it back an hour", "swap them round", "push it to Friday".
    "bump push pull bring shift switch swap flip copy"
    .split()
)
# A command closing a message on a pointer: "the earlier time works better, switch it", "love it. send that to Mia".
POINTER_COMMAND_RE = re.compile(
    rf"[,;.!]\s*(?:(?:and|so|then|just|now|pls|please) )*(?:{'|'.join(sorted(IMPERATIVE_VERBS))}|go with|stick with) "
    r"(?:it|that|this|them|those|these)\b[^,;.!?:]{0,25}[.!]*\s*$"
)
