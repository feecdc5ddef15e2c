"""Who took over a part someone left: "Dr Pryce has retired, … A young lad called Owen Bevan came out to see the ewes".

An earlier fact says who holds a part in the person's life ("Our vet is Dr Pryce in Builth"); a newer one says that
one retired, left or moved away (``changes.change_in(...).left``), and the fact told with it or just after it (in the
same message) names someone new: "called" or "named" so, or described as new ("Owen Bevan, the new lad, …"), doing
something for the person ("came out to see the ewes", "saw me on Monday"); or "the new one is Owen". That one is the
part's new holder: ``successor`` words it as the fact "The user's new vet is Owen Bevan", which
``services/memory/facts.remember_fact`` stores; its change (a part with someone new) ends what still named the old
holder, the retirement news with it. Without that fact the newcomer's name was never stored, and "who is our vet now?"
was answered "Dr Pryce". A part said with the newcomer ("we've got a new vet now, Owen Bevan") needs no one to have
left: the fact it makes ends the old vet's.
"""

from __future__ import annotations

import datetime as dt
import re

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from services.memory.changes import change_in
from services.memory.job_titles import TITLE_WORDS
from services.memory.models import Fact

_TITLES = r"(?:(?:Dr|Mr|Mrs|Ms|Miss|Mx|Prof|Nurse)\.?\s+)?"
_NAME = _TITLES + r"[A-Z][\w'-]+(?:\s+[A-Z][\w'-]+)?"
_DOING = (r"(?:(?:has|had|have|just|then|also|now|already|kindly)\s+)*"
          r"(?:came|comes|come|visited|visits|saw|sees|seen|treated|treats|looked|looks|checked|checks|"
          r"examined|examines|took over|takes over|taken over|is taking over|is covering|covers|covered|"
          r"did|does|done|fixed|fixes|sorted|sorts|is looking after|looks after|will see|is seeing)\b")
# Words that open a sentence before a comma and name nobody ("Anyway, the new lad came").
_NO_NAME = r"(?!(?:Anyway|Well|So|Oh|Ah|Right|Okay|Ok|Yes|Yeah|No|Now|Then|Also|Sadly|Luckily|Thankfully|Honestly|" \
           r"Today|Yesterday|Apparently|Actually|Still|Bless)\b)"
# Someone named by what they are called, then what they did for the person: "a young lad called Owen Bevan came out
# to see the ewes", "a new doctor named Sarah Lee saw me on Monday", "someone called Priya has taken over"; or named,
# then described as new: "Owen Bevan, the new lad, came out to see the ewes", "Tom Price, a young chap from Leominster,
# fixed the roof" (not "Owen Bevan, my nephew, came for tea").
NEWCOMER = re.compile(r"\b(?:called|named)\s+(?P<name>" + _NAME + r")\s+" + _DOING
                      + r"|\b" + _NO_NAME + r"(?P<name2>" + _NAME + r"),\s+(?:the|a|an|our|their)\s+"
                      r"(?:new|young|replacement|locum|relief)\b[^,.;!?]{0,40},\s+" + _DOING)
# "the new one is Owen", "the new lad's Owen Bevan": the part is the one left open.
_NEW_ONE = re.compile(r"\b(?i:the new)(?: [a-z]+){1,2}?(?:'s| is| will be) (?P<name>" + _NAME + r")")
# The part said with the newcomer: "we've got a new vet now, Owen Bevan", "we have a new GP, Dr Sarah Lee" (a part
# someone holds for the person: not "a new puppy now, Bramble"; theirs: not "Mum has a new GP, Dr Lee").
_NEW_PART = re.compile(r"\b(?i:i|we|the user)(?:'ve|'s| have| has)?(?: (?i:just|now|finally))? (?i:got|have|has) "
                       r"(?i:a new) (?P<part>[A-Za-z]+)(?:,? (?i:now))?,\s+(?P<name>" + _NAME + r")")
