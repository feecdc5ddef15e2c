"""Smaller JSON shapes for small models (the compact profile), turned into the full chunk and episode.

SmolLM2-135M under the full chunk schema (six keys, nested fact objects, a 0–1 number) copied the
prompt's example and ran out of tokens inside a string. These schemas ask only for what it can
write — a sentence, a few fact sentences, an importance word — with string lengths and item
counts bounded by the grammar so the object always closes. The rest of the full shape is
derived here, and a fact whose words the person never said is dropped.
"""

from __future__ import annotations

import re
from typing import Any

from services.memory.chunks import ChunkInvalid, validate_chunk
from services.memory.episodes import validate_episode
from services.text import grounding, truncate

IMPORTANCE = {"low": 0.2, "medium": 0.5, "high": 0.8}
MIN_FACT_GROUNDING = 0.6  # share of a fact's content words the person's message must contain
MIN_GIST_GROUNDING = 0.3  # a gist paraphrases: some of its words must come from the message
MIN_SUMMARY_GROUNDING = 0.5  # an episode's summary retells the conversation: most of its words come from it
FACT_START = ("the user ", "the user's ", "user ")
GIST_CHARS = 160
NOT_A_FACT = re.compile(r"\b(?:asked|asks|wants to know|requested|wondered|said thanks)\b|\?", re.IGNORECASE)
SMALL_FACT_CONFIDENCE = 0.7
MIN_OTHER_GROUNDING = 0.8  # a fact about someone the person named keeps closer to their words
REQUEST = re.compile(r"^(?:(?:hey|hi|ok|okay|so)[, ]+)?(?:please\s+)?(?:(?:can|could|would|will) you\s+)?(?:please\s+)?"
                     r"(?:add|put|remove|delete|remind|schedule|set|show|tell|give|read|list|cancel|move|mark|"
                     r"write|find|suggest|recommend|make|book|check)\b", re.IGNORECASE)
SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
# Capitalised words after the first (names, places, months) and numbers.
NAME_OR_NUMBER = re.compile(r"\b(?:[A-Z][a-zA-Z'-]+|\d[\d:./-]*)")
NOT_NAMES = frozenset({"the", "user", "user's", "i", "i'm", "i've", "i'd", "i'll"})
FIRST_PERSON = [(re.compile(r"\bI am\b|\bI'm\b"), "the user is"), (re.compile(r"\bI've\b"), "the user has"),
                (re.compile(r"\bI'll\b"), "the user will"), (re.compile(r"\bI'd\b"), "the user would"),
                (re.compile(r"\bI\b"), "the user"), (re.compile(r"\b[Mm]y\b"), "the user's"),
                (re.compile(r"\b[Mm]e\b"), "the user"), (re.compile(r"\b[Mm]yself\b"), "the user")]

SMALL_CHUNK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "gist": {"type": "string", "minLength": 3, "maxLength": 160},
        "facts": {"type": "array", "items": {"type": "string", "minLength": 8, "maxLength": 120}, "maxItems": 3},
        "importance": {"type": "string", "enum": list(IMPORTANCE)},
    },
    "required": ["gist", "facts", "importance"],
}

SMALL_EPISODE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "minLength": 3, "maxLength": 60},
        "summary": {"type": "string", "minLength": 10, "maxLength": 400},
        "importance": {"type": "string", "enum": list(IMPORTANCE)},
    },
    "required": ["title", "summary", "importance"],
}


def chunk_from_small(data: Any, user_text: str) -> dict[str, Any]:
    """The full chunk from a small one; facts not grounded in the person's message are dropped."""
    if not isinstance(data, dict):
        raise ChunkInvalid("a chunk must be a JSON object")
    facts = data.get("facts") or []
    if not isinstance(facts, list):
        raise ChunkInvalid("facts must be a list of sentences")
    # A message of questions only states nothing about the person, whatever a small model makes of it
    # ("What is my dog's name?" → "The user's dog's name is Tom").
    tells = any(_tells(sentence) for sentence in SENTENCE.split(user_text) if sentence.strip())
    candidates = (_in_third_person(fact) for fact in facts if isinstance(fact, str)) if tells else ()
    grounded = list(dict.fromkeys(fact for fact in candidates if _usable_fact(fact, user_text)))
    gist = data.get("gist")
    if not isinstance(gist, str) or grounding(gist, user_text) < MIN_GIST_GROUNDING:
        # A small model sometimes writes a gist about something else entirely; the person's own words are
        # a truer gist than that.
        gist = f"The user said: {truncate(' '.join(user_text.split()), GIST_CHARS)}"
    return validate_chunk({
        "gists": [gist],
        "facts": [{"text": fact, "speaker": "user", "confidence": SMALL_FACT_CONFIDENCE} for fact in grounded],
        "entities": [],
        "emotion": "neutral",
        "salience": _importance(data),
        "open_loops": [],
    })


# What opens a sentence without telling anything: "Hi!", "Oh and", "Big news:", "By the way".
LEAD_IN = re.compile(r"^(?:(?:(?:hi|hello|hey|hallo)(?: there)?|(?:good )?(?:morning|afternoon|evening)|oh|and|also|so|"
                     r"well|ok|okay|anyway|btw|by the way|big news|guess what|fun fact|update|news)"
                     r"\b[\s,:;!.\-\u2013\u2014]*)+", re.IGNORECASE)
# The person speaking of themselves ("I", "my", "we"), or of someone they name first ("Kuba is seven").
SPEAKS_OF_SELF = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine|we|we're|we've|our|us)\b"
                            r"|^the (?:grand)?(?:kids|children|twins|boys|girls|family|parents)\b", re.IGNORECASE)
