"""What a new fact says has changed, and which older facts it makes history.

Five ways a person tells a change without restating the old fact's shape: something ended ("I left the bank",
"no more nights", "yui and i broke up"), they moved home ("I moved!", "first night in the new house"), a date
moved ("my defence got moved to the 19th of May"), someone they named left the part they had in the person's life
("Dr Hanrahan has retired", "valeria moved out", "Lars has accepted a position in Bodø"), or a part has someone new
("the new deputy head is Ingrid", "new roomie is ximena").
``services/memory/facts.remember_fact`` supersedes the older facts ``Change.ends`` picks. Only facts sharing a thing
(not a verb, a time word or the person) are touched, and never another person's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from services.memory.job_titles import TITLE_WORDS, promoted_to
from services.memory.refusals import COFFEE, refused_things, withdrawn_things
from services.memory.timewords import DATED
from services.text import FAMILY, GRANDPARENT, RELATIVE, lemma, stem, words

OF_THE_PERSON = re.compile(r"\b(?:the user|i|my|we|our|us)\b", re.IGNORECASE)
WORD = re.compile(r"[a-z0-9']+")
STOP = {"a", "an", "the", "is", "are", "was", "were", "am", "be", "been", "to", "of", "at", "as", "s", "'s", "do"}
# A fact saying something ended, and what: "left the bank", "stopped playing the piano", "no longer smokes",
# "does not eat meat anymore", "quit smoking", "dropped architecture", "switched from law to medicine", "resign from the
# barista job" (a learner's tense).
_ENDED = re.compile(r"(?:\bno longer|\bnot|\bnever|n't)\s+(?P<what>.+?)\s+(?:any ?more|these days)\b"
                    r"|\b(?:left|quit|stopped|resign(?:ed)?(?: from)?|"
                    r"handed in (?:my|the user's|their) notice (?:at|to)|"
                    r"(?:gave|given|giving) up|gave away|sold|(?:got|gotten|getting) rid of|broke up with|divorced|"
                    r"no longer|"
                    r"no more|rehomed|(?:had to )?rehome|dropped(?: out of)?|switched (?:away )?from|"
                    r"moved (?:out of|away from)|cancell?ed|canceled|called off|(?:finish(?:ed)?|done|through) with)"
                    r"\s+(?P<what2>.+)$"
                    # "yui and i broke up": the one named before the person.
                    r"|(?P<what3>[a-z']+(?: [a-z']+)?) and (?:i|the user) (?:broke up|split up|separated|divorced)\b"
                    # "lisbon fell through", "the gig got cancelled", "jono quit": what ended is the subject.
                    r"|(?P<what4>[a-z']+(?: [a-z']+)?) (?:(?:got|was|has been|is|have been) )?(?:fell through|"
                    r"cancell?ed|canceled|called off|quit|resigned)(?=\s*(?:$|[,;.!]|\s(?:and|but|so|because)\s))"
                    # "the camry finally died on the beltway", "the old fridge gave up the ghost": a thing ended for
                    # good (not "my phone died": a flat battery).
                    r"|(?P<what5>[a-z']+(?: [a-z']+)?) (?:finally (?:died|die|packed (?:in|up))|died for good|"
                    r"gave up the ghost|(?:got|was|has been) (?:written off|totall?ed))\b"
                    # "the Panda finally gave up on the A148": a thing gave up, told where or when (not "I gave up
                    # smoking": the person gave something up, what2).
                    r"|\b(?P<what9>(?:the|my|our|his|her|their|the user's) (?!user\b)[a-z']+"
                    r"(?: (?!(?:finally|just)\b)[a-z']+)?) (?:finally |just )?"
                    r"(?:gave up|gave out|conked out)(?=\s*(?:$|[,;.!]|\s(?:on|at|in|during|last|yesterday|after|and|"
                    r"but|so)\b))"
                    # "Halifax is off", "the wedding's off": a plan called off (not "Friday is off": a day off; not
                    # "work is off today").
                    r"|\b(?P<what10>(?!(?:i|we|it|this|that|he|she|they|monday|tuesday|wednesday|thursday|friday|"
                    r"saturday|sunday|today|tomorrow)\b)"
                    r"[a-z']+(?: [a-z']+)?)(?: is|'s) (?:off|not happening)(?=\s*(?:$|[,;.!]|\s(?:and|but|so)\s))"
                    # "swapped the Panda for a Jazz", "traded in my bike for a scooter", "replaced the old boiler with
                    # a heat pump": what was given up is the object; "changed my phone number, it's now …", "got a
                    # new email address": the old one (a thing that names the person; "changed my view" ends nothing).
                    r"|\b(?:(?:swapped(?: out)?|traded(?: in)?|exchanged)\s+(?P<what6>[a-z0-9' ]+?)\s+for"
                    r"|replaced\s+(?P<what8>[a-z0-9' ]+?)\s+with)\b"
                    r"|\b(?:changed (?:my|our|the user's)|got a new) (?P<what7>(?:(?:phone|mobile|work) )?number|"
                    r"email(?: address)?|address|password|surname|name|doctor|gp|dentist)\b")
# The last of something regular, told with its day: "last trip on the ferry was Sunday", "my last day at the bakery
# is Friday", "last shift at the depot was yesterday" — a job or a routine ended (not "my last trip to Rome was
# lovely": no day, and "to" a place is a visit).
_LAST_ONE = re.compile(r"\blast (?:day|shift|week|trip|voyage|sailing|run)s? (?:at|on|with|for|in|aboard) "
                       r"(?P<what>.+?) (?:was|is|will be)\s+(?P<when>.+)$")
_PAST_DAY = re.compile(r"\b(?:yesterday|today|last (?:week|night|month))\b")  # the when of an ending (DATED: ahead)
# A thing whose date or time moved: "my defence got moved to the 19th of May", "the meeting was pushed back to
# Friday", "Tom's party is postponed until June". What moved is the clause's subject before the verb.
_DAYS = r"(?:mon|tues|wednes|thurs|fri|satur|sun)days?(?:\s+(?:mornings?|afternoons?|evenings?|nights?))?"
_RESCHEDULED = re.compile(r"(?P<what>[a-z0-9' ]+?)\s+(?:(?:got|has been|have been|was|were|is|are|been|just|now)\s+)*"
                          r"(?:moved|moving|postponed|rescheduled|pushed(?: back)?|put back|brought forward|delayed|"
                          r"changed|shifted|bumped)\s+(?:back\s+|forward\s+)?(?:to|till|until|for)\b"
                          # "they've put Seamus back three weeks": what moved is the object, by a length of time
                          # (not "put the kids back to bed").
                          r"|\b(?:moved|pushed|put|brought|bumped|set)\s+(?P<what_by>[a-z0-9']+(?: [a-z0-9']+)?)\s+"
                          r"(?:back|forward|on)\s+(?:by\s+)?(?:a|an|one|two|three|four|five|six|a few|a couple of|"
                          r"\d+)\s+(?:days?|weeks?|months?)\b"
                          # A time said in place of the old one: "my water aerobics class is on Fridays now instead of
                          # Tuesdays", "choir is at 7 now, not 6" (the new time, then the old).
                          r"|(?P<what_now>[a-z0-9' ]+?)\s+(?:is|are|will be)\s+(?:now\s+)?(?:on|at|every)\s+"
                          r"[a-z0-9:' ]{1,30}?\s*(?:\bnow\s+)?(?:instead of|rather than|\bnow,\s+not)\b"
                          # ... or a day said with "now": "Mila's course is Thursdays now", "choir is now on Mondays"
                          r"|(?P<what_day>[a-z0-9' ]+?)\s+(?:is|are)\s+(?:now\s+(?:on\s+)?(?:every\s+)?" + _DAYS
                          + r"|(?:on\s+)?(?:every\s+)?" + _DAYS + r"\s+now)\b")
# The person moved home ("I moved!", "we just moved to Leeds", "moved house"), not something else ("moved the
# meeting", "moved on"): where they lived before is history. And the facts saying where they live.
_MOVED = re.compile(r"\b(?:i|we|the user)\s+(?:have\s+|has\s+|just\s+|finally\s+)*moved\b"
                    r"(?!\s+(?:the|my|our|his|her|it|them|on|away from|out of|back to work)\b)"
                    # "the user is now living in Utrecht", "we now live in Leeds"
                    r"|\b(?:i|we|the user)\s+(?:(?:is|are|am)\s+)?now\s+(?:living|live|lives)\s+in\b"
                    # Out of the family home, and a home said with its "now" ("moved out from my parents' place
                    # already. staying in Punggol now": "staying" is living in Singapore's and India's English).
                    r"|\bmoved out (?:of|from) (?:my|our|the user's) (?:(?:parents|mum|mom|dad|family|folks)'?s? )?"
                    r"(?:place|house|home|flat)\b"
                    r"|\b(?:staying|living)\s+in\s+(?!(?:a|an|the|hotel|hospital|bed)\b)[a-z'-]+(?:\s+[a-z'-]+)?\s+now\b"
                    r"(?![^.;]*\b(?:for (?:a|the|one|two|\d+) (?:week|night|day|month)s?|till|until|then)\b)")
# ... or arrived ("The user is finally in Pune"; a place's name: not "finally in bed").
ARRIVAL = r"(?i:finally|at last)\s+(?i:here\s+|home\s+)?(?i:in)\s+[A-Z]"
_ARRIVED = re.compile(r"\b(?:I am|I'm|[Tt]he user is|[Ww]e are|[Ww]e're)\s+" + ARRIVAL)
# ... or told they are in a new home ("First night in the new house in Wrocław", "our new flat has a balcony").
_NEW_HOME = re.compile(r"\b(?:(?:in|into|to) (?:the|our|my)|our|my|the user's) new (?:house|flat|home|apartment|place"
                       r"|condo)\b"
                       # "me n jaz got a unit in kirwan": a home of their own got somewhere (not "for the weekend").
                       r"|\b(?:got|bought|found) (?:a|an|our|my|the user's) (?:own )?(?:unit|flat|house|"
                       r"apartment|condo|townhouse) (?:in|at)\b"
                       r"(?![^.;]*\bfor (?:the|a|an|one|two|three|\d+) (?:weekend|week|night|nights|days|holidays?)\b)")
_HOME = re.compile(r"\b(?:live|lives|living|livin|staying)\b(?:\s+[a-z']+){0,3}\s+in\b")
# Someone they name moved ("Marieke and the children are settled in Groningen now", "my brother Tom moved to Oslo",
# "Shelley and Darren are after moving home": Irish English's "after -ing" is "have just"): where that one lived is
# history, and nobody else's home.
_NAMED_MOVED = re.compile(r"\b(?P<who>[A-Z][a-z'-]+)"
                          r"(?:'s family| and (?:the|her|his|their) \w+| and (?P<also>[A-Z][a-z'-]+))?\s+"
                          r"(?:(?:has|have|is|are|'s|'re|just|finally|now|all)\s+)*"
                          r"(?:(?:moved|relocated|settled)\s+(?:in|to|into|home|house)|"
                          r"after\s+(?:moving|relocating)\s+(?:in|to|into|home|house|back|over|out)|"
                          r"after\s+(?:moving|relocating)(?=\s*(?:$|[,;.!])))\b")
# Whose home a fact tells: the subject of "live(s) in" ("the user and the kids live", "… daughter Marieke lives").
_HOME_OWNER = re.compile(r"([a-z', ]+?)\s+(?:(?:still|now|currently|also|all|both)\s+)*(?:live|lives|living|livin)\b")
# Someone named left the part they had ("Dr Hanrahan has retired himself", "UPDATE valeria moved out", "Lars has
# accepted a position as headteacher in Bodø", "our builder Mick has moved away"): who it was is the last word before
# the verb. Only facts giving them a part in the person's life end ("my GP, Dr Hanrahan, …"), not all that name them.
# (any adverb in "-ly" between, misspelt too: "Rui finaly retired" had named "finaly" as who left; people24's ines)
_LEFT_PART = re.compile(r"(?P<who>[a-z'-]+)\s+(?:(?:has|have|had|just|now|[a-z]+ly)\s+)*"
                        r"(?:retired|moved (?:out|away)|(?:accepted|taken|took) (?:a|an|another|the) "
                        r"(?:new )?(?:position|job|post|role|offer)|handed in (?:his|her|their) notice|"
                        # "Otieno has left us, he got a job at the county hospital", "Priya got a new job in Leeds"
                        r"(?:left|quit) (?:us|the (?:shop|team|company|firm|practice|salon|office|band|business))|"
                        r"(?:got|get|gets|found|landed) (?:a |another )?(?:new )?job (?:at|in|with))\b")
# ... or went abroad: "Kerry-Ann gone a Canada" (patois "to"), "Mick has emigrated to Perth" (a place's name).
_GONE_ABROAD = re.compile(r"\b(?P<who>[A-Z][\w'-]+)\s+(?:(?:has|have|is|just|finally|sadly)\s+)*"
                          r"(?:gone|emigrated)\s+(?:a|to|off to|away to|over to|back to)\s+[A-Z]")
# The person was given another post at work: "they FINALLY moved the user to days", "the user got transferred to the ER
# starting this week", "That's the user off the 75, They've moved the user onto the airport express" (not a home: "the
# user moved to Leeds" is ``_MOVED``; not a rota: "put the user on for Sunday").
_REASSIGNED = re.compile(r"\b(?:moved|switched|transferred|reassigned|rotated|posted)\s+(?:the user|me|us)\s+"
                         r"(?:on|onto|to|into|over to|across to)\b"
                         r"|\b(?:got|was|were|been|being|getting)\s+(?:moved|switched|transferred|reassigned|rotated|"
                         r"posted)\s+(?:on|onto|to|into|over to|across to)\b(?!\s+(?:a |the )?(?:new )?(?:house|flat|"
                         r"home|apartment)\b)"
                         r"|\bthat's (?:the user|me) off\b")
# ... which ends what the person said was their post for the time being: "the user is assigned in the pedia ward right
# now", "the user work nights right now, 6pm to 6am", "the user is on the 75 the now" (a post, and "for now").
_POST = re.compile(r"\b(?:assigned|posted|stationed|rostered|ward|shifts?|route|rota|on the \d+|"
                   r"(?:work|works|working|on)\s+(?:nights|days|earlies|lates|evenings|weekends|night shifts?|"
                   r"day shifts?))\b")
_OWN = re.compile(r"(?:the user|i|we)\b(?!'s)")  # the fact's subject is the person (not "the user's sister works …")
_FOR_NOW = re.compile(r"\b(?:right now|the now|for now|for the moment|currently|at the moment|atm|these days)\b")
# A part of the person's life has someone new: "the new deputy head is Ingrid Hovland", "New roomie is ximena",
# "Priya is our new manager". Facts naming that part (all its words) without the newcomer end.
_NEW_IN_PART = re.compile(r"(?:^|\b(?:my|our|the|the user's) )new (?P<part>[a-z]+(?: [a-z]+){0,2}?) (?:is|will be) "
                          r"(?:called |named )?"
                          r"(?P<holder>[a-z'-]+)"
                          r"|\b(?P<holder2>[a-z'-]+) (?:is|will be) (?:my|our|the user's|the) new "
                          r"(?P<part2>[a-z]+(?: [a-z]+){0,2}?)(?=\s*(?:$|[,;.!]|\s(?:and|but|so|who|she|he)\s))")
# ... or is told with "now" and the newcomer's name: "… is sick for two months so now my instructor is Madame Sarr"
# (capitalised, so "right now my writing is consuming me" names no one).
_NOW_HOLDS = re.compile(r"\b(?i:now),? (?i:my|our|the user's) (?P<part>(?i:[a-z]+(?: [a-z]+){0,2}?)) (?i:is|will be) "
                        r"(?:(?:Dr|Mr|Mrs|Ms|Miss|Mx|Prof|Madame|Mme|Monsieur|Herr|Frau|Señora?|Sra?)\.? )?"
                        r"(?P<holder>[A-Z][\w'-]+)")
# The person's own part in someone's life: "my GP, Dr X", "the user's roomie valeria", "the user's deputy head is
# lars eriksen" (a possessive, then up to four words, then the name).
_THEIRS = r"\b(?:the user's|my|mi|our)\s+(?P<part>(?:[a-z,'-]+\s+){{0,4}}?){name}\b"  # (patois "mi")
# ... or the part told as what they do for the person: "Otieno is the one who helps the user at the till".
_DOES_FOR = r"^{name}\s+(?:is the (?:one|guy|girl|lady|man|woman|lad) (?:who|that) )?(?:helps|works for|works with|" \
            r"assists|looks after|cleans for|drives for|minds)\s+(?:the user|us)\b"
# Family and friends keep their part when they retire or take a job elsewhere ("my sister Ana got a job in Leeds"
# leaves her the user's sister, living where she did).
_KIN = frozenset((*FAMILY, *GRANDPARENT, *RELATIVE,
                  *"mam auntie granny grandmother grandfather fiance fiancee friend bestie mate".split()))
_THE_PERSON = frozenset({"user", "i", "we", "me"})
# Coffee is said many ways: given up, each of them ends ("I quit coffee" ends "my 3 espressos"), compared as whole
# words ("americano" is not "American"); cola is not coffee (though a refusal of coffee's caffeine refuses it).
_COFFEE_WORDS = frozenset(member for member in COFFEE if " " not in member)
# Words that say nothing about which thing changed: verbs of having and doing, times, the person.
_NOT_A_THING = STOP | {
    "user", "play", "work", "live", "like", "love", "enjoy", "eat", "drink", "have", "own", "go", "use", "make",
    "liv", "doe", "does", "did", "with", "in", "on", "for", "my", "his", "her", "their", "last", "month", "year",
    "week", "ago", "today", "now", "recently", "since", "this", "and", "any", "more", "anymore", "all", "our", "your",
    "its", "got", "old", "new", "altogether", "completely", "entirely", "totally", "good",
    # Chat's fillers name no thing: "quit the climbing wall lol" ended a fact about a gecko that said "lol" too.
    "lol", "lmao", "haha", "hehe", "omg", "btw", "tbh", "ngl", "smh", "idk", "imo", "ugh", "yay", "yeah", "okay",
    "anyway", "honestly", "literally", "basically", "actually", "kinda", "sorta",
}
# Words before a verb that name nobody: the person, pronouns, modals ("I may have …"), adverbs.
_NOT_SOMEONE = _THE_PERSON | {"he", "she", "they", "it", "may", "might", "could", "would", "should", "will", "must",
                              "can", "also", "just", "finally", "always", "so", "very", "really", "still", "not"}
# Words for anyone, which name no part: "the new one is Owen", "the new lad's Owen" (``successor`` finds the part the
# one who left had; "one" ended "I have one sister").
_ANYONE = re.compile(r"\b(?:one|ones|lad|lass|chap|guy|fella|fellow|bloke|girl|boy|woman|man|lady|gent|kid)\b")
_NO_HOLDER = frozenset(word[:4] for word in _NOT_A_THING | _NOT_SOMEONE)  # no one new: "the new plan is always …"
_CLAUSE_END = re.compile(r",|;|\s(?:and|but|so|because|since|then)\s")  # "sold my X and bought a Y": X ended


def ended_things(text: str) -> set[str]:
    """What a fact says has ended, as content words: "The user left the bank last month" → {"bank"}."""
    match = _ENDED.search(_plain(text))
    if match is None:
        last = _LAST_ONE.search(_plain(text))
        dated = last and (DATED.search(last.group("when")) or _PAST_DAY.search(last.group("when")))
        return _things(last.group("what")) if dated else set()
    what = next((found for found in match.group("what", "what2", "what3", "what4", "what5", "what6", "what7",
                                                 "what8", "what9", "what10") if found), "")
    return _things(_CLAUSE_END.split(what, maxsplit=1)[0])


def rescheduled_things(text: str) -> set[str]:
    """What a fact says was moved to another date or time: "the user's defence got moved to the 19th of May" →
    {"defe"}; the clause before the subject ("the examiner can't travel in March, so …") is not it."""
    match = _RESCHEDULED.search(_plain(text))
    if match is None:
        return set()
    what = match.group("what") or match.group("what_now") or match.group("what_day")
    return _things(match.group("what_by") or _CLAUSE_END.split(what)[-1])


@dataclass(frozen=True)
class Change:
    """What a new fact says changed: things that ended, things whose date moved, a move of home."""

    text: str
    ended: frozenset[str]
    rescheduled: frozenset[str]
    moved: bool
    mover: str = ""  # who moved, when the person names others ("marieke", "shelley darren"); the person when empty
    left: str = ""  # who left the part they had ("hanrahan")
    part: frozenset[str] = frozenset()  # a part with someone new: its things ({"depu", "head"})
    holder: str = ""  # ... and who has it now ("ingr")
    withdrawn: frozenset[str] = frozenset()  # a refusal taken back: what is refused no more ({"fish"})
    reassigned: bool = False  # the person has another post at work ("moved me to days")
    promoted: str = ""  # the person's new title ("2nd engineer"): the rank they held before is history

    @property
    def coffee(self) -> bool:
        """Coffee (or its caffeine) ended: every way of saying it ends with it."""
        return bool(self.ended & {"coff", "caff"})

    def names_part(self, old: str) -> bool:
        """Whether the older fact names the part that has someone new ("the user's deputy head is Lars")."""
        return bool(self.part) and self.part <= {_thing(word) for word in WORD.findall(_plain(old))}

    def ends(self, old: str) -> bool:
        """Whether the older fact is history now (never another named person's). A moved date ends only the facts
        of its thing that hold a date or a time (``timewords.DATED``)."""
        old_plain = _plain(old)
        if self.mover and _HOME.search(old_plain):  # "Darren lives in …" after "Shelley and Darren moved": his too
            return home_owner(old_plain) in self.mover.split()
        if other_people(old, self.text):
            return False
        if self.moved and _HOME.search(old_plain):
            return home_owner(old_plain) == "user"
        if self.left and _holds_part(self.left, old_plain):
            return True
        if self.reassigned and _POST.search(old_plain) and _FOR_NOW.search(old_plain) and _OWN.match(old_plain):
            return not _REASSIGNED.search(old_plain)  # the post they had "right now" (not an earlier move)
        if self.promoted and _OWN.match(old_plain) and _held_title(self.promoted, old_plain):
            return True  # "promoted to 2nd engineer" ends "the user is Aurelio, 3rd engineer on the Kestrel Bay"
        if self.withdrawn & refused_things(old) & {stem(word) for word in words(old_plain)}:
            return True  # "I eat fish again now" ends "I don't eat fish" (not "I'm vegetarian": fish is not its word)
        old_things = {_thing(word) for word in WORD.findall(old_plain)}
        if self.names_part(old) and self.holder not in old_things and OF_THE_PERSON.search(old):
            return True
        ended_here = self.ended & old_things or (self.coffee and _COFFEE_WORDS & {stem(w) for w in words(old_plain)})
        if ended_here and not ended_things(old):
            return True
        return bool(self.rescheduled & old_things) and DATED.search(old_plain) is not None


def change_in(text: str) -> Change | None:
    """The change a new fact tells, or None when it tells none (most facts: no older fact need be read)."""
    named = _NAMED_MOVED.search(" ".join(text.split()))
    # "Shelley's after moving home"; "Shelley and Darren moved": both of them
    who = " ".join(name.lower().removesuffix("'s") for name in named.group("who", "also") if name) if named else ""
    mover = who if not _THE_PERSON & set(who.split()) else ""
    moved = (bool(mover) or _MOVED.search(_plain(text)) is not None or _NEW_HOME.search(_plain(text)) is not None
             or _ARRIVED.search(text) is not None)
    lefts = (_LEFT_PART.search(_plain(text)), _GONE_ABROAD.search(" ".join(text.split())))
    who = next((left.group("who").lower() for left in lefts
                if left and lemma(left.group("who").lower()) not in _NOT_SOMEONE), "")
    new_in_part = _NEW_IN_PART.search(_plain(text))
    part = _things(_ANYONE.sub(" ", new_in_part.group("part") or new_in_part.group("part2"))) if new_in_part else set()
    holder = _thing(new_in_part.group("holder") or new_in_part.group("holder2")) if part else ""
    now_holds = None if part else _NOW_HOLDS.search(" ".join(text.split()))
    if now_holds:
        part, holder = _things(now_holds.group("part").lower()), _thing(now_holds.group("holder").lower())
    if holder in _NO_HOLDER:  # "trying new stuff is a great way"
        part, holder = set(), ""
    change = Change(text, frozenset(ended_things(text)), frozenset(rescheduled_things(text)), moved, mover, who,
                    frozenset(part), holder, frozenset(withdrawn_things(text)),
                    _REASSIGNED.search(_plain(text)) is not None, promoted_to(_plain(text)) or "")
    return change if (change.ended or change.rescheduled or change.moved or change.left or change.part
                      or change.withdrawn or change.reassigned or change.promoted) else None


def _held_title(title: str, old_plain: str) -> bool:
    """Whether an older (lower-cased) fact names a title of the same trade as the new ``title`` and not the new one:
    "3rd engineer" (or "an engineer") before "2nd engineer", "staff nurse" before "senior nurse"."""
    trade = title.split()[-1]
    if trade not in TITLE_WORDS or re.search(rf"\b{re.escape(title)}\b", old_plain):
        return False
    return re.search(rf"\b{re.escape(trade)}s?\b", old_plain) is not None


def _holds_part(who: str, old_plain: str) -> bool:
    """Whether an older fact gives ``who`` a part in the person's life other than kin ("my GP, Dr X", "mi assistant
    is kerry-ann", "otieno is the one who helps the user")."""
    name = re.escape(who)
    theirs = re.search(_THEIRS.format(name=name), old_plain)
    if theirs and not _KIN & set(WORD.findall(theirs.group("part"))):
        return True
    return re.search(_DOES_FOR.format(name=name), old_plain) is not None


def home_owner(plain: str) -> str:
    """Whose home a (lower-cased) fact tells: "user" for the person ("the user lives in Porto", "we live in Lyon"),
    else the word naming who lives there ("the user's daughter marieke lives in rotterdam" → "marieke")."""
    match = _HOME_OWNER.search(plain)
    subject = match.group(1).replace(",", " ").split() if match else []
    return "user" if not subject or _THE_PERSON & set(subject) else subject[-1]


def other_people(a: str, b: str) -> bool:
    """Two facts each about a different named person ("Melanie left the bank", "Caroline works at a bank"): the
    facts of an imported conversation between two people (from_words.chunk_from_lines). A fact that speaks of
    the person ("The user …", "we", "our") is theirs whatever word opens it ("At home we have a parrot", "Sad
    news, we had to rehome Kiwi": a capital at a sentence's start names nobody)."""
    if OF_THE_PERSON.search(a) or OF_THE_PERSON.search(b):
        return False
    first = [(WORD.findall(text.lower()) or [""])[0].removesuffix("'s") for text in (a, b)]
    return first[0] != first[1] and all(text[:1].isupper() for text in (a, b))


def _plain(text: str) -> str:
    return " ".join(text.split()).lower()


def _things(tail: str) -> set[str]:
    words = (word.removesuffix("'s") for word in WORD.findall(tail))
    return {_thing(word) for word in words if lemma(word) not in _NOT_A_THING and len(word) > 2}


def _thing(word: str) -> str:
    """A word's first four letters: "smoking" and "smokes", "pianos" and "piano" compare equal."""
    return word[:4]
