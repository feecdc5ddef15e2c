"""What the person said they never want offered: "I can't stand mushrooms", "I'm allergic to peanuts", "I'm vegetarian".

Told "You can't stand mushrooms" in its notes, a 0.5B model still suggested a mushroom risotto for dinner: a
word in the prompt draws the model to it. So the refused things are read from the person's facts and the reply
is checked against them (services/llm/guard.names_refused): a reply that names one is written again, told what
to leave out. The facts are the person's own words, so a refusal is whatever follows the refusing verb, up to
the end of its clause, without the small words.
"""

from __future__ import annotations

import re

from services.text import SENTENCE_BREAK, STOPWORDS, stem, words

# The refusing words, and what follows them up to the end of the clause.
REFUSING = re.compile(
    r"\b(?:(?:can't|cannot|can not|could never|never been able to|not able to) (?:stand|abide|stomach|bear)|"
    r"hates|hate|dislikes|dislike|detests|detest|"  # ("hate" first matched "hates" and named nothing)
    # a learner's and Nigerian English's "I no eat pork", "I no dey drink"
    r"(?:don'?t|do not|doesn'?t|does not|never|can'?t|cannot|won'?t|no longer|no(?: dey)?) "
    r"(?P<verb>like|eat|eats|drink|drinks|touch|have|want|do|take|handle|fly|flies)|"
    r"allergic to|intolerant (?:to|of)|avoiding|avoids?|(?:stays?|keeps?|staying|keeping) away from|"
    r"gave up|given up|quit|refuses? to|refused to|"
    r"(?:please )?(?:never|don'?t|do not)(?: ever)? (?:suggest|recommend|offer)"
    r"(?: (?:me|the user|you))?(?: anything with)?|not a fan of|not into)"
    r"(?:\s+(?P<what>[^.,;!?]+))?", re.IGNORECASE)
# "a nut allergy", "lactose intolerant", "gluten-free", "no meat for me", "fish and seafood make me sick",
# "dairy doesn't agree with me".
NAMED_FIRST = re.compile(r"\b(?P<what>[a-z]+)[ -](?:allergy|allergies|intolerance|intolerant|free)\b"
                         r"|\bno (?P<what2>[a-z]+) (?:for (?:me|the user|you)|suggestions|recommendations|ideas)\b"
                         r"|^(?P<what3>[a-z ]+?) (?:makes?|made) (?:me|the user|you) (?:\w+ )?(?:sick|ill|unwell)\b"
                         r"|^(?P<what4>[a-z ]+?) (?:doesn't|does not|don't|do not) agree with (?:me|the user|you)\b"
                         r"|^(?P<what5>[a-z ]+?) (?:is|are) (?:quite |completely |totally |simply )?out of the "
                         r"question\b"
                         # "cilantro tastes like soap to me", "liver tastes vile".
                         r"|^(?P<what6>[a-z ]+?) (?:tastes?|smells?) (?:like soap|(?:really |so |just )?(?:awful|"
                         r"horrible|disgusting|vile|gross|foul|revolting|rank))\b"
                         # "really scared of heights, no mountain or volcano trip for me" (the 1.5B offered Bromo).
                         r"|\b(?:scared|afraid|terrified|frightened|fear) of (?P<what7>heights|flying)\b"
                         r"|\b(?P<what8>vertigo|acrophobi)"
                         # "please no suggestions with alcohol ha", "no recommendations involving pork".
                         r"|\bno (?:suggestions|recommendations|ideas|recipes) (?:with|of|involving|containing) "
                         r"(?P<what9>[a-z]+)\b", re.IGNORECASE)
# A word that names a family of things ("dairy": milk, cheese, …), and a diet that refuses families.
MEAT = ("meat", "chicken", "beef", "pork", "ham", "bacon", "sausage", "steak", "lamb", "turkey", "salami",
        "pepperoni", "chorizo", "mince", "burger", "duck", "veal", "prosciutto", "meatball")
# "Seafood" and sushi hold shellfish often enough that someone allergic to it is not offered them: told "allergic to
# shellfish", the 1.5B suggested "a restaurant that specializes in seafood" for a dinner out.
SHELLFISH = ("prawn", "shrimp", "crab", "lobster", "mussel", "oyster", "scallop", "clam", "shellfish", "seafood",
             "sushi", "paella", "langoustine", "crayfish", "calamari", "squid", "octopus")
FISH = ("fish", "salmon", "tuna", "cod", "anchov", "sardine", "mackerel", "trout", *SHELLFISH)
DAIRY = ("milk", "cheese", "butter", "cream", "yogurt", "yoghurt", "latte", "cappuccino", "ice cream", "dairy",
         "mozzarella", "parmesan", "cheddar", "feta", "paneer")
