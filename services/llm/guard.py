"""The reply guard: between the stream and the client, it holds a reply to what the person asked for and, for a small
model, cuts the prompt's scaffolding it copied ("User: ...", "Chat history:", timestamps).

What the person asked for holds under every profile (``LLMProfile``): a refused thing is not offered, a person who asked
for the 24-hour clock gets "16:20", a clarifying reply asks its question. The rest repairs a small model's habits
(``scaffold``, the compact profile only): small models continue whatever shape the prompt has: given a labelled
transcript they write the next "User:" line, or echo a heading, or say the person's message back. A leading assistant
label ("Engram:") is dropped, and the reply is cut (and generation stopped) at the first line that starts with another
heading. A reply with nothing left is malformed, so the caller retries it like any other bad answer.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from difflib import SequenceMatcher

from services.errors import EchoedMessage, LLMMalformedOutput, NamesRefused
from services.llm.clock import settled, to_24_hour
from services.llm.output import StopStream
from services.text import STOPWORDS, WORD_RE, content_words, stem, words

ASSISTANT_LABEL = re.compile(r"^\s*(?:[#*>]+\s*)?(?:engram|assistant|ai|bot)\s*:\s*", re.IGNORECASE)
HEADING = re.compile(
    r"^\s*(?:[#*>\-]+\s*)?(?:"
    r"user|human|person|you|engram|assistant|system|"
    r"chat history|history|the conversation so far|conversation(?: so far)?|earlier in this conversation|"
    r"what you remember[^:\n]{0,40}|what you know[^:\n]{0,40}|notes[^:\n]{0,60}|memory|memories|"
    r"current topic|topic|current state|mode|today is[^:\n]{0,30}|"
    r"world state|actions(?: so far)?(?: this turn)?[^:\n]{0,20}|skills|rules|how to answer|how to write it|"
    r"instructions|answer format|the person's message|message"
    r")\s*:",
    re.IGNORECASE,
)
TIMESTAMP = re.compile(r"^\s*\[?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}")
FENCE = re.compile(r"^\s*</?\s*[a-z-]+\s*>", re.IGNORECASE)  # <memory>, </tool-results>: quoted prompt data
# A line start is held back while it could still turn into a heading: short, no punctuation but
# heading characters, no colon yet. Anything else is passed on at once (first-token time matters).
MAYBE_HEADING = re.compile(r"^\s*[#*>\-\[]*\s*[A-Za-z' ]{0,34}$|^\s*\[?[\d\-T :]{0,19}$")


def is_heading(line: str) -> bool:
    """Whether a line starts like a prompt heading, a transcript label or a transcript timestamp."""
    return any(pattern.match(line) is not None for pattern in (HEADING, TIMESTAMP, FENCE))


def clean_reply(text: str) -> str:
    """The reply without a leading assistant label and without anything from the first heading line on."""
    kept: list[str] = []
    for index, line in enumerate(text.split("\n")):
        if index == 0 or not any(part.strip() for part in kept):
            stripped = ASSISTANT_LABEL.sub("", line, count=1)
            if stripped != line:
                kept.append(stripped)
                continue
        if is_heading(line):
            break
        kept.append(line)
    return "\n".join(kept).strip()


class ScaffoldGuard:
    """Wraps a delta callback; passes on the reply as the person asked for it (and, with ``scaffold``, only text that
    cannot be scaffolding), stops the stream at what must not reach them."""

    def __init__(self, on_delta: Callable[[str], None], message: str = "",
                 refused: frozenset[str] = frozenset(), clock24: bool = False, must_ask: str = "",
                 scaffold: bool = True) -> None:
        """``message``: the person's message; a reply that starts by repeating it is sent without the repeat,
        and a reply that is nothing but the message said back is refused (``EchoedMessage``).
        ``refused``: what the person never wants offered; a reply naming it is stopped (``NamesRefused``).
        ``clock24``: the person asked for the 24-hour clock: "4:20 PM" is sent as "16:20" (services/llm/clock.py;
        a trailing "4:20" waits for the next chunk).
        ``must_ask``: the reply must ask the person something (a clarifying turn); one that asks nothing is replaced
        by this question (what went out is voided by the caller).
        ``scaffold``: repair a small model's scaffolding too (a leading label, prompt headings, the message said
        back); False under the full profile, whose replies are held to the three above only."""
        self.on_delta = on_delta
        self.message = message
        self.refused = refused
        self.clock24 = clock24
        self.must_ask = must_ask
        self.scaffold = scaffold
        self.echo = echo_words(message) if scaffold and len(echo_words(message)) >= ECHO_MIN_WORDS else []
        self.reset()

    def reset(self) -> None:
        """Start over (before a retry)."""
        self.raw = ""
        self.sent = ""
        self.cut = False
        self.kept: str | None = None  # the offer up to its alternatives the person can have (``offer_without``)
        self.rewritten = False

    def __call__(self, chunk: str) -> None:
        if self.cut:
            raise StopStream("reply cut at a prompt heading")
        self.raw += chunk
        thing = names_refused(PARTIAL_WORD.sub("", self.raw), self.refused)  # whole words only: "ham" of "hamster"
        if thing is not None:
            self.kept = offer_without(self.raw, self.refused, self.message)
            if self.kept is None:
                raise NamesRefused(thing, PARTIAL_WORD.sub("", self.raw))
            raise StopStream("reply cut before a refused thing")
        if not self.scaffold:  # as written, up to its last whole word (the next may yet be a refused thing)
            shown = PARTIAL_WORD.sub("", self.raw) if self.refused else self.raw
            self._send_up_to(shown.strip() + (" " if shown.endswith(" ") and shown.strip() else ""))
            return
        visible = without_echo(self.raw, self.echo)
        if visible is None:  # so far the reply repeats the person's message: hold it back
            return
        lines = visible.split("\n")
        complete, current = lines[:-1], lines[-1]
        safe = clean_reply("\n".join(complete)) if complete else ""
        if complete and self._cut_inside(complete):
            self._send_up_to(safe)
            self.cut = True
            raise StopStream("reply cut at a prompt heading")
        if MAYBE_HEADING.match(current) and (current.strip() or not complete):
            self._send_up_to(safe + ("\n" if complete and safe else ""))
            return
        if is_heading(current) and (complete or not ASSISTANT_LABEL.match(current)):
            self._send_up_to(safe)
            self.cut = True
            raise StopStream("reply cut at a prompt heading")
        self._send_up_to(clean_reply(visible) if not visible.endswith(" ") else clean_reply(visible) + " ")

    def finish(self, text: str) -> str:
        """The final reply text; ``LLMMalformedOutput`` when only scaffolding or the message itself was written."""
        if self.scaffold:
            unechoed = without_echo(text, self.echo)
            if (not unechoed and clean_reply(text)) or says_back(clean_reply(unechoed or ""), self.message):
                raise EchoedMessage("the reply only repeated the person's message")
            if not clean_reply(unechoed or ""):
                raise LLMMalformedOutput("the reply only repeated the prompt's headings")
        cleaned = self._repaired(self.kept if self.kept else text)
        thing = names_refused(cleaned, self.refused)
        if thing is not None:
            cleaned = offer_without(cleaned, self.refused, self.message) or ""
            if not cleaned:
                raise NamesRefused(thing, text)
        cleaned = to_24_hour(cleaned) if self.clock24 else cleaned
        if self.must_ask and "?" not in cleaned:  # "Sure, I'll save it for you." when nothing can be saved yet
            cleaned = self.must_ask
        self.rewritten = not cleaned.startswith(self.sent)  # cut back before what went out (the caller voids it)
        tail = cleaned[len(self.sent):] if not self.rewritten else ""
        if tail:
            self.on_delta(tail)
            self.sent += tail
        return cleaned

    def _repaired(self, text: str) -> str:
        """``text`` without the scaffolding and the repeat of the message (when ``scaffold``), stripped."""
        return clean_reply(without_echo(text, self.echo) or "") if self.scaffold else text.strip()

    def _cut_inside(self, lines: list[str]) -> bool:
        for index, line in enumerate(lines):
            if is_heading(line) and not (index == 0 and ASSISTANT_LABEL.match(line)):
                return True
        return False

    def _send_up_to(self, text: str) -> None:
        text = settled(text) if self.clock24 else text
        if text.startswith(self.sent) and len(text) > len(self.sent):
            self.on_delta(text[len(self.sent):])
            self.sent = text


ECHO_MIN_WORDS = 3  # "Hello" answered with "Hello!" is a greeting, not an echo
# A reply whose words are this much the message's, in order, says the message back ("I play tennis at the
# club" → "You play tennis at the club"), even when it adds a few words of its own.
ECHO_RATIO = 0.75
_WORD = re.compile(r"[a-z0-9']+")
# The person's words and the same words said back to them compare equal: "I'm" and "you're" are one word.
_PERSON = {"i": ["@p"], "you": ["@p"], "me": ["@p"], "u": ["@p"], "myself": ["@p"], "yourself": ["@p"],
           "my": ["@ps"], "your": ["@ps"], "mine": ["@ps"], "yours": ["@ps"], "am": ["are"],
           "i'm": ["@p", "are"], "you're": ["@p", "are"], "i've": ["@p", "have"], "you've": ["@p", "have"],
           "i'd": ["@p", "would"], "you'd": ["@p", "would"], "i'll": ["@p", "will"], "you'll": ["@p", "will"]}


def echo_words(text: str) -> list[str]:
    """The lower-case words the echo check compares, the person's "I" and "you" made one."""
    return [part for word in _WORD.findall(text.lower().replace("\u2019", "'")) for part in _PERSON.get(word, [word])]


