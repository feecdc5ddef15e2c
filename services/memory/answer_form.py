"""The language a person asked to be answered in: "please always answer me in English, even if I write to you in
Norwegian by accident".

Told so (the fact in its notes), the 1.5B model still answered a question typed in Norwegian in Norwegian: the
message's language wins over a line of memory. An instruction of its own just before the message ("reply in
English") was followed, so the language is read from the person's facts, like what they refuse
(``services/memory/refusals``), and the reply's instruction names it (workers/generation).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

LANGUAGES = ("english", "spanish", "french", "german", "portuguese", "italian", "dutch", "norwegian", "swedish",
             "danish", "finnish", "icelandic", "polish", "czech", "slovak", "hungarian", "romanian", "greek",
             "turkish", "ukrainian", "russian", "arabic", "hebrew", "persian", "hindi", "urdu", "bengali", "tamil",
             "chinese", "mandarin", "cantonese", "japanese", "korean", "vietnamese", "thai", "indonesian", "malay",
             "tagalog", "filipino", "swahili", "irish", "welsh", "catalan", "basque", "afrikaans", "kazakh")
_LANGUAGE = "|".join(LANGUAGES)
_ANSWERING = r"(?:answer|reply|respond|write|talk|speak|text|message)(?:s|ing)?"
_OBJECT = r"(?:me|the user|us)(?!')"  # the person, not "the user's mother"
# A standing request for the answers' language: an answering verb asked of the assistant (told to the person's
# "me", after "please" or at a clause's start, or "you to …"), then "in X" ("always answer the user in English",
# "please reply in Spanish", "talk to me in French from now on", "I'd like you to write in German"), or X spoken to
# the person ("speak English with me"). Not what the person does ("the user writes in Norwegian at work", "speaks
# French with the user's mother"). The first language named is the one wanted: "… in English, even if I write to
# you in Norwegian".
ANSWER_IN = re.compile(rf"(?:\b{_ANSWERING}(?: back)? (?:to )?{_OBJECT}|(?:^|[:;,.!]\s*|\b(?:please|pls|plz|kindly) |"
                       rf"\b(?:you|engram) (?:to |will |should |must )?)(?:and )?(?:always |only |just )?{_ANSWERING})"
                       rf"(?: (?:always|only|just))?(?: back)? (?:in|with) (?:plain |simple )?"
                       rf"(?P<language>{_LANGUAGE})\b"
                       rf"|\b(?:speak|talk|write)(?:s|ing)? (?P<spoken>{_LANGUAGE}) (?:to|with) {_OBJECT}",
                       re.IGNORECASE)
# The same, as a PostgreSQL regular expression: the facts that may hold it are read on every turn (context.py).
SQL_PATTERN = (rf"\m(answer|reply|respond|write|talk|speak|text|message)(s|ing)?\M.*\m(in|with) "
               rf"(plain |simple )?({_LANGUAGE})\M")


def answer_language(facts: Iterable[str]) -> str:
    """The language the person asked to be answered in ("English"), from their facts, the last one saying it
    winning; "" when none asks for one. A question ("can you answer in French?") is no standing request."""
    wanted = ""
    for fact in facts:
        match = ANSWER_IN.search(fact)
        if match is not None and not fact.rstrip().endswith("?"):
            wanted = (match.group("language") or match.group("spoken")).capitalize()
    return wanted
