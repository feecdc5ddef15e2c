"""What the person said they never want offered: "I can't stand mushrooms", "I'm allergic to peanuts", "I'm vegetarian".

Told "You can't stand mushrooms" in its notes, a 0.5B model still suggested a mushroom risotto for dinner: a
word in the prompt draws the model to it. So the refused things are read from the person's facts and the reply
is checked against them (services/llm/guard.names_refused): a reply that names one is written again, told what
to leave out. The facts are the person's own words, so a refusal is whatever follows the refusing verb, up to
the end of its clause, without the small words.
"""

from __future__ import annotations

import re

from services.text import stem

# The refusing words, and what follows them up to the end of the clause.
REFUSING = re.compile(
    r"\b(?:can't stand|cannot stand|can not stand|could never stand|hate|hates|dislike|dislikes|detest|detests|"
    r"(?:don't|do not|doesn't|does not|never|can't|cannot|won't) (?:like|eat|eats|drink|drinks|touch|have|want)|"
    r"allergic to|intolerant to|(?:please )?never suggest(?: anything with)?|not a fan of)\s+"
    r"(?P<what>[^.,;!?]+)", re.IGNORECASE)
# "The user is vegetarian": a diet refuses a family of things the word does not name.
MEAT = ("meat", "chicken", "beef", "pork", "ham", "bacon", "sausage", "steak", "lamb", "turkey", "salami",
        "pepperoni", "chorizo", "mince", "burger", "duck", "veal")
FISH = ("fish", "salmon", "tuna", "cod", "prawn", "shrimp", "anchov", "sardine", "seafood", "mussel", "crab")
DIETS = {
    "vegetarian": MEAT + FISH,
    "vegan": (*MEAT, *FISH, "cheese", "egg", "milk", "butter", "yogurt", "yoghurt", "honey", "cream"),
    "pescatarian": MEAT,
    "halal": ("pork", "ham", "bacon", "salami", "pepperoni", "chorizo", "wine", "beer"),
}
DIET_WORD = re.compile(r"\b(" + "|".join(DIETS) + r")\b", re.IGNORECASE)
# Words of a refusal that name nothing ("anything with them", "a bad allergy", "so keep that in mind").
EMPTY = frozenset({
    "a", "an", "the", "any", "anything", "something", "with", "them", "it", "that", "this", "those", "these", "of",
    "and", "or", "so", "keep", "mind", "in", "bad", "really", "very", "at", "all", "please", "ever", "again",
    "for", "my", "your", "the user's", "food", "foods", "stuff", "things", "kind", "kinds", "much", "too",
    "either", "whatsoever", "anymore", "more", "since", "because", "but", "to", "be", "is", "are", "like", "eat",
})
WORD = re.compile(r"[a-z][a-z'-]+")
# The same, as a PostgreSQL regular expression: the facts that may hold a refusal are read on every turn.
SQL_PATTERN = (r"(can't|cannot|can not|never) stand|\mhates?\M|\mdislikes?\M|\mdetests?\M|"
               r"(don't|do not|doesn't|does not|never|can't|cannot|won't) (like|eat|drink|touch|have|want)|"
               r"allergic|intolerant|never suggest|not a fan of|vegetarian|vegan|pescatarian|halal")


def refused_things(fact: str) -> set[str]:
    """The things a fact says the person refuses, as word stems: "You can't stand mushrooms" → {"mushroom"}."""
    things: set[str] = set()
    for match in REFUSING.finditer(fact):
        words = [word for word in WORD.findall(match["what"].lower()) if word not in EMPTY]
        things.update(stem(word) for word in words[:3])
    for diet in DIET_WORD.findall(fact):
        things.update(DIETS[diet.lower()])
    return {thing for thing in things if len(thing) >= 3}
