"""Who took over a part someone left: "Dr Pryce has retired, … A young lad called Owen Bevan came out to see the ewes".

An earlier fact says who holds a part in the person's life ("Our vet is Dr Pryce in Builth"); a newer one says that
one retired, left or moved away (``changes.change_in(...).left``), and the fact told just after it (in the same
message) names someone new, "called" or "named" so, doing something for the person ("came out to see the ewes", "saw
me on Monday"). That one is the part's new holder: ``successor`` words it as the fact "The user's new vet is Owen
Bevan", which ``services/memory/facts.remember_fact`` stores; its change (a part with someone new) ends what still
named the old holder, the retirement news with it. Without that fact the newcomer's name was never stored, and
"who is our vet now?" was answered "Dr Pryce".
"""

from __future__ import annotations

import datetime as dt
import re

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from services.memory.changes import change_in
from services.memory.models import Fact

_TITLES = r"(?:(?:Dr|Mr|Mrs|Ms|Miss|Mx|Prof|Nurse)\.?\s+)?"
# Someone named by what they are called, then what they did for the person: "a young lad called Owen Bevan came out
# to see the ewes", "a new doctor named Sarah Lee saw me on Monday", "someone called Priya has taken over".
NEWCOMER = re.compile(r"\b(?:called|named)\s+(?P<name>" + _TITLES + r"[A-Z][\w'-]+(?:\s+[A-Z][\w'-]+)?)\s+"
                       r"(?:(?:has|had|have|just|then|also|now|already|kindly)\s+)*"
                       r"(?:came|comes|come|visited|visits|saw|sees|seen|treated|treats|looked|looks|checked|checks|"
                       r"examined|examines|took over|takes over|taken over|is taking over|is covering|covers|covered|"
                       r"did|does|done|fixed|fixes|sorted|sorts|is looking after|looks after|will see|is seeing)\b")
# The part the one who left had, in a fact naming them: "our vet is dr pryce", "my gp, dr hanrahan", "dr pryce is our
# vet" ({name} is the word ``change_in`` found before "retired").
_NOT_PART = r"(?!(?:is|was|has|had|been|who|and)\b)"
_PART_BEFORE = (r"\b(?:the user's|my|our)\s+(?P<part>" + _NOT_PART + r"[a-z]+(?: " + _NOT_PART + r"[a-z]+)?)"
                r"(?:,\s*|\s+(?:is|was|has been|had been|,)\s+|\s+)" + _TITLES.lower() + r"(?:[a-z'-]+\s+)?{name}\b")
_PART_AFTER = (r"\b{name}\s+(?:is|was|has been)\s+(?:the user's|my|our)\s+(?P<part>" + _NOT_PART
               + r"[a-z]+(?: " + _NOT_PART + r"[a-z]+)?)(?=\s*(?:$|[,;.!]|\s(?:in|at|for|and|but|so|who)\b))")
TOLD_WITH = dt.timedelta(hours=1)  # the facts of one message are stored together
RECENT = 3  # ... and the newcomer is named in the sentence(s) just after the leaving


def successor(session: Session, user_id: str, fact: Fact) -> tuple[str, Fact] | None:
    """The fact "The user's new <part> is <name>" when ``fact`` names someone new just after someone left that part,
    and the news of the leaving (history once the part has its new holder); else None."""
    newcomer = NEWCOMER.search(fact.text)
    if newcomer is None:
        return None
    before = session.scalars(select(Fact).where(Fact.user_id == user_id, Fact.id < fact.id,
                                                Fact.created_at >= func.now() - TOLD_WITH)
                             .order_by(Fact.id.desc()).limit(RECENT)).all()
    for told in before:
        change = change_in(told.text)
        if change is None or not change.left:
            continue
        # The part is named in the news itself ("our vet Dr Pryce has retired") or in what it ended.
        ended = session.scalars(select(Fact).where(Fact.user_id == user_id, Fact.superseded_by == told.id)).all()
        part = next(filter(None, (_part(said.text, change.left) for said in [told, *ended])), None)
        if part is not None:
            return f"The user's new {part} is {newcomer['name']}", told
        return None
    return None


def _part(text: str, name: str) -> str | None:
    plain = " ".join(text.split())  # the part as written: "GP", "vet"
    for pattern in (_PART_BEFORE, _PART_AFTER):
        found = re.search(pattern.format(name=re.escape(name)), plain, re.IGNORECASE)
        if found:
            return found["part"]
    return None