def says_back(reply: str, message: str) -> bool:
    """Whether ``reply`` is the person's message said back to them, whole or nearly, in either person."""
    said, answered = echo_words(message), echo_words(reply)
    if len(said) < ECHO_MIN_WORDS or not answered:
        return False
    return SequenceMatcher(None, said, answered, autojunk=False).ratio() >= ECHO_RATIO


def without_echo(text: str, echo: list[str]) -> str | None:
    """``text`` without a leading repeat of the message whose words are ``echo``; None while it may still be one.

    A small model sometimes answers a message by writing it back ("I have a dog called Pixel" → "I have a
    dog called Pixel."): the repeat is dropped, and a reply that was nothing else is malformed (retried).
    """
    if not echo:
        return text
    said = echo_words(text)
    if said == echo[: len(said)]:
        # Still a prefix of the message, or exactly the message: nothing of the reply proper yet.
        return None if len(said) < len(echo) or not text.rstrip().endswith(tuple(".!?")) else ""
    if said[: len(echo)] != echo:
        return text
    count = 0  # cut after the character that ends the echo's last word
    for match in _WORD.finditer(text.lower().replace("\u2019", "'")):
        count += len(_PERSON.get(match.group(), [match.group()]))
        if count >= len(echo):
            return text[match.end():].lstrip(" .!?,;:-\n")
    return text


