"""A question about someone or something of the person's that they never spoke of ("What's my dog called?" from a
person who only ever told of a cat): the small model must say it was not told, not make an answer up.

Measured on the answers bench's eight questions of the kind `untold` (tuning people, `--no-baselines`, 1.5B): 2 of 8
said they had not been told; the others answered from a neighbouring line ("Your dog is called Biscuit.", the cat's
name; "Your birthday is on December 15th."). A line just before the message naming what was never told fixed 4 of 4
in a probe. It fires only for a closed class of things a person has (family, pets, a birthday) asked about in a
question of recall ("what's my X called", "when is my X", "how old is my X"), and only when none of the person's own
messages and none of their facts names it by any of its usual words: with any noun and only the notes searched it
had fired on 8 of 43 told questions of the tuning people (synonyms, a noun in passing); this way, on none of the 23
told questions it reads (it had on a "terrier" asked of as a dog and a Tagalog "bunso" asked of as a brother, now
words for them), and on 5 of the 6 untold ones it reads (the sixth, a wife told of without her name, is told).
"""

from __future__ import annotations

import re

from sqlalchemy import exists, or_, select
from sqlalchemy.orm import Session

from services.db import Exchange
from services.memory.models import Fact

_KIDS = ("kid", "kids", "child", "children", "baby", "babies", "anak", "hijos")
_DOG = ("dog", "dogs", "puppy", "pup", "doggo", "terrier", "spaniel", "retriever", "labrador", "lab", "collie",
        "poodle", "beagle", "dachshund", "pug", "husky", "greyhound", "whippet", "lurcher", "shepherd", "bulldog",
        "corgi", "schnauzer", "chihuahua", "rottweiler", "staffy", "staffie", "sheepdog", "cockapoo", "labradoodle")
_CAT = ("cat", "cats", "kitten", "kitty", "moggy", "tabby", "siamese")
# What the person may ask about, each with the words that would have told of it, a few of the languages people mix in
# among them ("my bunso Migs is grade 11 na": a brother). Any of them counts: the check errs on the side of the notes.
WORDS: dict[str, tuple[str, ...]] = {
    "wife": ("wife", "missus", "missis", "spouse", "married", "bride", "asawa", "esposa", "frau"),
    "husband": ("husband", "hubby", "spouse", "married", "asawa", "esposo", "mann"),
    "partner": ("partner", "wife", "husband", "boyfriend", "girlfriend", "fiance", "fiancee", "fiancé", "fiancée",
                "spouse", "married"),
    "boyfriend": ("boyfriend", "bf", "partner", "fiance", "fiancé"),
    "girlfriend": ("girlfriend", "gf", "partner", "fiancee", "fiancée"),
    "son": ("son", "sons", "boy", "boys", "lad", "hijo", *_KIDS),
    "daughter": ("daughter", "daughters", "girl", "girls", "hija", *_KIDS),
    "kids": ("son", "sons", "daughter", "daughters", *_KIDS),
    "mum": ("mum", "mom", "mother", "mam", "mama", "mamá", "mummy", "mommy", "ma", "parents", "nanay", "inay", "madre",
            "mutter", "amma", "ammi"),
    "dad": ("dad", "father", "papa", "papá", "daddy", "da", "pops", "parents", "tatay", "itay", "padre", "vater",
            "abba", "appa", "baba"),
    "brother": ("brother", "brothers", "bro", "siblings", "bunso", "kuya", "hermano", "bruder"),
    "sister": ("sister", "sisters", "sis", "siblings", "bunso", "hermana", "schwester"),
    "grandson": ("grandson", "grandsons", "grandkid", "grandkids", "grandchild", "grandchildren"),
    "granddaughter": ("granddaughter", "granddaughters", "grandkid", "grandkids", "grandchild", "grandchildren"),
    "grandma": ("grandma", "gran", "granny", "nan", "nana", "nanna", "grandmother", "grandparents"),
    "grandpa": ("grandpa", "grandad", "granddad", "grandfather", "gramps", "grandparents"),
    "dog": _DOG,
    "cat": _CAT,
    "pet": ("pet", "pets", *_DOG, *_CAT, "rabbit", "hamster", "parrot", "budgie", "tortoise", "fish"),
    "birthday": ("birthday", "bday", "b-day", "born", "birth"),
}
# Whether someone's birthday was told: said with their name ("Marci turns five on the 3rd of May").
BIRTHDAY_TOLD = (*WORDS["birthday"], "turns", "turning", "turned")
ASKED_AS = {"mom": "mum", "mother": "mum", "father": "dad", "kid": "kids", "children": "kids", "child": "kids",
            "sons": "son", "daughters": "daughter", "boy": "son", "girl": "daughter", "dogs": "dog", "cats": "cat",
            "pets": "pet", "puppy": "dog", "kitten": "cat", "hubby": "husband", "missus": "wife",
            "grandmother": "grandma", "gran": "grandma", "nan": "grandma", "granny": "grandma",
            "grandfather": "grandpa", "grandad": "grandpa", "granddad": "grandpa"}