GLUTEN = ("bread", "pasta", "wheat", "flour", "pizza", "toast", "sandwich", "noodle", "couscous", "cracker",
          "bagel", "croissant", "gluten", "biscuit", "cake", "beer")
ALCOHOL = ("alcohol", "wine", "beer", "cocktail", "prosecco", "champagne", "whisky", "whiskey", "vodka", "gin",
           "rum", "cider", "sangria", "spritz", "sake", "mulled", "liqueur", "booze", "ale", "lager")
COFFEE = ("coffee", "espresso", "latte", "cappuccino", "americano", "macchiato", "mocha", "flat white")
CAFFEINE = ("caffeine", *COFFEE, "cola", "coke", "pepsi", "matcha", "yerba", "guarana", "energy drink", "red bull")
SWEETS = ("sugar", "sweet", "cake", "candy", "candies", "chocolate", "cookie", "biscuit", "brownie", "donut",
          "doughnut", "ice cream", "pastry", "pastries", "pie", "pudding", "tiramisu", "cheesecake", "muffin",
          "cupcake", "syrup", "honey", "jam", "caramel", "custard", "fudge", "soda", "lemonade", "milkshake",
          # people24's mahmoud, refusing "sweet things": "a light dessert, like a fruit tart or a banana split"
          "dessert", "tart", "sundae", "banana split", "sorbet", "gelato", "meringue", "macaron", "trifle", "crumble",
          "flapjack", "baklava", "kunafa", "basbousa", "halwa", "halva", "jelly", "marzipan", "waffle", "pancake")
# "won't eat anything green": the green vegetables.
GREENS = ("broccoli", "spinach", "pea", "kale", "lettuce", "cucumber", "zucchini", "courgette", "brussels",
          "asparagus", "green bean", "celery", "cabbage", "salad", "pesto", "edamame", "avocado", "guacamole")
# Activities a body may be told to stop: "no more running for me, no jumping" (a torn meniscus), "I don't fly".
RUNNING = ("run", "running", "jog", "jogging", "sprint", "marathon", "5k", "10k", "parkrun", "treadmill")
JUMPING = ("jump", "jumping", "skipping", "burpee", "plyometric", "trampoline", "hiit")
FLYING = ("fly", "flight", "plane", "airport", "airline")
HEIGHTS = ("height", "mountain", "mount", "volcano", "cliff", "climb", "summit", "skydiv", "bungee", "paraglid",
           "zip line", "zipline", "rooftop", "observation deck", "ferris wheel", "hot air balloon", "abseil",
           "via ferrata", "skyscraper", "tower", "glass floor", "cable car")
NUTS = ("nut", "peanut", "almond", "walnut", "cashew", "pecan", "hazelnut", "pistachio", "praline", "nutella")
FAMILIES = {"meat": MEAT, "fish": FISH, "seafood": FISH, "shellfish": SHELLFISH, "dairy": DAIRY,
            "lactose": DAIRY, "milk": DAIRY, "gluten": GLUTEN, "wheat": GLUTEN, "alcohol": ALCOHOL,
            "booze": ALCOHOL, "drinking": ALCOHOL, "nut": NUTS, "caffeine": CAFFEINE, "coffee": CAFFEINE,
            "sugar": SWEETS, "sweet": SWEETS, "dessert": SWEETS, "green": GREENS, "greens": GREENS,
            "running": RUNNING, "jogging": RUNNING, "jumping": JUMPING, "flying": FLYING, "fly": FLYING,
            "height": HEIGHTS, "vertigo": HEIGHTS, "acrophobi": HEIGHTS,
            "pork": ("pork", "ham", "bacon", "salami",
            "chorizo", "prosciutto", "pepperoni")}
