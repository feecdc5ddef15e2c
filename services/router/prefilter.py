"""A literal prefilter read off a regular expression: strings one of which every match contains.

A message without any of them cannot match, so the regex need not run: the router's long alternations (a skill's
words, say) cost a pass over the text at every position, a substring test a few C-speed scans. The strings are
derived from the pattern's parse (``re._parser``), never written by hand, so a branch added to a pattern later is
covered as it is: a branch with no literal it must contain (``[a-z]+``) turns the prefilter off for its pattern.

Reading of each piece of a parsed pattern (``_Info``): ``exact``, the finite set of strings it matches (None when
unknown or too many); ``required``, strings one of which every match of it contains (None: no such set). A sequence
multiplies its pieces' exact sets while they stay small and keeps its best run; an alternation needs a set from
each branch; a repeat of at least one keeps its item's set; anchors and lookarounds match the empty string.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from re import _constants as sre  # the parse's opcodes, read only here
from re import _parser as sre_parse

from services.router.ascii_twin import ascii_twin, fit_test

_MAX_EXACT = 64  # strings kept in one piece's exact set before it is read as "unknown"
_MAX_LITERAL = 24  # characters kept in one exact string
# How often a character occurs in English text (roughly): a literal set's expected hits, to choose the rarest set.
_FREQUENCY = dict(zip(" etaoinshrdlcumwfgypbvkjxqz", (
    0.18, 0.10, 0.075, 0.066, 0.062, 0.057, 0.055, 0.051, 0.05, 0.047, 0.035, 0.033, 0.023, 0.023, 0.02, 0.019,
    0.018, 0.016, 0.016, 0.013, 0.012, 0.008, 0.006, 0.001, 0.001, 0.001, 0.001), strict=True))
_ZERO_WIDTH = (sre.AT, sre.ASSERT, sre.ASSERT_NOT)
_REPEATS = (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT)


@dataclass(frozen=True)
class _Info:
    exact: frozenset[str] | None = None
    required: frozenset[str] | None = None

    def best(self) -> frozenset[str] | None:
        """The set to test for: the exact strings or the required ones, whichever is rarer; None if neither holds."""
        sets = [s for s in (self.exact, self.required) if s is not None and "" not in s]
        return min(sets, key=_expected_hits) if sets else None


_UNKNOWN = _Info()
_EMPTY = _Info(exact=frozenset({""}))


def _expected_hits(strings: frozenset[str]) -> float:
    total = 0.0
    for string in strings:
        chance = 1.0
        for char in string:
            chance *= _FREQUENCY.get(char, 0.01)
        total += chance
    return total


def _minimal(strings: frozenset[str]) -> frozenset[str]:
    """Without the strings that contain another of them ("add" goes when "ad" is there: any text with it has "ad")."""
    return frozenset(s for s in strings if not any(t != s and t in s for t in strings))


def _info(items: list) -> _Info:
    """A sequence of parsed items."""
    run = frozenset({""})  # the exact strings of the current run of known pieces
    candidates: list[frozenset[str]] = []
    whole = True  # every piece known and the run never cut: the run is the sequence's exact set
    for op, av in items:
        piece = _item(op, av)
        if piece.exact is not None:
            joined = frozenset(a + b for a in run for b in piece.exact)
            if len(joined) <= _MAX_EXACT and all(len(s) <= _MAX_LITERAL for s in joined):
                run = joined
                continue
        whole = False
        candidates.append(run)
        run = piece.exact if piece.exact is not None else frozenset({""})
        if piece.exact is None and piece.required is not None:
            candidates.append(piece.required)
    if whole:
        return _Info(exact=run)
    usable = [c for c in (*candidates, run) if "" not in c]
    return _Info(required=min(usable, key=_expected_hits) if usable else None)


def _item(op, av) -> _Info:
    if op is sre.LITERAL:
        return _Info(exact=frozenset({chr(av)}))
    if op is sre.IN:
        if all(kind is sre.LITERAL for kind, _ in av) and len(av) <= _MAX_EXACT:
            return _Info(exact=frozenset(chr(code) for _, code in av))
        return _UNKNOWN
    if op in _ZERO_WIDTH:
        return _EMPTY
    if op is sre.SUBPATTERN:
        _group, add_flags, _del_flags, pattern = av
        return _UNKNOWN if add_flags & re.IGNORECASE else _info(pattern.data)
    if op is sre.ATOMIC_GROUP:
        return _info(av.data)
    if op is sre.BRANCH:
        return _branch([_info(branch.data) for branch in av[1]])
    if op in _REPEATS:
        low, high, pattern = av
        inner = _info(pattern.data)
        if low == high == 1:
            return inner
        if low == 0 and high == 1 and inner.exact is not None:
            return _Info(exact=inner.exact | {""})
        return _Info(required=inner.best()) if low >= 1 else _UNKNOWN
    return _UNKNOWN  # any character, a class, a back-reference, a conditional: nothing known


def _branch(branches: list[_Info]) -> _Info:
    exact = None
    if all(b.exact is not None for b in branches):
        exact = frozenset().union(*(b.exact for b in branches))
        if len(exact) > _MAX_EXACT:
            exact = None
    needed = [b.best() for b in branches]
    required = None if any(n is None for n in needed) else _minimal(frozenset().union(*needed))
    return _Info(exact=exact, required=required)


def required_literals(regex: re.Pattern) -> frozenset[str] | None:
    """Strings one of which every match of ``regex`` contains, or None when no such set can be read off it; with
    ``re.IGNORECASE`` the text holds one of them in some case (``literal_regex`` then searches with the same flag)."""
    if not isinstance(regex.pattern, str):
        return None
    found = _info(sre_parse.parse(regex.pattern, regex.flags).data).best()
    return _minimal(found) if found else None


def literal_regex(strings: frozenset[str], flags: int = 0) -> re.Pattern:
    """A regex that finds any of ``strings``, their common beginnings factored out ("rem(?:ember|ind)"): at each place
    in a text ``re`` follows one branch per character instead of trying every string."""

    def tree(group: set[str]) -> str:
        if "" in group:  # a string ends here: finding it is enough, whatever the longer ones would add
            return ""
        heads: dict[str, set[str]] = {}
        for string in group:
            heads.setdefault(string[0], set()).add(string[1:])
        parts = [re.escape(head) + tree(rest) for head, rest in sorted(heads.items())]
        return parts[0] if len(parts) == 1 else f"(?:{'|'.join(parts)})"

    return re.compile(tree(set(strings)), flags)


class Prefiltered:
    """A compiled pattern that runs only when the text holds one of its required literals (found by one pass of
    ``literal_regex``): ``search``, ``match``, ``sub`` and the rest give the same answers as the pattern's own,
    cheaper when the literals are missing; on ASCII text both run as their ``re.ASCII`` twins (``ascii_twin``), which
    answer the same. Anything else (``pattern``, ``flags``) is the pattern's."""

    def __init__(self, regex: re.Pattern, grouped: bool = False) -> None:
        self.regex = regex
        self.literals = required_literals(regex)
        self.gate = literal_regex(self.literals, regex.flags & re.IGNORECASE) if self.literals else None
        self.twin = ascii_twin(regex, grouped)  # (the gate holds literals only, read alike in both compilations)
        self._fits = fit_test(regex)

    def __getattr__(self, name: str):
        return getattr(self.regex, name)

    def _runner(self, text: str) -> re.Pattern | None:
        """The pattern (or its twin) to run on ``text``, or None when the text holds none of the literals, so that no
        match of the pattern can be in it."""
        if self.gate is not None and self.gate.search(text) is None:
            return None
        return self.twin if self.twin is not None and self._fits(text) else self.regex

    def search(self, text: str) -> re.Match | None:
        regex = self._runner(text)
        return None if regex is None else regex.search(text)

    def match(self, text: str) -> re.Match | None:
        regex = self._runner(text)
        return None if regex is None else regex.match(text)

    def fullmatch(self, text: str) -> re.Match | None:
        regex = self._runner(text)
        return None if regex is None else regex.fullmatch(text)

    def findall(self, text: str) -> list:
        regex = self._runner(text)
        return [] if regex is None else regex.findall(text)

    def sub(self, repl: str | Callable[[re.Match], str], text: str) -> str:
        regex = self._runner(text)
        return text if regex is None else regex.sub(repl, text)


def prefiltered(pattern: str, flags: int = 0, grouped: bool = False) -> Prefiltered:
    """``re.compile(pattern, flags)`` searched behind its required literals: for a long alternation searched in
    every message, whose literals most messages lack (``grouped``: its twin grouped by first character)."""
    return Prefiltered(re.compile(pattern, flags), grouped)
