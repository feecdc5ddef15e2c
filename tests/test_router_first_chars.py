"""A pattern with its alternatives grouped by first character (``first_chars.grouped_twin``) finds what the pattern
finds, where it finds it: the same first match, the same matches one after another, the same replacements.

Checked three ways: every pattern a router module holds (grouped or not in routing), on every routing-set line and
router-test string and on texts made from its own parse; thousands of random small patterns built from the pieces the
rewrite opens (optional pieces greedy and lazy, repeats, branches nested and overlapping, empty alternatives, anchors
and look-arounds before a character) on every short text over their alphabet; and crafted cases where a careless
grouping would change the answer (an alternative moved past one that starts the same way, an optional piece tried in
the wrong order, a boundary checked at the wrong place).
"""

from __future__ import annotations

import importlib
import itertools
import pkgutil
import random
import re

import pytest

import services.router
from services.router.ascii_twin import Twinned
from services.router.first_chars import grouped_twin
from services.router.prefilter import Prefiltered
from tests.test_router_prefilter import _known_texts, _made_from


def _answers(regex: re.Pattern, text: str) -> tuple:
    found, matched = regex.search(text), regex.match(text)
    return (found and found.span(), matched and matched.span(), regex.fullmatch(text) is not None,
            [m.span() for m in regex.finditer(text)], regex.sub("#", text), regex.search(text, 2) and
            regex.search(text, 2).span())


def _ascii_flags(regex: re.Pattern) -> int:
    return (regex.flags & ~re.UNICODE) | re.ASCII


def _router_patterns() -> dict[str, re.Pattern]:
    """Every compiled pattern a router module holds (plain, twinned or prefiltered; in dicts too), by name."""
    found: dict[str, re.Pattern] = {}
    for module in pkgutil.iter_modules(services.router.__path__):
        for name, value in vars(importlib.import_module(f"services.router.{module.name}")).items():
            for key, item in (value.items() if isinstance(value, dict) else [(name, value)]):
                regex = item.regex if isinstance(item, Twinned | Prefiltered) else item
                if isinstance(regex, re.Pattern) and isinstance(regex.pattern, str) and not regex.flags & re.I:
                    found.setdefault(f"{name}[{key}]" if key != name else name, regex)
    return found


ROUTER_PATTERNS = _router_patterns()


@pytest.mark.parametrize("name", sorted(ROUTER_PATTERNS))
def test_every_router_pattern_grouped_answers_as_itself(name):
    regex = ROUTER_PATTERNS[name]
    grouped = grouped_twin(regex.pattern, _ascii_flags(regex))
    if grouped is None:  # capturing groups: left alone
        assert regex.groups
        return
    plain = re.compile(regex.pattern, _ascii_flags(regex))
    for text in [*_known_texts(), *_made_from(regex, 100)]:
        if text.isascii():
            assert _answers(grouped, text) == _answers(plain, text), (name, text)


def test_the_costliest_patterns_run_grouped():
    from services.router.form_words import PHATIC_RE
    from services.router.time_words import TIME_RE
    for searcher in (TIME_RE, PHATIC_RE):
        assert searcher.twin is not None and searcher.twin.pattern is None  # compiled from the regrouped parse


_PIECES = ["a", "b", "c", " ", "ab", "ba", "[ab]", "[^a ]", r"\d", r"\w", ".", "1"]
_WRAPS = ["{}", "(?:{})?", "(?:{})??", "{}{{1,2}}", "{}{{1,2}}?", "{}+", "{}*", r"\b{}", "^{}", "(?<=a){}",
          r"(?<=\s){}", "(?=b){}", "(?!a){}", "(?:{})$"]


def _random_pattern(rng: random.Random, depth: int = 0) -> str:
    """A small pattern of the shapes the rewrite opens: sequences of wrapped pieces and branches inside branches."""
    parts = []
    for _ in range(rng.randint(1, 3)):
        if depth < 2 and rng.random() < 0.35:
            branch = "|".join(_random_pattern(rng, depth + 1) for _ in range(rng.randint(2, 4)))
            inner = f"(?:{branch})"
        else:
            inner = rng.choice(_PIECES)
        parts.append(rng.choice(_WRAPS).format(inner if len(inner) == 1 or inner.startswith("(") else f"(?:{inner})"))
    if rng.random() < 0.1:
        parts.append(rng.choice(["", "|"]))  # an empty alternative somewhere
    return "".join(parts)


_TEXTS = ["".join(chars) for size in range(5) for chars in itertools.product("ab 1", repeat=size)] + [
    "ab ba", "cab abc", "a1 b2", "bba aab", "c c c", "abcab ab"]


def test_random_patterns_grouped_answer_as_themselves():
    rng = random.Random(31)
    checked = 0
    for _ in range(600):
        top = "|".join(_random_pattern(rng) for _ in range(rng.randint(1, 5)))
        try:
            plain = re.compile(top, re.ASCII)
        except re.error:
            continue
        grouped = grouped_twin(top, re.ASCII)
        for text in _TEXTS:
            assert _answers(grouped, text) == _answers(plain, text), (top, text)
        checked += 1
    assert checked > 500


@pytest.mark.parametrize("pattern, text", [
    ("ab|[a-z]c|ac", "ac"),  # "ac" may not move before "[a-z]c": both start with "a"
    ("a|ab", "ab"), ("ab|a", "ab"), ("(?:ab)?a|b", "aba"), ("(?:ab)??a|b", "aba"),
    (r"\d{1,2}:\d\d|\d{1,2}(?:st|th)", "12th 1:30"), (r"(?:^|(?<=\s))@ ?\d|\b(?:at|@)\b", "x@ 3 at @4"),
    (r"\b(?:today|to|tonight)\b|tomorrow", "totonight tonight to"), ("x(?=y)|xy|x", "xy x"),
    (r"(?:on )?(?:mon|tue)s?\b|on\b", "on mons on tue"), ("a*b|ac|a+c", "aac"), ("(?:|a)b|ab", "ab"),
])
def test_crafted_cases_answer_as_themselves(pattern, text):
    plain, grouped = re.compile(pattern, re.ASCII), grouped_twin(pattern, re.ASCII)
    assert _answers(grouped, text) == _answers(plain, text)


def test_a_pattern_with_capturing_groups_is_left_alone():
    assert grouped_twin(r"(a)|ab", re.ASCII) is None
    assert grouped_twin(r"(?:a)|ab", re.ASCII) is not None