DIETS = {
    "vegetarian": MEAT + FISH,
    "vegan": (*MEAT, *FISH, *DAIRY, "egg", "honey"),
    "pescatarian": MEAT,
    "halal": ("pork", "ham", "bacon", "salami", "pepperoni", "chorizo", "prosciutto", *ALCOHOL),
    "muslim": ("pork", "ham", "bacon", "salami", "pepperoni", "chorizo", "prosciutto", *ALCOHOL),
    "kosher": ("pork", "ham", "bacon", "salami", "pepperoni", "chorizo", "prosciutto", *SHELLFISH),
    "diabetic": SWEETS, "diabetes": SWEETS,
    "coeliac": GLUTEN, "celiac": GLUTEN, "teetotal": ALCOHOL, "teetotaller": ALCOHOL, "sober": ALCOHOL,
    # "been off the grog 8 years": told so, the 1.5B still offered "a beer or a glass of wine" for a night at the pub.
    "off the grog": ALCOHOL, "off the booze": ALCOHOL, "off the drink": ALCOHOL, "off alcohol": ALCOHOL,
}
# A refusing verb said with nothing after it names a family itself: "I don't drink", "I don't fly".
_VERB_NAMES = {"drink": "alcohol", "drinks": "alcohol", "fly": "flying", "flies": "flying"}
DIET_WORD = re.compile(r"\b(" + "|".join(DIETS) + r")\b", re.IGNORECASE)
# Words of a refusal that name nothing ("anything with them", "a bad allergy", "so keep that in mind").
EMPTY = frozenset({
    "a", "an", "the", "any", "anything", "something", "with", "them", "it", "that", "this", "those", "these", "of",
    "and", "or", "so", "keep", "mind", "in", "bad", "really", "very", "at", "all", "please", "ever", "again",
    "for", "my", "your", "the user's", "user", "food", "foods", "stuff", "things", "kind", "kinds", "much", "too",
    "either", "whatsoever", "anymore", "more", "since", "because", "but", "to", "be", "is", "are", "like", "eat",
    "years", "now", "myself", "well", "honestly", "days", "lately", "such", "last", "year", "month", "week",
    "ago", "yesterday", "today", "recently", "bit", "little", "severe", "mild", "serious", "terrible",
    # Particles of the Englishes people mix in: "I don't drink talaga, never" refused "talaga" (Tagalog "really")
    # and the 1.5B offered "a cold beer"; "don't eat pork lah", "no beef ha".
    "talaga", "po", "na", "pa", "naman", "lang", "daw", "kasi", "ha", "lah", "leh", "lor", "sia", "ah", "eh", "yaar",
    "ji", "abeg", "o",
})
# "no more sugar", "no more coffee for me", "no more running for me, no jumping": a refusal when what follows is a
# thing one eats or drinks or an activity of the body ("no more nights" is a change of shift,
# services/memory/changes.py); after "no more", a clause's "no X" of the same kind too.
NO_MORE = re.compile(r"\bno more (?P<what>[a-z]+)(?: for (?:me|the user|you))?(?P<also>(?:,? (?:and )?no [a-z]+)*)",
                     re.IGNORECASE)
_ALSO = re.compile(r"\bno ([a-z]+)", re.IGNORECASE)
_SAYINGS = frozenset("problem problems worries worry way doubt idea thanks offence offense rush pressure kidding "
                     "joke jokes stress biggie".split())  # "no problem, don't suggest that again" refuses nothing
# Things listed with "no", then pointed back at by the refusal: "Doctor said no running, no jumping, so don't suggest
# me those" (the 1.5B's workout for someone told that began with "light jogging").
POINTED_BACK = re.compile(r"(?P<items>(?:\bno [a-z]+,?\s+(?:(?:and|or|nor)\s+)?)+)[^.;!?]{0,30}?\b(?:never|don'?t|"
                          r"do not)(?: ever)? (?:suggest|recommend|offer|give)(?: (?:me|the user|you))? (?:those|them|"
                          r"these|that|either|any of (?:that|those|them|these))\b", re.IGNORECASE)
# The same, as a PostgreSQL regular expression: the facts that may hold a refusal are read on every turn.
SQL_PATTERN = (r"(can't|cannot|can not|never|able to) (stand|abide|stomach|bear)|out of the question|"
               r"\mhates?\M|\mdislikes?\M|\mdetests?\M|"
               r"(don'?t|do not|doesn'?t|does not|never|can'?t|cannot|won'?t|no longer) "
               r"(like|eat|drink|touch|have|want|do|take|handle|fly|flies)|allerg|intoleran|\mavoid|away from|"
               r"gave up|given up|\mquit\M|\mrefuse|\mno more |(never|don'?t|do not)( ever)? (suggest|recommend|offer)|"
               r"(scared|afraid|terrified|frightened|fear) of (heights|flying)|vertigo|acrophobi|"
               r"not a fan of|not into|[ -]free\M|\mno [a-z]+ for |"
               r"\m(make|makes|made) (me|the user|you) (\w+ )?(sick|ill|unwell)|agree with (me|the user|you)|"
               r"(taste|tastes|smell|smells) (like soap|(really |so |just )?(awful|horrible|disgusting|vile|gross|"
               r"foul|revolting|rank))|"
               + "|".join(DIETS))


# A kind of thing named after what qualifies it: "horror films" refuses horror, not every film (told "never recommend
# me horror films", the guard rewrote every film suggestion away: "Everything I was going to suggest …").
_KINDS = frozenset({"film", "films", "movie", "movies", "show", "shows", "series", "book", "books", "novel", "novels",
                    "music", "song", "songs", "game", "games", "food", "foods", "dish", "dishes", "meal", "meals",
                    "restaurant", "restaurants", "place", "places", "trip", "trips", "holiday", "holidays", "drink",
                    "drinks", "snack", "snacks", "programme", "programmes", "program", "programs", "genre", "genres"})


