"""Changes to a list told in one message, read without a model: items taken off, and items added in the same breath.

"Take the glue gun off the costume list, my neighbour Latifa will lend me hers. And add safety pins." reached the
small-model planner, which takes one action a turn: it asked to confirm the removal and the safety pins were never
added. Each sentence here that changes a list is one action; a sentence that names no list ("And add safety pins.")
changes the list the sentence before named; news between them asks nothing; any other request leaves the whole
message to the planner.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from services.act.fastpath import ADD_VERBS, AFTER_LIST, LIST_ADD, NAMED_LIST, REMOVE_VERBS
from services.act.list_items import POINTER_ITEM, SAYS_SOMETHING, as_typed, said_items
from services.act.request_words import ASKS_SOMETHING, POLITE, PlainAction
from services.text import SENTENCE_BREAK

# "take the glue gun off the costume list", "cross bread off my shopping list", "remove the tent from the camping list".
# "cross off the eggs": the particle may come before the items.
_REMOVE_VERB = rf"(?:do\s+)?(?P<verb>{REMOVE_VERBS})\s+(?:(?P<before>off|out)\s+)?"
# Verbs that remove only with their particle: "take the bucket off", never "take a look at these".
_PARTICLE_VERBS = ("take", "tek", "cross", "knock")
# A reason run on after the list's name with no stop between: "take the rug off my apartment list jess has one".
_RUN_ON = (r"(?:\s+(?!(?:for|with|of|and|to|on|in|at|from|called|named|please|pls|too)\b)[^\W\d_][\w']*\s+"
           r"(?:has|have|had|is|are|was|were|says|said|got|gave|lent|will|can|already|doesn't|don't|did)\b[^?]*)?")
LIST_REMOVE = re.compile(POLITE + _REMOVE_VERB + r"(?P<items>.+?)\s+"
                         # A learner's "of" for "from": "Remove the sunscreen of my Chiloé list".
                         r"(?:off(?: of)?|from|out of|of(?=\s+(?:my|our)\s))\s+" + NAMED_LIST + _RUN_ON + AFTER_LIST)
# "take the bucket off", "remove the pinata, Sami says it's too messy": items taken off the list named before.
# "take the soda off the list" with no list named before: the list holding the soda.
REMOVE_FROM_THE_SAME = re.compile(POLITE + _REMOVE_VERB + r"(?P<items>[^.?!]+?)"
                                  r"(?:\s+(?P<after>off|out)(?:\s+(?:of\s+)?(?:it|that|(?P<off>the list)|that list|"
                                  r"this list))?|\s+from\s+(?:it|that|(?P<from>the list)|that list|this list))?"
                                  + AFTER_LIST)
# One item for another: "swap the eggs for tofu on my shopping list", "replace the eggs with tofu on the shopping list".
LIST_SWAP = re.compile(POLITE + r"(?:swap|switch|change|replace|exchange)\s+(?P<old>.+?)\s+(?:for|with|to)\s+"
                       r"(?P<new>.+?)\s+(?:on|in)\s+" + NAMED_LIST + AFTER_LIST)
# One thing wanted in place of another: "Nikos doesn't want headphones anymore, he wants a gaming
# mouse, put that instead", "change of plan on the gifts: Mia no longer wants the bike, she'd rather have a scooter".
WANTS_INSTEAD = re.compile(
    r"^(?:(?P<lead>[^:]{1,40}):\s*)?(?P<who>[^\W\d_][\w'-]*(?:\s+[^\W\d_][\w'-]*)?)\s+"
    r"(?:doesn't|does not|don't|do not|no longer|won't)\s+(?:wants?|needs?|likes?)\s+(?:the\s+|any\s+)?"
    r"(?P<old>[^,;]+?)(?:\s+(?:any ?more|after all|now))?\s*(?:,|;|\s-)\s*(?:but\s+|so\s+|and\s+|now\s+)*"
    r"(?:[^\W\d_][\w'-]*\s+)?(?:wants|want|would (?:rather|prefer|like)|rather|prefers|prefer|needs|is after)"
    r"(?:\s+(?:to\s+)?have)?\s+(?P<new>[^,;]+?)(?:\s+(?:instead|now))?"
    r"(?:\s*,?\s*(?:so\s+)?(?:(?:please|pls)\s+)?(?:put|add|get)\s+(?:that|it|this|one)(?:\s+(?:on\s+)?instead)?"
    r"(?:\s+(?:on|onto|to)\s+" + NAMED_LIST + r")?(?:\s+instead)?)?\W*$")
# The list a swap's lead-in names: "change of plan on the gifts", "update for the party list".
_LEAD_LIST = re.compile(r"\b(?:on|for|about|re|with)\s+(?:the|my|our)\s+(?P<name>[^\W\d_][\w' -]{0,30}?)(?:\s+list|s)$")
# Told, not asked: "no need for the tent on the camping list anymore", "we don't need milk on the shopping list now",
# "the tent can come off the camping list".
NO_LONGER_NEEDED = re.compile(r"^(?:(?:there's|there is)\s+)?(?:no need for|(?:i|we) (?:don't|do not|no longer) "
                              r"need)\s+(?P<items>.+?)\s+(?:on|in)\s+" + NAMED_LIST
                              + r"(?:\s+(?:any ?more|now|after all))?" + AFTER_LIST)
COMES_OFF = re.compile(r"^(?P<items>(?!(?:it|that|this|they|them)\b)[^,;]+?)\s+(?:can|could|should|must)\s+"
                       r"(?:come|go|be taken|be crossed)\s+off(?:\s+of)?\s+" + NAMED_LIST + AFTER_LIST)
# The list a message is about, named on its own ("boat list. take the bucket off. …") or before the changes ("for the
# party list remove the pinata, …"): one to three words of a name, never a sentence that only ends in "list".
# "pasalubong list change: remove the polvoron", "garden list update: …".
LIST_TOPIC = re.compile(r"^(?:(?:for|on|about|re|with|in)\s+)?(?:(?:my|the|our)\s+)?"
                        r"(?!(?:i|you|we|he|she|they|it|this|that|a|an)\b)"
                        r"(?P<name>[^\W\d_][\w'-]*(?:\s+[^\W\d_][\w'-]*){0,2}?)\s+list\b"
                        r"(?:\s+(?:changes?|updates?|edits?)\b)?\s*[:,\-\u2013\u2014]?\s*(?P<rest>.*)$")
# What a message is about, said before its change: "About the harambee, take the soda off the list", "As for Saturday,
# cross the charcoal off the list".
_ABOUT = r"^(?:about|re|regarding|as for|as to|for)\s+(?:(?:the|my|our)\s+)?(?P<topic>[^\W\d_][^,:;.]{0,30}?)"
_LEAD = re.compile(_ABOUT + r"\s*(?:,|:|\s[-\u2013\u2014])\s*(?P<rest>\S.*)$")
_LEAD_ALONE = re.compile(_ABOUT + r"[\s,:.!-]*$")  # ... a sentence of its own (``_AND_THEN`` splits before "take")
_REQUEST_IN_NAME = re.compile(r"\b(?:add|put|take|remove|delete|cross|create|make|start|show|read|what|whats)\b")
# "and add safety pins", "put a torch on too": items with no list named, after a sentence that named one.
# "put batteries on it for the radio while you're at it": what follows "on it" says what for, not what.
ADD_TO_THE_SAME = re.compile(POLITE + rf"(?:do\s+)?(?:{ADD_VERBS})\s+(?P<items>[^.?!]+?)"
                             r"(?:\s+(?:on|to|onto) (?:it|that|the list|that list|this list)"
                             r"(?:\s+(?:for|while)\b[^.?!]*)?|\s+on)?"
                             r"(?:\s+(?:too|as well|also|please|pls|instead))*\W*$")
# "remove the tent from the camping list and add a tarp": a second change joined by "and".
# "remove the compost, add bark chips": a change after a comma (not "…, put that instead": the swap's own).
_AND_THEN = re.compile(r",?\s+(?:and|then|and then|&)\s+(?=(?:add|put|take|cross|remove|delete)\b)"
                       r"|,\s+(?=(?:add|put|take|cross|remove|delete)\s+(?!(?:that|it|this|one|them)\b))"
                       # "I already got the charger, so take it off the packing list": news, then the change.
                       # "the watch for papa, remove it from …", "The big speaker - cross it off …": the thing, then it.
                       # "ciara buys the toilet roll from now on so take it off …": no comma before the "so".
                       r"|(?:(?:,|\s[-\u2013\u2014])\s*(?:so\s+)?|\s+so\s+)"
                       r"(?=(?:please\s+|pls\s+)?(?:take|cross|remove|delete|strike)\s+(?:it|that)\b)"
                       # "The tailor messed up the red costume, the colour ran, so take the red costume off …"
                       r"|,\s*so\s+(?=(?:please\s+|pls\s+)?(?:take|cross|remove|delete|strike|add|put)\b)")
# "right the messages list, …", "Instead put honey butter chips": no part of what the sentence asks.
# A word that takes back what was just said: "put piaya instead... ay wait piaya is FROM iloilo haha".
_TAKEN_BACK = re.compile(r"\b(?:wait|actually|scratch that|on second thoughts?|never ?mind|nvm)\b")
_OPENING = re.compile(r"^(?:(?:and|also|oh|ok|okay|so|then|plus|but|right|alright|instead|anyway)[, ]+)+")
MAX_ITEMS = 10
_ONE_THING = ("it", "that", "this", "that one", "this one")


# A proper name typed before a pointer: "I have decided against Middlemarch; please remove it from my reading list."
# ... or a thing got, bought or found just before it: "got the sunscreen already, cross it off".
# ... or by someone else from now on: "ciara buys the toilet roll from now on", "mum's bringing the cake", "Tom has the
# charcoal" (the thing they see to, with what may follow it: "already", "from now on", "herself").
_GOT_THING = re.compile(r"\b(?:(?:got|gets|get|getting|bought|buys|buy|buying|picked up|picks up|found|brings|bring|"
                        r"bringing|brought|sorted|sorts|covers|covering|covered|ordered|orders)\s+"
                        r"(?:the\s+|some\s+|a\s+|an\s+|my\s+)?"
                        r"|(?:has|have|had)\s+(?:the|some|a|an|my)\s+)"  # (not "I have gone off Moby Dick")
                        r"(?P<thing>[^\W\d_][\w' -]{0,30}?)(?:\s+(?:already|from now on|now|herself|himself|"
                        r"themselves|for us|anyway|(?:this|next) (?:week|time)))*\s*$")
# ... or a thing said alone just before: "the watch for papa, remove it from the pasalubong list".
_THING_ALONE = re.compile(r"^(?:the|that|this|those|these|my|our)\s+(?P<thing>[^\W\d_][\w' -]{0,40}?)[\s,.!]*$")
_THING_WORDS = 5
_PROPER_NAME = re.compile(r"\b[A-Z][\w'\u2019-]*(?:\s+(?:(?:of|the|and|de|la|von|van)\s+)*[A-Z][\w'\u2019-]*)*")
_CLAUSE_BREAK = re.compile(r";\s+")


def list_edits(text: str, signals: dict[str, Any], holding: Callable[[str], str | None] | None = None
               ) -> list[PlainAction]:
    """The list changes the message asks for, in order, or none (the model plans it): a removal, or two or more
    changes. One change that only adds is the fast path's (``fastpath.plain_action``). ``holding``: the name of the
    one list of the person's holding an item (a swap that names no list is on it)."""
    if not signals.get("skill_list"):
        return []
    lowered = " ".join(text.replace("\u2019", "'").lower().split())
    edits: list[PlainAction] = []
    named: str | None = None
    said: list[str] = []
    waiting: tuple[str, str] | None = None  # a swap whose list is named after it ("… And add perfume to the gift list")
    for sentence in _sentences(lowered):
        wanted = WANTS_INSTEAD.match(sentence)
        name = wanted and _swap_list(wanted, named, holding)
        if wanted and not name:
            waiting = (wanted["old"], wanted["new"])
            said.append(sentence)
            continue
        found = (_changes(("remove", name, wanted["old"]), ("add", name, wanted["new"])) if wanted
                 else _sentence_edit(sentence, named, text, said, holding))
        if wanted and not found:
            return []
        if found and waiting:
            found = [*_changes(("remove", found[0].arguments["name"], waiting[0]),
                               ("add", found[0].arguments["name"], waiting[1])), *found]
            waiting = None
        said.append(sentence)
        topic = _topic(sentence) if not found else None
        if topic is not None:
            named, rest = topic
            if rest.strip(" .!"):
                found = _edit(rest, named)
                if not found:
                    return []  # a name, then something these sentences do not read
        if found:
            edits.extend(found)
            named = found[-1].arguments["name"]
        elif topic is None and ASKS_SOMETHING.search(sentence):
            return []  # a request these sentences do not read
        else:
            before, edits = edits, _taken_back(edits, sentence)  # "put piaya instead... ay wait piaya is FROM iloilo"
            edits += _never_minded(sentence, named, before)  # "nvm the usb stick, found my old one"
    if waiting:
        return []  # a swap on no list named or found: the planner asks
    removes = any(edit.arguments["operation"] == "remove" for edit in edits)
    if not (removes or len(edits) > 1):
        return []
    return [PlainAction("list", {**edit.arguments, "items": as_typed(edit.arguments["items"], text)})
            for edit in edits]


