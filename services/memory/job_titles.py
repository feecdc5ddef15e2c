"""A new job title as a fact tells it: "The user got promoted, from monday the user is QA lead", "the user was promoted
to senior nurse", "The user's new role is team lead", "The user is QA lead now" — the person's work ("work as"), so
``services/memory/facts.parse_triple`` keys it with the job they had ("works as QA tester"), which it then replaces.

Without "promoted" or "new role", "the user is now a …" is a job only when its title says so ("QA lead", "senior
nurse", not "a grandmother" or "vegetarian"): ``TITLE_WORDS``. Said without "now" ("The user is a nurse"), the title
must end in a trade (``TRADES``: not "a dog owner", "a senior", "a keen gardener"); "started as a barista" names the job
it started, whatever the word.

A bare "got promoted" names no title: it ends nothing (the old "works as QA tester" is still where they work, only
higher; with nothing to put in its place, ending it would leave no job at all), until the title is said.
"""

from __future__ import annotations

import re

# The words a job title ends with or holds (a rank, or a trade people name themselves by).
TITLE_WORDS = frozenset({
    "lead", "leader", "head", "manager", "director", "supervisor", "chief", "principal", "senior", "junior", "deputy",
    "officer", "coordinator", "president", "ceo", "cto", "cfo", "coo", "vp", "foreman", "tester", "engineer",
    "developer", "analyst", "designer", "consultant", "specialist", "intern", "apprentice", "trainee", "teacher",
    "nurse", "doctor", "chef", "editor", "producer", "architect", "administrator", "accountant", "researcher",
    "scientist", "lecturer", "professor", "programmer", "technician", "owner", "founder", "partner",
    # trades people name themselves by ("I'm a plumber now", "I am a vet")
    "vet", "veterinarian", "plumber", "electrician", "lawyer", "solicitor", "barrister", "driver", "pilot", "barista",
    "cleaner", "carer", "caregiver", "paramedic", "pharmacist", "dentist", "midwife", "firefighter", "mechanic",
    "carpenter", "builder", "cashier", "waiter", "waitress", "receptionist", "secretary", "assistant", "clerk",
    "librarian", "journalist", "tutor", "coach", "instructor", "therapist", "counsellor", "counselor", "psychologist",
    "surgeon", "physio", "physiotherapist", "optician", "courier", "postman", "postwoman", "farmer", "butcher",
    "hairdresser", "barber", "bartender", "banker", "broker", "detective", "soldier", "translator", "interpreter",
    "tailor", "welder", "decorator", "landscaper", "nanny", "childminder", "housekeeper", "porter",
    "guard", "caretaker", "janitor", "miner", "fisherman", "dispatcher", "paralegal", "auditor", "bookkeeper",
    "keeper", "zookeeper", "guide", "baker", "cook", "sailor", "seaman", "student",
})
# Words that are no job said alone, without "now" ("a dog owner", "a senior", "a natural leader").
_NOT_ALONE = frozenset({"senior", "junior", "deputy", "owner", "partner", "leader", "head", "chief", "principal",
                        "president", "founder"})
TRADES = TITLE_WORDS - _NOT_ALONE
# ... nor said of a pastime or a past ("a keen gardener", "a retired teacher", "a terrible driver").
_NO_JOB_BEFORE = frozenset({"keen", "amateur", "terrible", "good", "great", "bad", "decent", "passionate", "avid",
                            "aspiring", "wannabe", "former", "retired", "ex", "self-taught", "hobby", "budding",
                            "careful", "safe", "nervous", "learner", "backseat", "born", "natural"})
_TITLE = r"(?:a |an |the )?(?P<title>[a-z0-9][a-z0-9&/' -]{0,40}?)"  # "2nd engineer", "3rd officer"
# Where the title ends: the clause's end, or what is said about it (where, since when, "now").
# (Tagalog's "na" is "now, already": "2nd engineer na!")
_TITLE_END = (r"(?=\s*(?:$|[,;.!(]|\s(?:now|already|na|at|in|for|with|from|since|starting|effective|as of|last|this|"
              r"next|yesterday|today|on|and|but|so|because|which|who)\b))")
# "I got promoted to 2nd engineer", and as chat says it, without the "I": "Promoted!! 2nd engineer now", Taglish
# "Promoted na ako, 2nd engineer na!" ("I've been promoted, 2nd engineer now").
_PROMOTED = re.compile(r"^(?:(?:i|the user|user)\s+)?(?:(?:got|get|was|were|has|have|'ve|been|just|recently|finally|"
                       r"officially)\s+)*promoted\b(?:\s+na(?:\s+(?:ako|me))?)?(?:\s+(?:to|as)\s+(?:be\s+)?"
                       + _TITLE + _TITLE_END + ")?")
