"""An unfilled template in a request: a slot of any template language left in place of its content.

"remind me to [thing] at [time]", "save this note: <paste here>", "add ___ to the list", "remember that blah blah
blah": the request's object is a slot, so the request lacks what it acts on. Compiled once at import (pure data, no
I/O), like ``services/router/command_words.py``; ``services/router/objects.py``, ``cut_off.py`` and ``signals.py`` read
it.
"""

from __future__ import annotations

import re

TEMPLATE_RE = re.compile(
    # A slot in any template language's brackets and sigils: "[hh:mm]", "{{.Time}}", "{% goal %}", "<?= $item ?>",
    # "‹item one›".
    # Typographic brackets too: "⁅fact⁆", "【item】", "⟨time⟩", "〈name〉", "《goal》".
    r"[\[<{\u2039\u2045\u3010\u3014\u27e8\u3008\u300a\u2983]+[\s%.=?$#:]*[a-z][a-z0-9 .:'/_-]{0,30}?[\s%?]*"
    r"[\]>}\u203a\u2046\u3011\u3015\u27e9\u3009\u300b\u2984]|_{3,}|%{1,2}[a-z][a-z_]*%{1,2}|"
    # A form's fields left empty, one a line: "Goal:\nDeadline:\nHow I'll measure it:".
    r"(?:^|\n)[^:\n]{1,40}:[ \t]*\n[^:\n]{1,40}:[ \t]*(?:\n|$)|"
    # Content handed over as a word that stands for content to come: "Set a goal: TBD", "new note: xxx".
    r":\s*(?:tbd|tbc|tba|todo|to be (?:decided|confirmed|added)|x{3,}|n/a|\?{2,}|\.{3,}|…)\s*[.!]*\s*$|"
    # Filler that stands for text to come, a typesetter's or a speaker's: "Remember this: lorem ipsum dolor ...",
    # "note: blah blah blah", "remember that blah blah blah" (the filler is all that ends the message).
    r"\blorem ipsum\b|(?:^|[:\s])(?:blah|yada|bla)(?:[ ,]+(?:blah|yada|bla))+"
    r"(?:[ ,]+(?:please|pls|thanks|thank you|thx|cheers|ta))?\W*$|"
    # A form's instruction left in place of its content: "note that INSERT FACT HERE", "add (enter item here)".
    r"\b(?:insert|enter|paste|type|fill in|put|write|add) (?:the |your |a |an )?(?:[a-z]+ )?(?:fact|item|name|date|"
    r"time|text|task|details?|info|number|address|link|goal|reminder|note|content|value|words?|answer)s? here\b|"
    # A slot left as its format or its name: "remind me on YYYY-MM-DD at HH:MM", "add FILL_ME to the list", "at $TIME".
    # A shell's "$(GOAL)" too.
    r"\b(?:yyyy|yy|mm|dd|hh|xx)(?:[-/.:](?:yyyy|yy|mm|dd|hh|ss|xx))+\b|\$[{(]?[a-z]|"
    r"\b(?:(?:fill|insert|enter|your|some|item|task|goal)_[a-z_]*[a-z]|"
    r"[a-z]+_(?:me|here|name|item|text|task|goal|date|time|value|thing|fact|note|number|title|tbd))\b|"
    # A program's slot left unfilled: "add {0} and {1} to the list", "save this: #NOTE#".
    r"\{\d{1,2}\}|#[a-z_]{2,20}#|"
    # Doubled parentheses, a named printf slot, angle quotes, an HTML comment: "((goal)) by ((date))", "%(time)s",
    # "«item»", "<!-- fact -->".
    r"\(\([a-z][a-z0-9 _.-]{0,30}\)\)|%\([a-z_]{1,30}\)[sd]|\u00ab[a-z][a-z0-9 _.-]{0,30}\u00bb|<!--[^>]{0,40}-->|"
    # A program's interpolation left in, Swift's or Ruby's: "add \\(item) and \\(item2) to my list", "save #{note}".
    r"\\\([a-z][a-z0-9_.]{0,30}\)|#\{[a-z]|"
    # An algebra's letter for an amount or a date not yet said: "Goal: lose X kg by Y", "read N pages a day".
    r"\b[xyn] (?:kg|kgs|kilos?|lbs?|pounds|stone|km|k|miles?|times|minutes|mins|hours|hrs|pages|steps|books)\b|"
    r"\b[xyz]\W+(?:kg|km|miles?|pages|steps) by (?:[xyz]|date)\b|\bby [xyz]\W*$"
)