def _sentence_edit(sentence: str, named: str | None, text: str, said: list[str],
                   holding: Callable[[str], str | None] | None) -> list[PlainAction]:
    """The changes a sentence asks for, on the list it names or the one named before."""
    found = _edit(sentence, named) or _edit_of_a_pointer(sentence, text, said)
    alone = _LEAD_ALONE.match(said[-1]) if said else None
    return found or (_edit_after_a_lead(sentence, holding, alone and alone["topic"]) if named is None else [])


def _edit_after_a_lead(sentence: str, holding: Callable[[str], str | None] | None, about: str | None = None
                       ) -> list[PlainAction]:
    """The change of a sentence that names no list before it: after what it is about (``about``, or "About the
    harambee, take the soda off the list, …"), on the list it names, else off the list holding the items, else the one
    it is about."""
    lead = _LEAD.match(sentence)
    rest, topic = (lead["rest"], lead["topic"]) if lead else (sentence, about)
    found = _edit(rest, None) if lead else []
    removed = REMOVE_FROM_THE_SAME.match(rest)
    if found or not removed or not (removed["off"] or removed["from"]):
        return found
    things = said_items(removed["items"])
    held = {holding(thing) for thing in things} if holding is not None and things else {None}
    name = (held.pop() if len(held) == 1 else None) or topic
    return _changes(("remove", name, removed["items"])) if name else []