_PARTS = TITLE_WORDS | {"gp", "vet", "dentist", "doctor", "landlord", "landlady", "boss", "physio", "farrier",
                        "childminder", "optician", "chiropodist", "podiatrist"}
# The part the one who left had, in a fact naming them: "our vet is dr pryce", "my gp, dr hanrahan", "dr pryce is our
# vet" ({name} is the word ``change_in`` found before "retired").
_NOT_PART = r"(?!(?:is|was|has|had|been|who|and)\b)"
_PART_BEFORE = (r"\b(?:the user's|my|our)\s+(?P<part>" + _NOT_PART + r"[a-z]+(?: " + _NOT_PART + r"[a-z]+)?)"
                r"(?:,\s*|\s+(?:is|was|has been|had been|,)\s+|\s+)" + _TITLES.lower() + r"(?:[a-z'-]+\s+)?{name}\b")
_PART_AFTER = (r"\b{name}\s+(?:is|was|has been)\s+(?:the user's|my|our)\s+(?P<part>" + _NOT_PART
               + r"[a-z]+(?: " + _NOT_PART + r"[a-z]+)?)(?=\s*(?:$|[,;.!]|\s(?:in|at|for|and|but|so|who)\b))")
TOLD_WITH = dt.timedelta(hours=1)  # the facts of one message are stored together
RECENT = 3  # ... and the newcomer is named in the sentence(s) just after the leaving


def successor(session: Session, user_id: str, fact: Fact) -> tuple[str, Fact | None] | None:
    """The fact "The user's new <part> is <name>" when ``fact`` names someone new just after (or as) someone left that
    part, or names the part with them; and the news of the leaving, if told (history once the part has its new
    holder); else None."""
    with_part = _NEW_PART.search(fact.text)
    said = with_part["part"] if with_part is not None and with_part["part"].lower() in _PARTS else None
    newcomer = (with_part if said else None) or NEWCOMER.search(fact.text) or _NEW_ONE.search(fact.text)
    if newcomer is None:
        return None
    name = newcomer["name"] or (newcomer["name2"] if newcomer.re is NEWCOMER else None)
    before = session.scalars(select(Fact).where(Fact.user_id == user_id, Fact.id < fact.id,
                                                Fact.created_at >= func.now() - TOLD_WITH)
                             .order_by(Fact.id.desc()).limit(RECENT)).all()
    for told in [fact, *before]:
        change = change_in(told.text)
        if change is None or not change.left:
            continue
        if told is fact and _leaving_at(told.text, change.left) > newcomer.start():
            continue
        # The part is named in the news itself ("our vet Dr Pryce has retired") or in what it ended.
        ended = session.scalars(select(Fact).where(Fact.user_id == user_id, Fact.superseded_by == told.id)).all()
        part = next(filter(None, (_part(other.text, change.left) for other in [told, *ended])), None)
        if said is not None:  # the news is history only when it told of that part
            return f"The user's new {said} is {name}", told if part and part.lower() == said.lower() else None
        return (f"The user's new {part} is {name}", told) if part is not None else None
    return (f"The user's new {said} is {name}", None) if said is not None else None


def names_newcomer(sentence: str) -> bool:
    """Whether the sentence names someone new doing something for the person, or in a part ("the new girl is
    Chebet"): news of their life (``from_words``), which ``successor`` may read as a part's new holder."""
    return NEWCOMER.search(sentence) is not None or _NEW_ONE.search(sentence) is not None


def _leaving_at(text: str, who: str) -> int:
    """Where the one who left (``change_in(text).left``) is named in ``text``: the newcomer named in the same fact
    comes after."""
    found = text.lower().find(who)
    return found if found >= 0 else len(text)


def _part(text: str, name: str) -> str | None:
    plain = " ".join(text.split())  # the part as written: "GP", "vet"
    for pattern in (_PART_BEFORE, _PART_AFTER):
        found = re.search(pattern.format(name=re.escape(name)), plain, re.IGNORECASE)
        if found:
            return found["part"]
    return None