# ... the title said after it, on its own: "promoted na ako, 2nd engineer already from this month".
_TITLE_AFTER = re.compile(r"\s*[,:;!.\-\u2013\u2014]+\s*(?:now\s+|already\s+)?" + _TITLE + _TITLE_END)
_IS_TITLE = re.compile(r"(?:^|[,;]\s*|\b(?:and|so|now)\s+)(?:(?:from|starting|as of) [a-z ]+? )?"
                       r"(?:i am|i'm|im|the user is|user is)\s+(?P<now>now\s+)?" + _TITLE + r"(?P<after>\s+now)?"
                       + _TITLE_END)
# "started as a barista", "I just started work as a night porter", "began as an apprentice at the garage".
_STARTED = re.compile(r"^(?:i|the user|user)\s+(?:(?:just|recently|have|has|'ve|finally|now)\s+)*(?:started|began|"
                      r"start|begin|am starting|is starting)\s+(?:(?:work|working|a new job|a job|out|today|"
                      r"on monday|this week)\s+)*as\s+(?:a|an)\s+" + _TITLE[len("(?:a |an |the )?"):] + _TITLE_END)
# A new job said by its place, as a past event: "started a new job at the school last week", "started my new job at the
# council on Monday", "just started working at Tesco", "got a job with the council" (not "started a pottery class at
# the school": no job). The place keys the fact as where the person works, which it then replaces.
_NEW_PLACE = re.compile(r"^(?:i|the user|user)\s+(?:(?:just|recently|have|has|'ve|finally|now|officially)\s+)*"
                        r"(?:(?:started|began|start|begin|am starting|is starting)\s+(?:(?:a|my|the user's)\s+)?"
                        r"(?:new\s+)?(?:job|work|working|position|role|post)"
                        r"|(?:got|landed|took|found|accepted)\s+(?:a|an)\s+(?:new\s+)?(?:job|position|role|post))"
                        r"\s+(?:at|with|for|in)\s+(?P<place>(?:the |a |an )?[a-z0-9&'][a-z0-9&' -]{0,40}?)"
                        + _TITLE_END)
_NEW_ROLE = re.compile(r"^(?:(?:so|and|but|now),?\s+)*(?:my|the user's|user's)\s+(?P<new>new\s+)?"
                       r"(?:role|job|job title|title|position)\s+(?:is|will be)\s+(?P<now>now\s+)?" + _TITLE
                       + _TITLE_END)


def job_title(fact: str) -> str | None:
    """The new job title a (lower-cased) fact tells, or None."""
    promoted = promoted_to(fact)
    if promoted is not None:
        return promoted or None
    new_role = _NEW_ROLE.match(fact)
    if new_role and (new_role["new"] or new_role["now"]):
        return _cleaned(new_role["title"])
    started = _STARTED.match(fact)
    if started:
        return _cleaned(started["title"])
    said = _IS_TITLE.match(fact)
    if said and (said["now"] or said["after"]) and TITLE_WORDS & set(said["title"].split()):
        return _cleaned(said["title"])
    if said and _a_trade(said["title"]):  # "The user is a nurse": the job they have
        return _cleaned(said["title"])
    return None


def promoted_to(fact: str) -> str | None:
    """The title a (lower-cased) fact of the person's promotion names ("" when it names none), or None when it tells
    no promotion of theirs."""
    promoted = _PROMOTED.match(fact)
    if promoted is None:
        return None
    title = promoted["title"] or next((said["title"] for said in _IS_TITLE.finditer(fact, promoted.end())), None)
    after = None if title else _TITLE_AFTER.match(fact, promoted.end())
    if after and after["title"].split()[-1] in TITLE_WORDS:  # a title, not what was said next ("chief said …")
        title = after["title"]
    return _cleaned(title) or ""


def _a_trade(title: str) -> bool:
    """A title said without "now" that is a job: its last word a trade, said of no pastime or past."""
    said = title.replace("-", " ").split()
    return bool(said) and said[-1] in TRADES and not _NO_JOB_BEFORE & set(said[:-1])


def _cleaned(title: str | None) -> str | None:
    title = " ".join((title or "").split()).strip(" '-")
    return title or None


def new_workplace(fact: str) -> str | None:
    """Where a (lower-cased) fact says the person's new job is, or None."""
    found = _NEW_PLACE.match(fact)
    return _cleaned(found["place"]) if found else None