def _taken_back(edits: list[PlainAction], sentence: str) -> list[PlainAction]:
    """The changes without the items the last one added that ``sentence`` takes back ("wait piaya is FROM iloilo")."""
    last = edits[-1].arguments if edits else {}
    if last.get("operation") != "add" or not _TAKEN_BACK.search(sentence):
        return edits
    kept = [item for item in last["items"] if not re.search(rf"\b{re.escape(item)}\b", sentence)]
    return edits[:-1] + ([PlainAction("list", {**last, "items": kept})] if kept else [])


# "nvm the usb stick, found my old one under the bed": a thing on the list named before, no longer wanted.
_NEVER_MIND = re.compile(r"^(?:nvm|never ?mind|forget(?: about)?)\s+(?P<items>(?:the|my|those|that)\s+[^,;.!?]+?)"
                         r"(?:\s*[,;:\-\u2013\u2014].*)?$")


def _never_minded(sentence: str, named: str | None, edits: list[PlainAction]) -> list[PlainAction]:
    """The removal a "never mind the …" asks of the list named before, unless it takes back an item just added."""
    minded = _NEVER_MIND.match(sentence) if named else None
    added = {item for edit in edits if edit.arguments["operation"] == "add" for item in edit.arguments["items"]}
    if minded is None or any(re.search(rf"\b{re.escape(item)}\b", minded["items"]) for item in added):
        return []
    return _changes(("remove", named, minded["items"]))