PARTIAL_WORD = re.compile(r"[A-Za-z'-]+$")
SENTENCE_END = re.compile(r"[.!?](?:\s+|$)|\n+")
# Where one alternative of an offer ends: "herbal tea or a cup of coffee", "fruit, yogurt and a cake".
# Not a bare comma: "For a long road trip, try some country" has no alternative before the country.
ALTERNATIVE = re.compile(r",?\s+(?:or|and|with|plus)\s+")
LIST_MARKER_END = re.compile(r"\s*(?:\d{1,2}[.)]|[-*•]|\*\*)\s*$")  # a numbered or bulleted line not yet begun
OFFER_WORDS = 3  # what stays of a cut offer says at least this much ("You could try rooibos.")
PREFIX_CHARS = 5  # a refused stem this long also matches words it begins ("anchov" in "anchovies")
# "Here is a dinner without mushrooms" names the thing only to leave it out; "veggie burgers", "gluten-free toast"
# and "an oat milk latte" offer a kind of it the person can have.
LEFT_OUT = (r"\b(?:without|no|not|free of|instead of|skip(?:ping)?|avoid(?:ing)?|leave out|leaving out|veggie|vegan|"
            r"vegetarian|plant-based|meat-free|meatless|gluten-free|dairy-free|lactose-free|non-alcoholic|alcohol-free|"
            r"oat milk|oat|soy|almond|coconut|decaf)\s+(?:any\s+)?")