NAMED_FIRST = re.compile(r"^[A-Z][a-z'-]+(?:\s+[A-Z][a-z'-]+)?\s+(?:is|are|was|has|had|lives|works|plays|loves|"
                         r"likes|turns|turned|starts|started|goes|went)\b")
# A question typed without its question mark ("what's on my camping list") tells nothing either.
ASKS = re.compile(r"^(?:what|what's|whats|where|where's|when|when's|who|who's|why|how|which|do|does|did|is|are|can|"
                  r"could|would|will|should|have|has|am)\b", re.IGNORECASE)
# A new clause about the person is a fact of its own: "I have a dog called Rufus and I work as a nurse".
# A new clause about the person is a fact of its own: "I have a dog called Rufus and I work as a nurse" (not
# "Sam and I are going": a plural verb means "I" shares the subject).
CLAUSE = re.compile(r"(?:,\s*(?:and |but |so )?|\s+(?:and|but|so)\s+)"
                    r"(?=(?:i'm|i've|i'd|i\s+(?!are\b|were\b|and\b)\w+)\b)", re.IGNORECASE)
WORDS_FACTS = 4
WORDS_FACT_CHARS = 240
WORDS_SALIENCE = 0.5


def chunk_from_words(user_text: str, speaker: str | None = None) -> dict[str, Any]:
    """The chunk of a message read without a model: each sentence in which the person tells something about
    themselves (or someone they name) is a fact, in their words, said of "the user".

    Measured on the answers bench's scenarios, a 0.5B model's facts dropped what was said ("The user in the
    mortgage department"), turned requests into facts ("Oat milk") and took 40 s a message on loaded cores
    (each one a wait for the chat turn behind it); the person's own sentence is true by construction and
    attributed right, and supersession (services/memory/facts.py) works on it as on any fact.

    ``speaker``: the name of who said it, when the message is a named person's turn of an imported conversation
    between people (``chunk_from_lines``): "I" is then that person, not the account's owner.
    """
    facts: list[str] = []
    clauses = (clause for sentence in SENTENCE.split(" ".join(user_text.split())) for clause in CLAUSE.split(sentence))
    for sentence in clauses:
        sentence = LEAD_IN.sub("", sentence.strip()).strip()
        if len(sentence.split()) < 2 or not _tells(sentence) or ASKS.match(sentence):
            continue
        if SPEAKS_OF_SELF.search(sentence) is None and NAMED_FIRST.match(sentence) is None:
            continue
        fact = truncate(_in_third_person(sentence.rstrip(".!"), speaker), WORDS_FACT_CHARS)
        if fact not in facts:
            facts.append(fact)
    gist = f"{speaker or 'The user'} said: {truncate(' '.join(user_text.split()), GIST_CHARS)}"
    return validate_chunk({
        "gists": [gist],
        "facts": [{"text": fact, "speaker": "user", "confidence": SMALL_FACT_CONFIDENCE}
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


def _tells(sentence: str) -> bool:
    """A sentence that states something: not a question, not a request ("Add milk to my list" is no fact)."""
    return not sentence.rstrip().endswith("?") and REQUEST.match(sentence.strip()) is None


def _in_third_person(fact: str, speaker: str | None = None) -> str:
    """"Sam and I are going to Japan" → "Sam and the user are going to Japan": the facts speak of "the user"
    (of ``speaker`` by name when given: "Caroline and Sam are going to Japan")."""
    fact = " ".join(fact.split())
    for pattern, replacement in FIRST_PERSON:
        fact = pattern.sub(replacement.replace("the user", speaker) if speaker else replacement, fact)
    return fact[:1].upper() + fact[1:]


def _usable_fact(fact: str, user_text: str) -> bool:
    """A sentence about the user (or someone they named), not about their question, made of words they said.

    Every name and number in it must be the person's own: a small model fills a fact with a name from
    its examples or its imagination ("The user's dog's name is Tom").
    """
    if not fact or NOT_A_FACT.search(fact):
        return False
    said = {word.lower() for word in NAME_OR_NUMBER.findall(user_text)}
    if any(word.lower() not in said for word in NAME_OR_NUMBER.findall(fact[1:]) if word.lower() not in NOT_NAMES):
        return False
    if fact.lower().startswith(FACT_START):
        return grounding(fact[len("the user"):], user_text) >= MIN_FACT_GROUNDING
    # "Ana's birthday is on 14 March": about someone the person named, in their words.
    first = NAME_OR_NUMBER.match(fact)
    return first is not None and first.group().lower() in said and grounding(fact, user_text) >= MIN_OTHER_GROUNDING


def episode_from_small(data: Any, evidence: str | None = None) -> dict[str, Any]:
    """The full episode from a small one (its summary's first sentence is the gist).

    ``evidence``: the conversation's text; a summary made mostly of other words is refused. A 0.5B model
    wrote the prompt's example ("started a pottery class on Monday") as the summary of unrelated talks.
    """
    if not isinstance(data, dict):
        raise ChunkInvalid("an episode must be a JSON object")
    summary = data.get("summary") if isinstance(data.get("summary"), str) else ""
    if evidence is not None and grounding(summary, evidence) < MIN_SUMMARY_GROUNDING:
        raise ChunkInvalid("the summary must tell what was said in this conversation, in its words")
    gist = summary.split(". ")[0].strip()
    return validate_episode({"title": data.get("title"), "gist": gist, "summary": summary, "intent": "",
                             "emotion": "", "outcome": "", "salience": _importance(data), "open_loops": []})


def _importance(data: dict[str, Any]) -> float:
    value = data.get("importance")
    if value not in IMPORTANCE:
        raise ChunkInvalid(f"importance must be one of {', '.join(IMPORTANCE)}, got {value!r}")
    return IMPORTANCE[str(value)]