def swapped_item(text: str) -> str | None:
    """The one thing a swap said with no list takes off ("Nikos doesn't want headphones anymore, he wants a gaming
    mouse": headphones), else None: when a list of the person's holds it, the message changes that list (the router,
    reading the words alone, hears news)."""
    lowered = " ".join(text.replace("\u2019", "'").lower().split())
    for sentence in _sentences(lowered):
        wanted = WANTS_INSTEAD.match(sentence)
        if wanted and not wanted["name"] and not _LEAD_LIST.search(wanted["lead"] or ""):
            old = said_items(wanted["old"])
            return old[0] if len(old) == 1 else None
    return None


def _swap_list(wanted: re.Match[str], named: str | None, holding: Callable[[str], str | None] | None) -> str | None:
    """The list a swap is on: named with it, in its lead-in, in the sentence before, or the one holding the item."""
    lead = _LEAD_LIST.search(wanted["lead"] or "")
    name = wanted["name"] or (lead and lead["name"]) or named
    if name is None and holding is not None:
        old = said_items(wanted["old"])
        name = holding(old[0]) if len(old) == 1 else None
    return name.strip() if name else None


def _sentences(lowered: str) -> list[str]:
    parts = (clause for whole in SENTENCE_BREAK.split(lowered) for part in _AND_THEN.split(whole)
             for clause in _CLAUSE_BREAK.split(part))
    return [_OPENING.sub("", part.strip()) for part in parts]


