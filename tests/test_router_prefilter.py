"""The literal prefilter of the router's patterns (the skills', dictated punctuation's and every pattern compiled with
``prefiltered``) never turns away a text they match; the times a text says, found once, are those ``TIME_RE`` finds.

Checked on every routing-set line and every string of the router tests (as the router searches them), and on texts
made from each pattern itself: a generator walks the pattern's parse, taking every kind of branch, the shortest and
longer repeats and optional pieces left out. A derivation that took an optional piece (or one branch's literal) for
one every match needs would turn some of those texts away.
"""

from __future__ import annotations

import ast
import functools
import importlib
import json
import pkgutil
import random
import re
from pathlib import Path
from re import _constants as sre
from re import _parser as sre_parse

import pytest

import services.router
from services.router.form_words import DICTATED_RE
from services.router.prefilter import Prefiltered, literal_regex, required_literals
from services.router.textview import text_view
from services.router.time_words import TIME_RE, says_time, times_replaced
from services.router.words import SKILL_RES

TESTS = Path(__file__).resolve().parent


def _compiled_prefiltered() -> dict[str, re.Pattern]:
    """Every pattern a router module holds as a ``Prefiltered`` (``X_RE = prefiltered(...)``), by its name."""
    found = {}
    for module in pkgutil.iter_modules(services.router.__path__):
        for name, value in vars(importlib.import_module(f"services.router.{module.name}")).items():
            if isinstance(value, Prefiltered):
                found[name] = value.regex
    return found


_NAMED = {**{f"skill_{name}": regex for name, regex in SKILL_RES.items()}, "dictated": DICTATED_RE}
PREFILTERED = {**_NAMED, **{name: regex for name, regex in _compiled_prefiltered().items()
                            if regex not in _NAMED.values()}}
_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789 ,.'?!:-"


@functools.cache
def _known_texts() -> list[str]:
    """Every routing-set line and every string constant of the router tests, as given and as the router reads it."""
    texts = [json.loads(line)["text"] for path in sorted((TESTS / "data").glob("routing_*.jsonl"))
             for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    for path in sorted(TESTS.glob("test_router*.py")):
        texts += [node.value for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                  if isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) < 2000]
    views = [text_view(text) for text in texts]
    return sorted({*texts, *(view.lower for view in views), *(view.unled for view in views)})


def _char(items: list, rng: random.Random) -> str:
    """One character a class ``[...]`` (without negation) accepts, or any letter when it is negated."""
    if items and items[0][0] is sre.NEGATE:
        excluded = {chr(av) for op, av in items if op is sre.LITERAL}
        return rng.choice([ch for ch in _ALPHABET if ch not in excluded and ch not in ".?!"] or ["x"])
    op, av = rng.choice(items)
    if op is sre.LITERAL:
        return chr(av)
    if op is sre.RANGE:
        return chr(rng.randint(*av))
    return {sre.CATEGORY_DIGIT: "7", sre.CATEGORY_SPACE: " ", sre.CATEGORY_WORD: "w"}.get(av, " ")


def _sample(items: list, rng: random.Random) -> str:
    """A string the parsed ``items`` may match (lookarounds and anchors are left to the regex to check)."""
    out = []
    for op, av in items:
        if op is sre.LITERAL:
            out.append(chr(av))
        elif op is sre.NOT_LITERAL or op is sre.ANY:
            out.append(rng.choice([ch for ch in "ab z" if ord(ch) != av]))
        elif op is sre.IN:
            out.append(_char(av, rng))
        elif op is sre.BRANCH:
            out.append(_sample(rng.choice(av[1]).data, rng))
        elif op is sre.SUBPATTERN:
            out.append(_sample(av[3].data, rng))
        elif op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
            low, high, pattern = av
            count = rng.choice([low, low, min(high, low + 1), min(high, low + 3)])
            out.extend(_sample(pattern.data, rng) for _ in range(count))
    return "".join(out)


def _made_from(regex: re.Pattern, n: int = 600) -> list[str]:
    """Texts that ``regex`` matches, made from its own parse and set in a little text around them."""
    rng = random.Random(31)
    parsed = sre_parse.parse(regex.pattern, regex.flags).data
    made = []
    for _ in range(n):
        core = _sample(parsed, rng)
        for text in (core, f"so {core} thanks", f"{core}.", f"ok, {core}", core.upper(), f"So {core.title()}"):
            if regex.search(text):
                made.append(text)
    return made


@pytest.mark.parametrize("name", sorted(PREFILTERED))
def test_the_prefilter_never_rejects_a_text_the_pattern_matches(name):
    regex = PREFILTERED[name]
    prefiltered = Prefiltered(regex)
    assert prefiltered.literals, f"{name}: no literal read off its pattern"
    made = _made_from(regex)
    assert len(made) > 200  # the generator reaches the pattern's branches
    for text in [*_known_texts(), *made]:
        found = regex.search(text)
        assert (prefiltered.search(text) is None) == (found is None), (name, text)
        assert prefiltered.sub("#", text) == regex.sub("#", text), (name, text)
        assert (prefiltered.match(text) is None) == (regex.match(text) is None), (name, text)
        assert prefiltered.findall(text) == regex.findall(text), (name, text)


def test_the_long_word_patterns_are_searched_behind_their_literals():
    compiled = _compiled_prefiltered()
    assert len(compiled) >= 10
    assert {"WH_CLAUSE_RE", "INDIRECT_QUESTION_RE", "HABITUAL_RE", "DISTRESS_RE", "ADVICE_RE"} <= set(compiled)
    assert all(isinstance(regex, re.Pattern) for regex in compiled.values())


def test_the_times_found_once_are_those_time_re_finds():
    """``says_time`` and ``times_replaced`` read the spans found once; they answer as ``TIME_RE`` itself would."""
    for text in [*_known_texts(), *_made_from(TIME_RE)]:
        assert says_time(text) == (TIME_RE.search(text) is not None), text
        for mark in (" ", ","):
            assert times_replaced(text, mark) == TIME_RE.sub(mark, text), text
    assert times_replaced("call mum at 6pm tomorrow or friday", ",") == "call mum at , , or ,"


def test_literals_are_read_off_the_parse():
    assert required_literals(re.compile(r"\b(?:add|put)\b[^.]{0,20}\blist\b")) == {"list"}
    assert required_literals(re.compile(r"\bre?mind\b")) == {"remind", "rmind"}  # the optional "e" both ways
    assert required_literals(re.compile(r"\bcalendar\b|\bdiary\b")) == {"calendar", "diary"}
    assert required_literals(re.compile(r"foo|\w+ bar")) == {"foo", " bar"}
    assert required_literals(re.compile(r"foo|[a-z]+")) is None  # a branch with no literal: no prefilter
    assert required_literals(re.compile(r"(?:ab)?c*")) is None  # matches the empty string
    assert required_literals(re.compile(r"(?i:list)|goal")) is None  # a case of its own: not read
    assert Prefiltered(re.compile(r"\bfull stop\b", re.IGNORECASE)).search("Done Full Stop") is not None


def test_the_literal_regex_finds_exactly_the_texts_holding_a_literal():
    literals = frozenset({"remind", "rem", "alarm", "a-b", "to-do", "x?"})
    gate = literal_regex(literals)
    for text in ["", "reminder", "re m", "an alarm", "a-b", "ab", "to do", "to-do list", "x?", "x", "alar"]:
        assert (gate.search(text) is not None) == any(literal in text for literal in literals), text