_THING = "|".join(sorted({*WORDS, *ASKED_AS}, key=len, reverse=True))
_BEFORE = r"(?:late|little|old|new|eldest|oldest|youngest|younger|older|big|baby|first|second|lovely|dear)"
# A question of recall: a question word and a copula or auxiliary alone before "my …" ("what is the name of my
# dog", "how old is my son", "where does my sister live"), not advice ("what should I get my wife …").
RECALL_QUESTION = re.compile(
    rf"^\s*(?:what|when|where|who|which|how old|how long)(?:'s|’s|s)?\s+"
    rf"(?:(?:is|are|was|were|does|did|do)\s+)?(?:the names? of\s+)?my\s+(?:{_BEFORE}\s+)*"
    rf"(?P<thing>{_THING})(?:'s|’s|s'|s)?\b(?P<rest>[^?.!]*)[?.!]*\s*$", re.IGNORECASE)
# ... or someone's birthday, named ("When is Marci's birthday?": people24's zsofia had told of her son Marci, never of
# his birthday, and the 1.5B gave one).
NAMED_BIRTHDAY = re.compile(r"^\s*(?:when(?:'s|’s|s| is| was)|what(?:'s|’s|s| is) the date of)\s+"
                            r"(?!(?:my|your|his|her|their|our|the)\b)(?P<name>[a-z][\w-]+)(?:'s|’s|s')?\s+"
                            r"(?:birthday|bday|b-day)(?:\s+again)?\s*[?.!]*\s*$", re.IGNORECASE)
ADVICE = re.compile(r"\b(?:should|could|can|would|shall|get|buy|give|gift|make|cook|plan|tell|say|write|help)\b",
                    re.IGNORECASE)


def asked_of_own(message: str) -> str | None:
    """The thing of the person's a recall question asks about ("What's my late wife's name?" → "wife"), or None."""
    message = " ".join(message.split())
    named = NAMED_BIRTHDAY.match(message)
    if named is not None:
        return f"{named['name']}'s birthday"
    found = RECALL_QUESTION.match(message)
    if found is None or ADVICE.search(found.group("rest")) or len(found.group("rest").split()) > 5:
        return None
    thing = found.group("thing").lower()
    return ASKED_AS.get(thing, thing)


def never_told(session: Session, user_id: str, message: str) -> str:
    """What the message asks about that none of the person's messages or facts names ("" when told, or not asked).

    The words are looked for in what the person said (``Exchange.user_text``, not the replies: an earlier made-up
    answer is no telling) and in their facts, superseded ones too, as whole words in any case. Only a question of
    the kind read here costs the query.
    """
    thing = asked_of_own(message)
    if thing is None:
        return ""
    name, _, _ = thing.rpartition("'s ")
    patterns = [_any_of(BIRTHDAY_TOLD), _any_of((name,))] if name else [_any_of(WORDS[thing])]
    said = exists().where(Exchange.user_id == user_id, *(Exchange.user_text.op("~*")(each) for each in patterns))
    known = exists().where(Fact.user_id == user_id, *(Fact.text.op("~*")(each) for each in patterns))
    return "" if session.scalar(select(or_(said, known))) else (thing if name else f"their {thing}")


def _any_of(words: tuple[str, ...]) -> str:
    """A PostgreSQL pattern for any of ``words`` as a whole word."""
    return r"\m(?:" + "|".join(re.escape(word) for word in words) + r")\M"
