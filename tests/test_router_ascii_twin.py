"""The router's patterns run as their ``re.ASCII`` twins on ASCII text (``Twinned``, ``Prefiltered``) and answer
exactly as the patterns themselves; the two cases where the compilations disagree on ASCII text keep the twin away;
the exemplar similarities, computed without NumPy's wrappers, are the same bits as before.

Checked on every routing-set line and every string of the router tests (as given, lower-cased and without a lead-in,
as the router searches them), on texts made from each pattern's own parse (tests/test_router_prefilter.py), and on
texts that hold the separators U+001C-U+001F or letters outside ASCII.
"""

from __future__ import annotations

import importlib
import pkgutil
import re

import numpy as np
import pytest

import services.router
from services.router.ascii_twin import Twinned, ascii_twin, fit_test, says_space_class
from services.router.exemplars import ExemplarIndex
from services.router.prefilter import Prefiltered
from services.router.signals import _SKILL_SEARCHES
from tests.test_router_prefilter import _known_texts, _made_from


def _twinned_patterns() -> dict[str, Twinned | Prefiltered]:
    """Every ``Twinned`` and ``Prefiltered`` a router module holds, by its name, and the skills' searches."""
    found: dict[str, Twinned | Prefiltered] = {f"skill_{name}": search for name, search in _SKILL_SEARCHES.items()}
    for module in pkgutil.iter_modules(services.router.__path__):
        for name, value in vars(importlib.import_module(f"services.router.{module.name}")).items():
            if isinstance(value, Twinned | Prefiltered) and value not in found.values():
                found[name] = value
    return found


TWINNED = _twinned_patterns()
# Texts where the compilations could part: separators Unicode counts as white space, letters outside ASCII.
_EDGE_TEXTS = ["remind me\x1cat 6pm", "at\x1f7 tomorrow", "call mum\x1dtonight\x1e", "café at 6pm tomorrow",
               "ſave this note", "remind me on \u212aelvin day", "thanks!\x1c", "ok\u00a0cool",
               "the list\u2028 add eggs"]


def _answers(regex, text: str) -> tuple:
    """Everything a caller can read off the pattern's answers for ``text``."""
    found = regex.search(text)
    matched = regex.match(text)
    return ((found.span(), found.groups()) if found else None, (matched.span(), matched.groups()) if matched else None,
            regex.fullmatch(text) is not None, regex.findall(text), regex.sub("#", text))


@pytest.mark.parametrize("name", sorted(TWINNED))
def test_the_twin_answers_as_the_pattern(name):
    searcher = TWINNED[name]
    regex = searcher.regex
    for text in [*_known_texts(), *_made_from(regex, 200), *_EDGE_TEXTS]:
        assert _answers(searcher, text) == _answers(regex, text), (name, text)
        if isinstance(searcher, Twinned):
            assert [m.span() for m in searcher.finditer(text)] == [m.span() for m in regex.finditer(text)], text
            bounded, own = searcher.search(text, 3), regex.search(text, 3)  # from a position on, as objects.py asks
            assert (bounded and bounded.span()) == (own and own.span()), text


def test_the_costly_patterns_have_a_twin():
    """The patterns a replay of routing's calls found to gain most (tests fail if a flag change quietly drops it)."""
    for name in ("TIME_RE", "SHOW_STORED_RE", "DEICTIC_OBJECT_RE", "PHATIC_RE", "skill_remember", "skill_list"):
        assert TWINNED[name].twin is not None, name
    assert says_space_class(TWINNED["TIME_RE"].regex)  # it says \s: the separators keep its twin away


def test_where_the_compilations_disagree_the_twin_is_kept_away():
    # What the guards are for: on these ASCII texts an re.ASCII compilation would answer differently.
    assert re.search(r"a\sb", "a\x1cb") and not re.search(r"a\sb", "a\x1cb", re.ASCII)
    assert re.search("\u212a", "k", re.IGNORECASE) and not re.search("\u212a", "k", re.IGNORECASE | re.ASCII)
    spaced = Twinned(re.compile(r"a\sb"))
    assert not fit_test(spaced.regex)("a\x1cb") and spaced.search("a\x1cb") is not None
    assert ascii_twin(re.compile("\u212a", re.IGNORECASE)) is None
    assert ascii_twin(re.compile("(?i:\u212a)x")) is None and ascii_twin(re.compile("(?x-i:a)")) is None
    assert Twinned(re.compile(r"(?u)\bok\b")).search("ok") is not None  # an inline (?u) keeps the pattern as it is
    assert not says_space_class(re.compile(r"\bat [0-9]")) and says_space_class(re.compile(r"[^\S]"))
    assert not fit_test(re.compile("a"))("café") and fit_test(re.compile(r"\s"))("cafe")


def _similarities_before(index: ExemplarIndex, vector: np.ndarray, top_k: int) -> dict[str, float]:
    """The similarities as computed before the wrappers were left out (np.partition, ndarray.sum)."""
    cosines = index.matrix @ vector
    result = {}
    for mode, (start, end) in index.spans.items():
        row = cosines[start:end]
        k = min(top_k, len(row))
        top = np.partition(row, len(row) - k)[-k:]
        result[f"sim_{mode.lower()}"] = float(top.dtype.type(float(top.sum()) / len(top)))
    return result


def test_the_similarities_are_the_same_bits_as_before():
    rng = np.random.default_rng(31)
    spans = {"RESPOND": (0, 43), "CLARIFY": (43, 72), "ACKNOWLEDGE": (72, 112), "ACT": (112, 142),
             "IGNORE": (142, 144)}
    matrix = rng.standard_normal((144, 64)).astype(np.float32)
    matrix[10:20] = matrix[0]  # ties among a mode's exemplars
    index = ExemplarIndex(matrix, spans, "test")
    for trial in range(300):
        vector = (matrix[trial % 144] if trial % 3 == 0 else rng.standard_normal(64)).astype(np.float32)
        for top_k in (1, 2, 3, 5):
            assert index.similarities(vector, top_k) == _similarities_before(index, vector, top_k), (trial, top_k)