def _named_before(text: str, said: list[str]) -> str | None:
    """What "it" stands for: the thing got just before ("got the sunscreen already"), else the one proper name typed
    in what was said before (not a sentence's first word), else None."""
    got = (_GOT_THING.search(said[-1]) or _THING_ALONE.match(said[-1])) if said else None
    if got and not SAYS_SOMETHING.search(got["thing"]) and len(got["thing"].split()) <= _THING_WORDS:
        return got["thing"]
    before_text = " ".join(said)
    names = {match.group(0).lower() for match in _PROPER_NAME.finditer(text)
             if not _starts_sentence(text, match.start()) and match.group(0) != "I"}
    before = [name for name in names if name in before_text]
    return before[0] if len(before) == 1 else None


def _starts_sentence(text: str, index: int) -> bool:
    before = text[:index].rstrip()
    return not before or before[-1] in ".!?:;\n"


def _edit_of_a_pointer(sentence: str, text: str, said: list[str]) -> list[PlainAction]:
    """A removal of "it" when what it stands for was said just before: that is the item."""
    match = LIST_REMOVE.match(sentence)
    if match is None or match["items"].strip() not in _ONE_THING:
        return []
    antecedent = _named_before(text, said)
    if antecedent is None:
        return []
    return [PlainAction("list", {"operation": "remove", "name": match["name"].strip(), "items": [antecedent]})]


def _edit(sentence: str, named_before: str | None) -> list[PlainAction]:
    """The changes one sentence asks for (none when it asks for none these patterns read)."""
    for operation, pattern in (("remove", LIST_REMOVE), ("add", LIST_ADD), ("remove", NO_LONGER_NEEDED),
                               ("remove", COMES_OFF)):
        match = pattern.match(sentence)
        if match:
            return _changes((operation, match["name"].strip(), match["items"]))
    swap = LIST_SWAP.match(sentence)
    if swap:
        name = swap["name"].strip()
        return _changes(("remove", name, swap["old"]), ("add", name, swap["new"]))
    if named_before is None:
        return []
    removed = REMOVE_FROM_THE_SAME.match(sentence)
    if removed and (removed["verb"] not in _PARTICLE_VERBS or removed["before"] or removed["after"]):
        return _changes(("remove", named_before, removed["items"]))
    added = ADD_TO_THE_SAME.match(sentence)
    return _changes(("add", named_before, added["items"])) if added else []


def _changes(*asked: tuple[str, str, str]) -> list[PlainAction]:
    """Each (operation, list, items said) as an action; none when any of them names no items it can use."""
    made = [change for operation, name, said in asked if (change := _change(operation, name, said)) is not None]
    return made if len(made) == len(asked) else []


def _topic(sentence: str) -> tuple[str, str] | None:
    """The list a sentence names before its changes, and what follows the name ("" when it is only the name)."""
    match = LIST_TOPIC.match(sentence)
    if not match or _REQUEST_IN_NAME.search(match["name"]):
        return None
    return match["name"], match["rest"]


def _change(operation: str, name: str, said: str) -> PlainAction | None:
    # A clause run on after the items tells why ("add roll-up banner, Nino is design it"): no item of its own.
    listed = said_items(said)
    items = listed[:1] + [item for item in listed[1:] if not SAYS_SOMETHING.search(item)]
    if not items or len(items) > MAX_ITEMS or any(POINTER_ITEM.match(item) for item in items):
        return None
    return PlainAction("list", {"operation": operation, "name": name, "items": items})
