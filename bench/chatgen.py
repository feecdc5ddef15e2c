"""Synthetic chat history for the scale benches: varied lengths and vocabularies, like real chat.

``chat_lines(n)`` yields the JSON lines ``engram import`` reads, about ``n`` exchanges of them, so
the bench imports them through the real path (parse_lines → pair_exchanges → store_records).
What makes them realistic enough for timing recall and import:

* sessions of 3–40 exchanges, each on a topic (one of 24, with its own ~30 content words) that
  drifts to another topic now and then; a third of the sessions are between two named people
  (LoCoMo-like, "Caroline: ..."), the rest a person and the assistant;
* turns of 1–8 sentences (log-normal lengths: most short, some long), sentences from ~40
  shapes filled with topic words, general nouns, adjectives and adverbs, people's names, places, numbers, dates
  and weekdays; word choice is Zipfian, so document frequencies have a long tail as in real
  text, and one word in ~40 is a rare coined name (a brand, a pet, a street) from syllables;
* a person sometimes sends two lines before the reply (the exchange then holds three turns).

Deterministic for a given seed. No file is read: the vocabulary is below.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import random
from collections.abc import Iterator

TOPICS = {
    "cooking": "recipe oven pasta garlic sauce dough bread soup onion spice pan kitchen dinner lunch salad curry "
               "rice flour butter cheese tomato basil lemon chicken broth knife stew roast grill dessert",
    "travel": "flight train hotel passport luggage ticket airport beach museum city trip itinerary hostel map "
              "island ferry tour booking visa road journey coast mountains guide suitcase delay terminal",
    "work": "meeting deadline manager project report client presentation email colleague promotion salary "
            "office team budget review contract interview schedule spreadsheet proposal quarter task boss",
    "health": "doctor appointment headache sleep medicine allergy pain therapy blood pressure vitamin "
              "dentist clinic symptoms fever cough prescription nurse checkup injury knee back stress rest",
    "fitness": "run marathon gym workout yoga weights stretch cardio trainer swim cycling pace squat miles "
               "muscles routine sprint hike steps endurance coach race laps plank protein recovery",
    "music": "guitar piano song concert band album lyrics chord drums singer playlist choir melody rehearsal "
             "violin festival vinyl tune practice gig stage jazz rhythm tempo bass composer",
    "movies": "film movie series episode actor director cinema trailer plot sequel documentary scene "
              "character ending streaming season comedy thriller drama soundtrack premiere script review",
    "books": "novel author chapter library poetry memoir fiction page reading bookstore series plot writer "
             "essay story shelf paperback edition club character biography fantasy mystery genre",
    "pets": "dog puppy cat kitten vet leash walk treats breed bark litter fur collar shelter adoption "
            "training cage parrot hamster aquarium fish grooming toy bowl paw tail",
    "garden": "garden tomatoes seeds soil compost roses weeds watering plants greenhouse harvest herbs "
              "shovel lawn tulips fence pots mulch sunflowers orchard pruning bees blossom shed hedge",
    "money": "budget savings loan mortgage rent bills taxes invoice bank account credit debt pension "
             "investment stocks refund insurance expenses paycheck interest fees wallet receipt price",
    "family": "mom dad sister brother grandma grandpa cousin aunt uncle kids son daughter wedding "
              "birthday anniversary reunion baby nephew niece parents holiday visit dinner christmas",
    "school": "exam homework teacher class semester degree thesis lecture course grades study professor "
              "campus essay assignment tutor scholarship university classmates notes quiz diploma",
    "tech": "laptop phone app software update bug server code password keyboard screen battery wifi "
            "router backup cloud browser printer cable charger monitor install settings data",
    "car": "car engine tires mechanic garage fuel brakes insurance license parking traffic highway oil "
           "repair dashboard battery commute driver dealership lease mileage accident wheel",
    "home": "apartment landlord furniture couch paint renovation plumber kitchen bathroom moving boxes "
            "neighbors roof window carpet heating lease balcony curtains lamp closet bedroom keys",
    "sports": "football soccer basketball tennis match league score goal team season coach player stadium "
              "tickets final referee tournament playoffs fans jersey training injury victory",
    "art": "painting canvas sketch gallery exhibition brush watercolor portrait sculpture pottery clay "
           "studio colors drawing photography camera lens frame museum craft design pencil",
    "games": "game console level boss controller puzzle chess board strategy multiplayer quest score "
             "character map tournament cards dice raid server save mission arcade",
    "friends": "friend party brunch coffee drinks birthday gossip plans weekend message call hangout "
               "bar picnic karaoke movie night dinner gift surprise trip reunion",
    "volunteer": "charity volunteer shelter donation fundraiser community food bank cleanup mentor "
                 "kids event organization cause support neighborhood drive campaign event",
    "weather": "rain snow storm sunshine heat cold wind umbrella forecast temperature humidity clouds "
               "winter summer spring autumn frost thunder flood drought jacket",
    "shopping": "store sale discount order delivery package return shoes jacket dress groceries market "
                "brand size cart coupon mall checkout shipping refund gift",
    "feelings": "anxious happy tired lonely excited nervous proud grateful worried calm overwhelmed "
                "motivated confident frustrated hopeful sad relieved stressed angry peaceful",
}
ADVERBS = ("really actually just maybe probably pretty quite still already always never often sometimes "
           "finally again honestly definitely totally").split()
ADJECTIVES = "good great nice bad hard easy new old big small long short weird lovely tricky expensive cheap".split()
GENERAL_NOUNS = ("people time way thing day life idea part place reason problem question answer point chance week "
                 "month year morning evening weekend plan news story mistake surprise").split()
NAMES = ("Anna Ben Chloe Dmitri Elif Farid Greta Hugo Ines Jonas Kemal Lucia Marco Nadia Oskar Paula Quentin "
         "Rosa Sven Tara Umar Vera Wim Yara Caroline Melanie Jon Gina Maria John Tim Evan Sam Audrey Andrew "
         "Joanna Nate Deborah Jolene Calvin Dave James Priya Ahmed Mei Lars Sofia Diego Amara Kenji Olga").split()
PLACES = ("Berlin Lyon Gdansk Seville Bristol Turin Ghent Bergen Brno Cork Graz Lisbon Porto Oslo Vienna "
          "Krakow Dublin Madrid Denver Austin Boston Toronto Osaka Seoul Nairobi Lima Quito Hanoi Perth").split()
DAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()
MONTHS = ("January February March April May June July August September October November December").split()
SYLLABLES = "ka lo mi ra ven to sel dar bri qua zen fo lu tem nor vik ash pel ori mun cal dre".split()

SHAPES = [
    "I {verb} the {noun} {when}.", "{Name} said the {noun} was {adj}.", "We should {verb} the {noun} before {day}.",
    "Did you ever {verb} a {noun} in {place}?", "The {noun} and the {noun} are {adv} {adj} now.",
    "{Adv} I {verb} about the {noun} and the {noun}.", "My {noun} cost {number} dollars, which is {adj}.",
    "On {day} I'm meeting {Name} at the {noun} in {place}.", "It was {adj} because the {noun} {verb2} again.",
    "{Name} wants to {verb} a {noun} for {Name}'s {noun}.", "I have been {verbing} the {noun} for {number} weeks.",
    "Last {month} we went to {place} for the {noun}.", "That {noun} from {Rare} is {adv} {adj}.",
    "How do I {verb} my {noun} without a {noun}?", "Can you help me {verb} the {noun} {when}?",
    "I keep thinking about the {noun}, it felt {adj}.", "The {noun} at {Rare} was {adj} and {adj}.",
    "{Name} and I {verb2} the {noun} on {month} {number}.", "Maybe I'll {verb} the {noun} {when}, or the {noun}.",
    "I'm {adj} about the {noun}, to be honest.", "Good idea, a {adj} {noun} usually helps with the {noun}.",
    "You could {verb} the {noun} first and then the {noun}.", "It sounds {adj}; {Name} might know about the {noun}.",
    "Try to {verb} the {noun} for {number} minutes a day.", "Write down what matters about the {noun}.",
    "That's {adj}! How did the {noun} go in the end?", "A {noun} near {place} would be {adv} {adj}.",
    "Remember the {noun} you mentioned in {month}? It was {adj}.", "{Adv}, {noun} and {noun} take time.",
    "I named it {Rare}, after the {noun} in {place}.", "We spent {number} hours on the {noun} and the {noun}.",
    "The {noun} broke, so I {verb2} a new {noun} from {Rare}.", "{Name} thinks the {noun} is {adj}, I disagree.",
    "Lol, the {noun}.", "Yes!", "Thanks, that helps a lot.", "Not sure yet.", "Okay, {day} works.",
]
VERBS = "fix plan buy try finish clean cook book change check start visit learn organise paint sell".split()
VERBS2 = "fixed planned bought tried finished cleaned cooked booked changed checked started visited".split()
VERBING = "planning trying fixing learning practising saving cleaning watching reading building".split()


class ChatGen:
    """One deterministic stream of chat sessions."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.topics = {name: words.split() for name, words in TOPICS.items()}
        self.rare = ["".join(self.rng.choice(SYLLABLES) for _ in range(self.rng.randint(2, 3))).title()
                     for _ in range(5000)]

    def _zipf(self, words: list[str]) -> str:
        # P(rank r) ∝ 1/r: a few words are everywhere, most are rare.
        index = int(math.exp(self.rng.random() * math.log(len(words) + 1))) - 1
        return words[min(index, len(words) - 1)]

    def sentence(self, topic: str) -> str:
        rng = self.rng
        nouns = self.topics[topic]
        text = rng.choice(SHAPES)
        fills = {
            "{noun}": lambda: self._zipf(nouns) if rng.random() < 0.8 else self._zipf(GENERAL_NOUNS),
            "{Name}": lambda: self._zipf(NAMES), "{place}": lambda: self._zipf(PLACES),
            "{day}": lambda: rng.choice(DAYS), "{month}": lambda: rng.choice(MONTHS),
            "{number}": lambda: str(rng.choice([2, 3, 5, 10, 12, 20, 30, 45, 100, 250, rng.randint(1, 999)])),
            "{verb}": lambda: self._zipf(VERBS), "{verb2}": lambda: self._zipf(VERBS2),
            "{verbing}": lambda: self._zipf(VERBING), "{Rare}": lambda: self._zipf(self.rare),
            "{adj}": lambda: self._zipf(ADJECTIVES + self.topics["feelings"]),
            "{adv}": lambda: self._zipf(ADVERBS), "{Adv}": lambda: self._zipf(ADVERBS).title(),
            "{when}": lambda: rng.choice(["today", "tomorrow", "next week", "this weekend", f"on {rng.choice(DAYS)}",
                                          "after work", "in the morning", "soon"]),
        }
        while "{" in text:
            start = text.index("{")
            slot = text[start : text.index("}", start) + 1]
            text = text.replace(slot, fills[slot](), 1)
        if rng.random() < 0.025:
            text = text[:-1] + f" {self._zipf(self.rare)}" + text[-1]
        return text[0].upper() + text[1:]

    def turn(self, topic: str, mean_sentences: float) -> str:
        count = max(1, min(8, round(self.rng.lognormvariate(math.log(mean_sentences), 0.6))))
        return " ".join(self.sentence(topic) for _ in range(count))

    def session(self, key: str, start: dt.datetime, exchanges: int) -> Iterator[dict[str, object]]:
        rng = self.rng
        topic = rng.choice(list(TOPICS))
        named = rng.random() < 0.33
        speakers = rng.sample(NAMES, 2) if named else ["user", "assistant"]
        at = start
        for number in range(exchanges):
            if rng.random() < 0.15:
                topic = rng.choice(list(TOPICS))
            first_lines = 2 if rng.random() < 0.1 else 1
            for part in range(first_lines):
                at += dt.timedelta(seconds=rng.randint(20, 400))
                yield self._line(key, speakers[0], self.turn(topic, 1.6), at, f"{key}-{number}-{part}", named)
            at += dt.timedelta(seconds=rng.randint(5, 90))
            yield self._line(key, speakers[1], self.turn(topic, 1.6 if named else 2.4), at, f"{key}-{number}-r", named)

    @staticmethod
    def _line(session: str, speaker: str, text: str, at: dt.datetime, external_id: str,
              named: bool) -> dict[str, object]:
        side = {"speaker": speaker} if named else {"role": speaker}
        return {"session": session, **side, "text": text, "timestamp": at.isoformat(), "external_id": external_id}


def chat_lines(n: int, seed: int = 42) -> list[str]:
    """About ``n`` exchanges of chat as import JSON lines, sessions spread over the two years from November 2024."""
    gen = ChatGen(seed)
    start = dt.datetime(2024, 11, 1, tzinfo=dt.UTC)
    lines: list[str] = []
    made, index = 0, 0
    span_minutes = 2 * 365 * 24 * 60
    while made < n:
        size = min(n - made, gen.rng.randint(3, 40))
        at = start + dt.timedelta(minutes=span_minutes * made / max(n, 1))
        lines += [json.dumps(line) for line in gen.session(f"syn-{index}", at, size)]
        made += size
        index += 1
    return lines