def _said(what: str) -> list[str]:
    """The words naming what is refused, without the small words and without a kind after its qualifier."""
    said = words(what)
    return [word for index, word in enumerate(said) if word not in EMPTY
            and not (word in _KINDS and index and said[index - 1] not in EMPTY)]


def refused_things(fact: str) -> set[str]:
    """The things a fact says the person refuses, as word stems: "You can't stand mushrooms" → {"mushroom"}; a word
    naming a family ("dairy", "alcohol") or a diet ("vegetarian") stands for its members."""
    named: list[str] = []
    for match in REFUSING.finditer(fact):
        said = _said(match["what"] or "")
        verb_names = _VERB_NAMES.get((match["verb"] or "").lower())
        named += said[:3] or ([verb_names] if verb_names else [])
    for match in NAMED_FIRST.finditer(fact):
        named += [word for word in words(next(filter(None, match.groups())).lower()) if word not in EMPTY][:3]
    named += [word for match in NO_MORE.finditer(fact)
              for word in (stem(said.lower()) for said in [match["what"], *_ALSO.findall(match["also"])])
              if _consumed(word)]
    named += [word for match in POINTED_BACK.finditer(fact) for word in _ALSO.findall(match["items"])
              if word.lower() not in EMPTY | _SAYINGS]
    things = {stem(word) for word in named}
    things.update(filter(None, map(_verb_of, list(things))))
    for word in list(things):
        things.update(FAMILIES.get(word, ()))
    for diet in DIET_WORD.findall(fact):
        things.update(DIETS[diet.lower()])
    return {thing for thing in things if len(thing) >= 3}


_QUESTION_CLAUSE = re.compile(r",\s*(?:so\s+|but\s+|and\s+)?(?=(?:what|which|how|where|when|who|any|anything|can|"
                              r"could|would|should|do|does|is|are|got|ideas?|suggestions?)\b)", re.IGNORECASE)


def refused_in_message(message: str) -> set[str]:
    """What a message refuses outside its questions: the reply to it is checked against it before any fact of it is
    stored ("pls dont ever recommend me horror movies ha" was answered "If you're interested in horror, I'd recommend
    …"; "I can't stand mushrooms, what should I cook?" asks for a dinner without them)."""
    told = " ".join(_told_before_asking(sentence) for sentence in SENTENCE_BREAK.split(" ".join(message.split())))
    return refused_things(told) if told.strip() else set()


def _told_before_asking(sentence: str) -> str:
    """A sentence without its question: all of a statement, what a question's first clause tells ("I'm vegetarian,
    any dinner ideas?"), nothing of a question alone ("Do you like horror movies?")."""
    if not sentence.rstrip().endswith("?"):
        return sentence
    parts = _QUESTION_CLAUSE.split(sentence, maxsplit=1)
    return parts[0] if len(parts) == 2 else ""


def _verb_of(thing: str) -> str:
    """The verb of an activity whose "-ing" doubles its last letter: "jogging" → "jog", "running" → "run" (told "never
    suggest running or jogging", the 1.5B offered "a light jog"); else ""."""
    base = thing.removesuffix("ing")
    if len(base) < 4 or base == thing or base[-1] != base[-2] or base[-1] in "aeiouls":
        return ""
    return "" if base[:-1] in STOPWORDS else base[:-1]  # ("herring" is no "her")


def _consumed(word: str) -> bool:
    """A thing one eats or drinks: a family's name or one of its members."""
    return word in FAMILIES or any(word in family for family in FAMILIES.values())


# A refusal taken back: "actually the user eats fish again now", "scratch that, the user does like horror films", "the
# user loves horror films after all", "the user is fine with mushrooms now", "the user is back on dairy". What it names
# is refused no more (services/memory/changes.py ends the refusal that named it).
_TAKING = r"(?:eat|eats|drink|drinks|like|likes|love|loves|enjoy|enjoys|want|wants|watch|watches|have|has|take|takes)"
WITHDRAWN = re.compile(rf"\b{_TAKING}\s+(?P<what>[^.,;!?]+?)\s+(?:again|after all)\b"
                       rf"|\b(?:do|does)\s+{_TAKING}\s+(?P<what2>[^.,;!?]+)"
                       r"|\b(?:(?:fine|okay|ok|alright|good) with|back on|back to eating|back to drinking)\s+"
                       r"(?P<what3>[^.,;!?]+?)(?:\s+(?:again|now|after all|these days))*(?=$|[.,;!?])", re.IGNORECASE)


def withdrawn_things(fact: str) -> set[str]:
    """What a fact says the person no longer refuses, as word stems ("the user eats fish again now" → {"fish"}); none
    when the fact refuses something itself ("the user doesn't like fish again" is no taking back)."""
    if refused_things(fact):
        return set()
    taken = set()
    for match in WITHDRAWN.finditer(fact):
        taken |= {stem(word) for word in _said(next(filter(None, match.groups())))}
    return taken