def names_refused(reply: str, refused: frozenset[str]) -> str | None:
    """The first thing of ``refused`` (word stems, services/memory/refusals.py) the reply offers, or None."""
    found = _refused_at(reply, refused)
    return found[0] if found is not None else None


def _refused_at(reply: str, refused: frozenset[str]) -> tuple[str, int] | None:
    """The first refused thing the reply offers and where its word begins."""
    if not refused:
        return None
    lowered = reply.lower().replace("\u2019", "'")
    for match in WORD_RE.finditer(lowered):
        word = match.group()
        stemmed = stem(word)
        for thing in refused:
            # A short stem must be the whole word ("ham", not "hamster"; "cod", not "code").
            named = stemmed == thing or (len(thing) >= PREFIX_CHARS and word.startswith(thing))
            if named and not _left_out(word, lowered):
                return thing, match.start()
    return None


def offer_without(reply: str, refused: frozenset[str], asked: str = "") -> str | None:
    """The reply up to the alternative before the first refused thing, when what stays still offers something:
    "You can try herbal tea or a cup of coffee" → "You can try herbal tea." (the 1.5B offered the coffee again when
    asked to write the reply over); None when nothing would stay ("How about a chocolate cake?"), or when what stays
    only says the person's ``asked`` message back ("trivia night at the pub tonight, what should I drink" → "For
    trivia night at the pub. I'd go for a cold beer" kept "For trivia night at the pub.", which offers nothing)."""
    found = _refused_at(reply, refused)
    if found is None:
        return None
    before = reply[: found[1]]
    sentence_start = max((m.end() for m in SENTENCE_END.finditer(before)), default=0)
    breaks = [m for m in ALTERNATIVE.finditer(before) if m.start() > sentence_start]
    end = breaks[-1].start() if breaks else sentence_start
    kept = LIST_MARKER_END.sub("", before[:end]).rstrip(" ,;-\n")
    if kept.endswith(":"):  # "Here's a simple dinner idea:\n1." announced an offer the cut took away
        return None
    last = re.split(r"[.!?\n]", kept)[-1] if breaks else ""
    enough = len(words(kept)) >= OFFER_WORDS and (not breaks or set(words(last)) - STOPWORDS)
    # Whole sentences kept (no alternative before the refused thing) must say more than the question did.
    if not enough or (not breaks and not set(content_words(kept)) - set(content_words(asked))):
        return None
    return kept if kept.endswith((".", "!", "?")) else kept + "."


# A kind of place named by what it serves: "at a seafood restaurant, order the grilled fish" offers no seafood (asked
# what to order at one, with shellfish refused, every reply was cut at "seafood" and nothing stayed).
VENUE = (r"\s+(?:restaurants?|bars?|places?|shops?|joints?|shacks?|caf[eé]s?|stands?|trucks?|stalls?|markets?|"
         r"buffets?|counters?|spots?)\b")


def _left_out(word: str, reply: str) -> bool:
    """The word names its thing to leave it out ("without mushrooms"), a kind without it ("gluten-free"), or a place
    serving it ("a sushi bar")."""
    return (word.endswith(("-free", "-less")) or re.search(LEFT_OUT + re.escape(word), reply) is not None
            or re.search(re.escape(word) + r"(?:[ -](?:free|less)\b|" + VENUE + ")", reply) is not None)
