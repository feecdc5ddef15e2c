"""Enrichment without a model (the compact profile): a message's chunk read from the person's own sentences.

A small model's chunks and episodes dropped words, took requests for facts and retold its own replies,
and each call made the next chat turn wait behind it on the one local server (bench/RESULTS.md); the
person's own sentence is true by construction. ``chunk_from_words`` reads one message,
``chunk_from_lines`` an imported conversation between named people.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from services.memory.changes import ARRIVAL, change_in
from services.memory.chunks import validate_chunk
from services.memory.identity import IDENTITY_SALIENCE, who_they_are
from services.memory.owners import with_owner
from services.memory.successor import names_newcomer
from services.memory.timewords import DATED
from services.text import FAMILY, FIANCE, GRANDCHILD, GRANDPARENT, NEAREST, RELATIVE, SENTENCE_BREAK, any_of, truncate

GIST_CHARS = 160
# "I have decided against Middlemarch; please remove it from my reading list": what is told, then a request.
SEMICOLON = re.compile(r";\s+")
WORDS_FACT_CONFIDENCE = 0.7
# "Kindly remind me …", "Please also remind me …", "Do add …": requests, however politely opened, tell no fact.
REQUEST = re.compile(r"^(?:(?:hey|hi|ok|okay|so)[, ]+)?(?:(?:please|pls|kindly|also|just|do|and)[, ]+)*"
                     r"(?:(?:can|could|would|will) you\s+)?(?:(?:please|kindly|also|just)\s+)*"
                     r"(?:add|put|remove|delete|take|cross|remind|schedule|set|show|tell|give|read|list|cancel|move|mark|"
                     r"write|find|suggest|recommend|make|book|check|create|start|help me)\b", re.IGNORECASE)
# A request asked after what is told ("I wish to be well prepared for him, so please create a reading list with …"):
# the request is no fact (people24's mahmoud: the list as first made was kept as a fact, and after a book was taken off
# the list "which books are on my reading list?" was answered with the old three).
REQUEST_TAIL = re.compile(r"(?:,\s*|\s+)(?:(?:and|so|but)\s+)?(?:please|pls|plz|kindly|(?:can|could|would|will) you)\s+"
                          r"(?:please\s+)?(?:add|put|remove|delete|take|cross|remind|schedule|set|create|start|make|"
                          r"note|save|keep|store|remember|write)\b.*$", re.IGNORECASE)
# Chat writes "i" as often as "I" ("yui and i broke up").
FIRST_PERSON = [(re.compile(r"\b[Ii] am\b|\b[Ii]'m\b|\b[Ii]m\b"), "the user is"),
                (re.compile(r"\b[Ii]'ve\b|\b[Ii]ve\b"), "the user has"),
                (re.compile(r"\b[Ii]'ll\b"), "the user will"), (re.compile(r"\b[Ii]'d\b"), "the user would"),
                (re.compile(r"\b[Ii]\b(?!\.\w)"), "the user"), (re.compile(r"\b[Mm]y\b"), "the user's"),
                (re.compile(r"\b[Mm]e\b"), "the user"), (re.compile(r"\b[Mm]yself\b"), "the user"),
                # "Aurelio here, 3rd engineer on …": the person introducing themselves
                (re.compile(r"^(?!(?:It|This|That|Everyone|Nobody|Someone|Somebody)\b)([A-Z][\w'-]+) here\b"
                            r"(?=\s*(?:[,.!:;\-\u2013\u2014]|$))"), r"the user is \1"),
                # "The wife is Marg": the person's own ("the wife of a friend" is not)
                (re.compile(r"\b[Tt]he (wife|missus|missis|hubby|other half)\b(?! of\b)"), r"the user's \1")]

# What opens a sentence without telling anything: "Hi!", "Oh and", "Big news:", "By the way".
LEAD_IN = re.compile(r"^(?:(?:(?:hi|hello|hey|hallo)(?: there| again)?(?:,? my (?:friend|dear))?|"
                     r"(?:good )?(?:morning|afternoon|evening)|oh|and|also|so|"
                     r"well|ok|okay|anyway|btw|by the way|(?:big|good|great|bad|sad) news|guess what|fun fact|"
                     r"update|news|tbh|ngl|honestly|lol|ugh|argh|meh|wow|yay|omg|"
                     r"(?:allow|let) me (?:to )?introduce myself(?: properly| briefly| first| quickly)?|"
                     r"just so (?:you|u) know|fyi|for the record|heads up|"
                     # an announcement before a colon: "Let me tell you something: …", "Make I tell you one thing: …",
                     # a learner's "I must say you one thing: …"
                     r"(?:(?:(?:let|make) (?:me|i) |i (?:must|have to|need to|want to|should|will) )?(?:tell|say)"
                     r"(?: (?:to )?(?:you|u))?(?: (?:something|one thing|this|what))?|one (?:more )?thing|"
                     r"important)(?=\s*:))"
                     r"\b[\s,:;!.\-\u2013\u2014]*)+", re.IGNORECASE)
# The person speaking of themselves ("I", "my", "we"), or of someone they name first ("Kuba is seven"; "It is
# raining" names no one).
SPEAKS_OF_SELF = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|im|ive|me|my|mine|we|we're|we've|our|us)\b"
                            r"|^the (?:grand)?(?:kids|children|twins|boys|girls|family|parents)\b"
                            r"|\bthe (?:wife|missus|missis|hubby|other half)\b(?! of\b)", re.IGNORECASE)
# A terse "my" left out: "roommate jess has a hamster named nugget" (people24's bree: nothing was kept, and "whats
# jess's hamster called" was answered "Buddy"). The sentence is read with its "my".
BARE_KIN = re.compile(r"^(?=(?:" + any_of(NEAREST, GRANDPARENT, RELATIVE, "boyfriend girlfriend hubby missus bf gf sis "
                                           "bro kid kids baby auntie bestie boss roommate flatmate housemate neighbour "
                                           "neighbor coworker colleague".split()) + r")\s+"
                      r"(?:[a-z][\w'-]*\s+)?(?:is|was|has|had|got|gets|loves|hates|works|lives|moved|started|"
                      r"turns|turned|just|will|can|wants|says|said)\b)", re.IGNORECASE)
NOT_A_NAME = r"(?!(?:It|This|That|There|These|Those|Here|What|Which|Everything|Nothing|Something|Anything|" \
             r"Everyone|Everybody|Nobody|Someone|Somebody)\b)"
NAMED_FIRST = re.compile(NOT_A_NAME + r"^[A-Z][a-z'-]+(?:\s+[A-Z][a-z'-]+)?\s+(?:is|are|was|has|had|lives|works|plays|"
                         r"loves|likes|hates|turns|turned|starts|started|goes|went|gets|got|wants|needs|eats|drinks|"
                         r"studies|teaches|moved|left|joined|will|can|never|always|just|(?:won|doesn|can|isn)'?t)\b")
# ... or named beside who they are ("The young lad, Oisín, Aoife's son, he's after getting into the university in
# Galway": the grandson's news, lost with no "I" in it), or as someone's kin ("Aoife's son started college").
NAMED_BESIDE = re.compile(r"^[^,]{2,40},\s+" + NOT_A_NAME + r"[A-Z][\w'-]+(?:\s+[A-Z][\w'-]+)?\s*,"
                          r"|\b[A-Z][\w'-]+'s\s+(?:" + any_of(NEAREST, ("boyfriend", "girlfriend"), FIANCE,
                                                               ("kid", "kids", "children", "baby")) + r")\b")
# A sentence that leaves its "I" out, as people write in chat: "got moved to the day shift!!", "just finished my
# first marathon"; and what ended for them: "no more nights" (the person's change of shift, lost without it).
IMPLIED_I = re.compile(r"^(?:(?:just|finally|also|now|recently|actually|still|officially)\s+)*(?:got|went|started|"
                       r"finished|moved|bought|picked up|sold|quit|left|joined|switched|began|booked|passed|lost|won|"
                       r"spent|"
                       r"visited|adopted|became|retired|graduated|signed|love|hate|miss|am|been|run|own|work|live|"
                       # "still livin at home in aitkenvale w mum n dad": chat drops the g.
                       r"livin|living|workin|working)\b",
                       re.IGNORECASE)
# "were doing porto instead": chat's "we're" without its apostrophe, before what they are doing.
WERE_TYPED = re.compile(r"^were(?=\s+\w+ing\b)", re.IGNORECASE)
ENDED_FOR_THEM = re.compile(r"^(?:no more|no longer|never again)\s+\w", re.IGNORECASE)
# ... and where they have arrived: "finally in Pune!!" (a move told in three words, and the answer to "which city am
# I in these days?").
ARRIVED = re.compile("^" + ARRIVAL)  # a place's name, not "in bed"
# ... and what they are, without the "I am": "allergic to nuts", "not a fan of horror movies", "lactose intolerant",
# "originally from mazatlán tho".
IMPLIED_I_AM = re.compile(r"^(?:not\s+)?(?:(?:very|really|quite|a bit|super|so)\s+)?(?:allergic to|"
                          r"intolerant to|(?:lactose|gluten) intolerant|vegetarian|vegan|pescatarian|diabetic|"
                          r"teetotal|coeliac|celiac|(?:a\s+)?(?:big\s+|huge\s+)?fan of|(?<=not )into|"
                          r"(?<=really )into|keen on|sick of|tired of|originally (?:from|in)|"
                          r"born and (?:raised|bred) in)\b"
                          r"(?!\s+(?:it|that|this|them)\b)", re.IGNORECASE)  # ("not into it" names nothing)
# A date the person tells, of whatever they speak about ("The grand opening is on the 1st of September"), is a fact
# (``timewords.DATED``): in their conversation, a thing of their life, and "when does it open?" finds no other trace.
# A question typed without its question mark ("what's on my camping list") tells nothing either.
# "When you tell me prices, please use dinars" tells how they want things: "when" before its subject opens a condition.
# ("can't stand it" tells.)
ASKS = re.compile(r"^(?:what|what's|whats|where|where's|when(?!\s+(?:you|u|i|we)\s)|when's|who|who's|why|how|which|do|"
                  r"does|did|is|are|can|could|would|will|should|have|has|am)\b(?!['\u2019]t\b)", re.IGNORECASE)
# How the person wants to be answered from now on: "When you suggest recipes, keep them under 30 minutes".
HOW_TO_ANSWER = re.compile(r"^(?:please\s+|pls\s+)?(?:never|don'?t|do not)\s+(?:ever\s+)?(?:suggest|recommend|offer|"
                           r"mention|give me|send me)\b|"
                           r"^when(?:ever)? (?:you|u) \w+[^.!?]*?(?:,|\bplease\b|\bpls\b)\s*"
                           r"(?:(?:please|pls|always|just)\s+)*(?:use|give|keep|make|say|write|put|show|answer|reply|talk|speak|call|avoid|include|"
                           r"convert|stick to|do not|don'?t|never)\b", re.IGNORECASE)
# A new clause about the person is a fact of its own: "I have a dog called Rufus and I work as a nurse" (not
# "Sam and I are going": a plural verb means "I" shares the subject).
CLAUSE = re.compile(r"(?:,\s*(?:and |but |so )?|\s+(?:and|but|so)\s+)"
                    r"(?=(?:i'm|i've|i'd|i\s+(?!are\b|were\b|and\b)\w+)\b)", re.IGNORECASE)
_CLAUSE_AND_SEPARATOR = re.compile(f"({CLAUSE.pattern})", re.IGNORECASE)
# Someone of the person's after the last comma shares the next clause's subject: "I do not eat meat anymore, my doctor
# and I agreed on it" (split at "and I", the facts were "…, the user's doctor" and "The user agreed on it").
_JOINT_SUBJECT = re.compile(r",\s+(?P<who>(?:my|our)\s+[\w'-]+(?:\s+[\w'-]+)?)\s*$", re.IGNORECASE)
# A clause that points back at the one before: what "them", "instead" or "there" stand for is in it.
# ... or opens with "now" and the person, telling what the clause before changed ("I change of section in the factory!
# Now I am in quality control": alone, "Now the user is in quality control" lost the factory it was about).
_NOW = r"\b(?:now|these days|nowadays)\b"
NOW_WORD = re.compile(_NOW, re.IGNORECASE)
POINTS_BACK = re.compile(r"\b(?:them|instead|there|either|neither)\b|^\s*now,? (?:i|we|i'm|we're|im)\b", re.IGNORECASE)
# Where the person lives, then whom with: "We live in Ain Diab, near the corniche, with my husband Youssef and …".
HOME_WITH = re.compile(r"^(?P<who>.*?\b(?:live|lives|living))(?P<where>\s+(?:[\w'-]+\s+){0,3}?in\b.*?),?"
                       r"\s+(?P<with>with\s+(?:my|our)\b.*)$", re.IGNORECASE)
# Words that tell nothing by themselves: a clause made only of them ("I did it", "we know that") is no fact.
EMPTY_WORDS = frozenset("i i'm i've me my we we're our us it it's this that do did done does know so yes no "
                        "ok okay was is am are be been have has had will would can could thanks thank you lol haha"
                        .split())
# A word that makes a sentence say something of its own: without one, "38 years at sea as marine engineer" goes on
# with the sentence before ("I am 67 and retired").
VERB = re.compile(r"\b(?:is|are|was|were|be|been|am|has|have|had|do|does|did|will|would|can|could|should|may|might|"
                  r"must|get|gets|got|go|goes|went|make|makes|made|[a-z]+ed|[a-z]+'(?:s|re|m|ve|ll|d))\b",
                  re.IGNORECASE)
# A sentence with a question mark that tells ("ive been hanging out with mika and we're kind of a thing now?"): it
# opens on the person and asks nothing of anyone (not "I should quit?", "I wonder if ...?").
UPTALK = re.compile(r"^(?:i|i've|ive|i'm|im|we|we're|we've|my|our)\s+(?!(?:should|could|would|can|shall|wonder|"
                    r"was wondering|need|want)\b)", re.IGNORECASE)
# A sentence without a verb that still tells news of them: where they are now ("First night in the new house in
# Wrocław") or what they do now ("Rooibos every morning now").
NEWS_OF_NOW = re.compile(_NOW + r"|\b(?:in|at|to|from)\s+(?:the\s+)?[A-Z][\w'-]+")
NEWS_WORDS = 4
# A sentence whose subject is what the sentence before told of ("I have 40 racing pigeons. The best one is a blue hen
# called Iskra"): alone it names nothing the person has, and "which of my birds is the best racer?" found nothing.
SAYS_MORE_OF = re.compile(r"^(?:(?:he|she|they|it|his|her|their|its)\b|the (?:\w+ )?(?:one|ones|other|others)\b|"
                          r"(?:one|two|three|both|all|most|some|each) of (?:them|those|these)\b|both\b)",
                          re.IGNORECASE)
# Whom a fact speaks of without their name ("missus turns 50 on the 3rd of august. shaz."): a lone word after it is
# that name, and "when's shaz's birthday?" found nothing without it.
KIN = re.compile(r"\b(?:" + any_of(FAMILY, FIANCE, GRANDPARENT, GRANDCHILD, RELATIVE, "missus hubby gf bf boss friend "
                                   "flatmate roommate neighbour neighbor dog cat puppy kitten baby".split()) + r")\b",
                 re.IGNORECASE)
LONE_NAME = re.compile(r"^(?!(?:wow|lol|omg|yay|ugh|haha|hehe|nice|great|cool|awesome|amazing|brilliant|sigh|oops|"
                       r"damn|yikes|yeah|yep|nope|sure|indeed|anyway|seriously|finally|again|mate|bless)\b)"
                       r"[A-Za-z][a-z'-]{2,}[.!]*$", re.IGNORECASE)
WISH = re.compile(r"^(?:happy|merry|congrat\w*|good luck|thanks|thank you|cheers|welcome)\b", re.IGNORECASE)
GOES_ON_WORDS = 4  # ... and says enough to be worth keeping ("Lovely weather today" is not), or gives a date
# A long first message tells more than four things: people24's mahmoud's name, age, home and wife took the four
# places and "we shall celebrate our anniversary on the 9th of March" was lost.
WORDS_FACTS = 6
WORDS_FACT_CHARS = 240
WORDS_SALIENCE = 0.5
def chunk_from_words(user_text: str, speaker: str | None = None, said_before: Sequence[str] = ()) -> dict[str, Any]:
    """The chunk of a message read without a model: each sentence in which the person tells something about
    themselves (or someone they name) is a fact, in their words, said of "the user".

    Measured on the answers bench's scenarios, a 0.5B model's facts dropped what was said ("The user in the
    mortgage department"), turned requests into facts ("Oat milk") and took 40 s a message on loaded cores
    (each one a wait for the chat turn behind it); the person's own sentence is true by construction and
    attributed right, and supersession (services/memory/facts.py) works on it as on any fact.

    ``speaker``: the name of who said it, when the message is a named person's turn of an imported conversation
    between people (``chunk_from_lines``): "I" is then that person, not the account's owner. ``said_before``: the
    person's earlier messages in the conversation, newest first, where "The party" of a fact finds whose it is.
    """
    facts: list[str] = []
    told = False  # whether the sentence before was a fact: a sentence without a verb goes on with it
    clauses = _with_referents([clause for whole in SENTENCE_BREAK.split(" ".join(user_text.split()))
                               for sentence in SEMICOLON.split(whole)
                               for home in _home_apart(sentence) for clause in _clauses(home)])
    for sentence in clauses:
        sentence = WERE_TYPED.sub("we're", LEAD_IN.sub("", sentence.strip()).strip())
        sentence = REQUEST_TAIL.sub("", sentence)  # (its leading comma or space keeps a request at the start whole)
        sentence = BARE_KIN.sub("my ", sentence)
        if told and facts and _names_them(sentence, facts[-1]):
            facts[-1] = truncate(f"{facts[-1]}, {sentence.rstrip('.!')}", WORDS_FACT_CHARS)
            continue
        if len(sentence.split()) < 2 or not _tells(sentence) or ASKS.match(sentence) or _empty(sentence):
            told = False
            continue
        sentence = _with_its_subject(sentence)
        verbless = VERB.search(sentence) is None
        if told and facts and ((verbless and _goes_on(sentence)) or SAYS_MORE_OF.match(sentence)):
            # It says more of the fact before, which is where a reader (and recall) needs it: alone, "club quattro
            # on saturday the 12th of december" after "WE GOT A GIG!!!" said nothing of what happens then.
            facts[-1] = truncate(f"{facts[-1]}, {_in_third_person(sentence.rstrip('.!?'), speaker, opens=False)}",
                                 WORDS_FACT_CHARS)
            continue
        told = _about_them(sentence) or (verbless and len(sentence.split()) >= NEWS_WORDS
                                         and NEWS_OF_NOW.search(sentence) is not None and WISH.match(sentence) is None)
        if not told:
            continue
        fact = truncate(with_owner(_in_third_person(_assistant_named(sentence.rstrip(".!?")), speaker),
                                   [user_text, *said_before]), WORDS_FACT_CHARS)
        if fact not in facts:
            facts.append(fact)
        told = fact == facts[-1]  # (a fact said twice in one message is not the one the next sentence goes on with)
    gist = f"{speaker or 'The user'} said: {truncate(' '.join(user_text.split()), GIST_CHARS)}"
    return validate_chunk({
        "gists": [gist],
        "facts": [{"text": fact, "speaker": "user", "confidence": WORDS_FACT_CONFIDENCE,
                   **({"salience": IDENTITY_SALIENCE} if speaker is None and who_they_are(fact) else {})}
                  for fact in facts[:WORDS_FACTS]],
        "entities": [], "emotion": "neutral", "salience": WORDS_SALIENCE, "open_loops": [],
    })


UNNAMED = frozenset({"user", "assistant"})


def chunk_from_lines(lines: list[tuple[str, str]]) -> dict[str, Any]:
    """The chunk of an exchange of an imported conversation between named people (``(speaker, text)`` lines).

    Both speakers are people (LoCoMo: two friends; a group chat): what each tells of themselves is a fact
    named for them ("Caroline went to a support group"), never "the user" — two people's "I" made one
    person of them, and one's new fact superseded the other's. The assistant's lines are never facts.
    """
    chunks = [chunk_from_words(text, None if speaker == "user" else speaker) for speaker, text in lines
              if speaker != "assistant" and text.strip()]
    if not chunks:
        return chunk_from_words("")
    facts = list({fact["text"]: fact for chunk in chunks for fact in chunk["facts"]}.values())
    return {**chunks[0], "gists": [gist for chunk in chunks for gist in chunk["gists"]][:WORDS_FACTS],
            "facts": facts[: WORDS_FACTS * 2]}


def _about_them(sentence: str) -> bool:
    """They speak of themselves, of someone they name first, tell a date, or tell a change ("lisbon fell through",
    "jono quit", "Marieke and the children are settled in Groningen now"): in their conversation, news of their
    life, and the fact that ends what it changed (``services/memory/changes``); or someone named doing something for
    them ("A young lad called Owen Bevan came out to see the ewes": who took over from the vet who retired,
    ``services/memory/successor``)."""
    return bool(SPEAKS_OF_SELF.search(sentence) or NAMED_FIRST.match(sentence) or NAMED_BESIDE.search(sentence)
                or DATED.search(sentence)
                or change_in(sentence) is not None or HOW_TO_ANSWER.match(sentence) or names_newcomer(sentence))


# "I must ask that you never recommend television programmes": the "you" of a standing request is the assistant.
_YOU_ASKED = re.compile(r"\b(that|so that|please,?) (?:you|u) (never|don't|do not|always|only|stop)\b", re.IGNORECASE)


def _assistant_named(sentence: str) -> str:
    """An instruction's "you" is the assistant: the notes speak to the person as "you", and "When you tell you prices,
    use dinars" or "You must ask that you never recommend …" said nothing a reader could follow."""
    sentence = _YOU_ASKED.sub(r"\1 Engram \2", sentence)
    if not HOW_TO_ANSWER.match(sentence):
        return sentence
    return re.sub(r"^(when(?:ever)?) (?:you|u)\b", r"\1 Engram", sentence, flags=re.IGNORECASE)


def _clauses(sentence: str) -> list[str]:
    """The sentence's clauses about the person (``CLAUSE``); a part before "and I" that is only a name shares the
    subject: "yui and i broke up" is not "yui" and "I broke up" (a past verb says no number)."""
    parts = _CLAUSE_AND_SEPARATOR.split(sentence)  # clause, separator, clause, ...
    out = [parts[0]]
    for separator, part in zip(parts[1::2], parts[2::2], strict=True):
        named = not SPEAKS_OF_SELF.search(out[-1]) and VERB.search(out[-1]) is None and len(out[-1].split()) <= 3
        joint = _JOINT_SUBJECT.search(out[-1]) if separator.strip().lower() == "and" else None
        if named and separator.strip().lower() == "and":
            out[-1] = f"{out[-1]}{separator}{part}"
        elif joint:  # "…, my doctor and I agreed on it": the clause is "my doctor and I agreed on it"
            out[-1] = out[-1][:joint.start()]
            out.append(f"{joint['who']}{separator}{part}")
        else:
            out.append(part)
    return out


def _home_apart(sentence: str) -> list[str]:
    """Where the person lives apart from whom they live with: "We live in Ain Diab, near the corniche, with my husband
    Youssef and our twin girls, Salma and Rim" is two facts, so a move ends the first and the family stays (one fact,
    ended by "we moved to Bouskoura", had taken the twins' names with it)."""
    match = HOME_WITH.match(sentence)
    if match is None:
        return [sentence]
    return [f"{match['who']}{match['where']}", f"{match['who']} {match['with']}"]


def _with_referents(clauses: list[str]) -> list[str]:
    """Clauses, each joined to the one before when it points back at it or only gives its time: "Fish makes me
    sick, I never eat them", "I stopped playing tennis. I swim now instead", "got the day shift! 7am to 5pm" (alone,
    "The user never eat them" told nothing)."""
    joined: list[str] = []
    for clause in clauses:
        if joined and (POINTS_BACK.search(clause) or _fragment(clause) or _new_value(joined[-1], clause)):
            joined[-1] = f"{joined[-1].rstrip(' ,.!')}, {clause.strip()}"
        else:
            joined.append(clause)
    return joined


def _new_value(before: str, clause: str) -> bool:
    """A clause without a verb that gives what is true "now" after a change ("we moved. Utrecht now, since last
    weekend."): it is the change's new value, and what points back at it next ("Sanne started at the hospital
    there") speaks of it too."""
    return (VERB.search(clause) is None and NOW_WORD.search(clause) is not None
            and change_in(LEAD_IN.sub("", before.strip())) is not None)


def _with_its_subject(sentence: str) -> str:
    """The sentence with the "I" it left out: "got moved to the day shift" → "I got moved to the day shift", "no more
    nights" → "no more nights for me"."""
    implied = IMPLIED_I.match(sentence)
    if implied and not _empty(sentence[implied.end():]):  # ("love it" tells nothing)
        return f"I {sentence[:1].lower()}{sentence[1:]}"
    if ARRIVED.match(sentence) or IMPLIED_I_AM.match(sentence):
        return f"I am {sentence[:1].lower()}{sentence[1:]}"
    if ENDED_FOR_THEM.match(sentence) and not SPEAKS_OF_SELF.search(sentence):
        return f"{sentence.rstrip(' .!')} for me"
    return sentence


def _names_them(sentence: str, fact: str) -> bool:
    """A lone word after a fact that speaks of someone unnamed ("missus turns 50 …. shaz."): their name."""
    return (LONE_NAME.match(sentence) is not None and KIN.search(fact) is not None
            and not (_empty(sentence) or WISH.match(sentence) or LEAD_IN.fullmatch(sentence)))


def _goes_on(sentence: str) -> bool:
    """A sentence without a verb that says more of the fact before it: a date, or enough words ("first proper venue
    ever"); not a wish ("Happy days!"), and not one that speaks of the person again ("no more nights for me" is a
    change of its own, which ends the old shift)."""
    if WISH.match(sentence) or SPEAKS_OF_SELF.search(sentence):
        return False
    return DATED.search(sentence) is not None or len(sentence.split()) >= GOES_ON_WORDS


def _fragment(clause: str) -> bool:
    """A few words that only give a time or a date ("7am to 5pm."): they belong to the sentence before."""
    return (len(clause.split()) <= 4 and DATED.search(clause) is not None and not SPEAKS_OF_SELF.search(clause)
            and NAMED_FIRST.match(clause.strip()) is None)


def asks(message: str) -> bool:
    """A question, with or without its question mark."""
    return message.rstrip().endswith("?") or ASKS.match(LEAD_IN.sub("", message.strip())) is not None


def _empty(sentence: str) -> bool:
    return not set(re.findall(r"[a-z']+", sentence.lower())) - EMPTY_WORDS


def _tells(sentence: str) -> bool:
    """A sentence that states something: not a question, not a request ("Add milk to my list" is no fact)."""
    asked = sentence.rstrip().endswith("?") and UPTALK.match(sentence.strip()) is None
    return not asked and REQUEST.match(sentence.strip()) is None


def _in_third_person(fact: str, speaker: str | None = None, *, opens: bool = True) -> str:
    """"Sam and I are going to Japan" → "Sam and the user are going to Japan": the facts speak of "the user"
    (of ``speaker`` by name when given: "Caroline and Sam are going to Japan")."""
    fact = " ".join(fact.split())
    for pattern, replacement in FIRST_PERSON:
        fact = pattern.sub(replacement.replace("the user", speaker) if speaker else replacement, fact)
    return fact[:1].upper() + fact[1:] if opens else fact
