"""A pattern's alternations grouped by their first character: the same matches, fewer tries a position.

``re`` tries a branch's alternatives one after another at every position it reaches; an alternative that starts with
a literal character is turned away by one comparison, but one that starts with an optional piece, a group or an
assertion is entered. ``TIME_RE`` and ``PHATIC_RE`` hold 30-100 alternatives tried at every word boundary. Here the
pattern's parse (``re._parser``) is rewritten so that each branch's alternatives are grouped by their first character
(``today|tonight|tomorrow`` becomes ``to(?:day|night|morrow)``, a trie), after opening what stands first:
- a group or a nested branch is opened into its alternatives, the rest of the alternative after each
  (``(?:a|b)c`` is ``ac|bc``);
- a piece that cannot match the empty string, optional, is tried with, then without (``X?c`` is ``Xc|c``; lazily the
  other way round), and repeated, is taken once before the rest of its repeats (``\\d{1,2}`` is ``\\d\\d{0,1}``);
- an assertion before one character is checked after it, looking back (``\\bt`` is ``t(?<=\\bt)``).
Each step keeps the order in which ``re`` tries the ways a text may match, so the first match found is the same:
alternatives are moved only past alternatives no text can start the same way (their first characters differ), and an
alternative that may match the empty string, or starts otherwise, stays where it is. A pattern with capturing groups
or case ignored is left alone (the rewrite is for the ASCII twin, ``ascii_twin.py``). tests/test_router_first_chars.py
checks the rewritten patterns' answers against their own.
"""

from __future__ import annotations

import re
from functools import cache
from re import _compiler as sre_compile  # the parse compiled as it stands, read only here
from re import _constants as sre
from re import _parser as sre_parse

_ONE_CHAR = (sre.LITERAL, sre.NOT_LITERAL, sre.IN, sre.ANY)
_ASSERTIONS = (sre.AT, sre.ASSERT, sre.ASSERT_NOT)
_REPEATS = (sre.MAX_REPEAT, sre.MIN_REPEAT)
_MAX_ALTERNATIVES = 256  # alternatives one branch may be opened into; beyond, it is left as it is
# An alternative is opened only while its copies stay small (in parsed items): a rest is copied once per way.
_GROWTH, _SLACK = 4, 64


def grouped_twin(pattern: str, flags: int) -> re.Pattern | None:
    """``pattern`` compiled with ``flags`` (which hold ``re.ASCII``) after its branches are grouped by first
    character; None when it holds a capturing group (a group opened twice would be numbered twice)."""
    tree = sre_parse.parse(pattern, flags)
    if tree.state.groups > 1:
        return None
    state = tree.state
    state.grouped = {}  # a branch's grouped form by its id: one branch is copied into many alternatives' rests
    return sre_compile.compile(sre_parse.SubPattern(state, _sequence(state, tree.data)), flags)


def _sequence(state, items: list) -> list:
    """``items`` with every branch in them (and in their groups, repeats and look-aheads) grouped."""
    out = []
    for item in items:
        op, av = item
        if op is sre.BRANCH:
            if id(item) not in state.grouped:
                state.grouped[id(item)] = (item, _grouped(state, [list(alt.data) for alt in av[1]]))
            alternatives = state.grouped[id(item)][1]
            if len(alternatives) == 1:
                out += alternatives[0]
                continue
            out.append((op, (None, [sre_parse.SubPattern(state, alt) for alt in alternatives])))
        elif op in _REPEATS:
            out.append((op, (av[0], av[1], sre_parse.SubPattern(state, _sequence(state, av[2].data)))))
        elif op is sre.SUBPATTERN:
            out.append((op, av[:3] + (sre_parse.SubPattern(state, _sequence(state, av[3].data)),)))
        elif op in (sre.ASSERT, sre.ASSERT_NOT) and av[0] == 1:  # look-behinds keep their fixed width as they are
            out.append((op, (av[0], sre_parse.SubPattern(state, _sequence(state, av[1].data)))))
        else:
            out.append((op, av))
    return out


def _grouped(state, alternatives: list[list]) -> list[list]:
    """A branch's alternatives, opened (``_opened``) and grouped by their first character, in an order that finds the
    same first match; each group's rests grouped again."""
    opened = []
    for alternative in alternatives:
        ways = _opened(state, alternative)
        small = sum(map(_size, ways)) <= _GROWTH * _size(alternative) + _SLACK  # a long rest is not copied far
        opened += ways if small and len(opened) + len(ways) <= _MAX_ALTERNATIVES else [alternative]
    groups: list[tuple[tuple | None, list[list]]] = []  # (first item or None, alternatives), in order
    for alt in opened:
        first = _item_key(alt[0]) if alt and alt[0][0] in _ONE_CHAR else None
        chars = _chars(first) if first is not None else None
        home = None
        for index in range(len(groups) - 1, -1, -1):
            key, _ = groups[index]
            if key is not None and key == first:
                home = index
                break
            if key is None or chars is None or _chars(key) & chars:
                break  # an alternative this one may not be moved past
        if home is None:
            groups.append((first, [alt]))
        else:
            groups[home][1].append(alt)
    out = []
    for first, members in groups:
        if first is None or len(members) == 1:
            out += [_sequence(state, alt) for alt in members]
            continue
        rests = _grouped(state, [alt[1:] for alt in members])
        head = [members[0][0]]
        if len(rests) == 1:
            out.append(head + rests[0])
        else:
            out.append(head + [(sre.BRANCH, (None, [sre_parse.SubPattern(state, rest) for rest in rests]))])
    return out


def _opened(state, alt: list, budget: int = _MAX_ALTERNATIVES) -> list[list]:
    """``alt`` as the alternatives, in the order ``re`` tries them, that each start with one character where it can
    be done; ``[alt]`` where it cannot."""
    if not alt or budget <= 0:
        return [alt]
    (op, av), rest = alt[0], alt[1:]
    if op is sre.BRANCH:
        out = []
        for sub in av[1]:
            out += _opened(state, list(sub.data) + rest, budget - len(out))
        return out
    if op is sre.SUBPATTERN and av[0] is None and not av[1] and not av[2]:
        return _opened(state, list(av[3].data) + rest, budget)
    if op in _REPEATS and av[2].getwidth()[0] > 0:
        low, high, item = av
        if low == 0 and high == 1:
            taken = _opened(state, list(item.data) + rest, budget)
            skipped = _opened(state, rest, budget - len(taken))
            return taken + skipped if op is sre.MAX_REPEAT else skipped + taken
        if low >= 1:  # the first time round, then the rest of the repeat: X{1,3} is X X{0,2}, X+ is X X*
            again = [] if high == 1 else [(op, (low - 1, high if high == sre.MAXREPEAT else high - 1, item))]
            return _opened(state, list(item.data) + again + rest, budget)
    if op in _ASSERTIONS and _assertion_may_move(op, av):
        after = _opened(state, rest, budget)
        if len(after) == 1 and after[0] and after[0][0][0] in _ONE_CHAR:
            char, tail = after[0][0], after[0][1:]
            behind = (sre.ASSERT, (-1, sre_parse.SubPattern(state, [(op, av), char])))
            return [[char, behind] + tail]
    return [alt]


def _size(items: list) -> int:
    """How many parsed items ``items`` holds, counting those inside groups, repeats, branches and look-arounds."""
    total = 0
    for op, av in items:
        total += 1
        if op is sre.BRANCH:
            total += sum(_size(alt.data) for alt in av[1])
        elif op in _REPEATS:
            total += _size(av[2].data)
        elif op is sre.SUBPATTERN:
            total += _size(av[3].data)
        elif op in (sre.ASSERT, sre.ASSERT_NOT):
            total += _size(av[1].data)
    return total


def _assertion_may_move(op, av) -> bool:
    """An anchor, or a look-around without groups of its own, can be checked one character later, looking back."""
    return op is sre.AT or av[1].getwidth()[1] < sre.MAXREPEAT


def _item_key(item: tuple) -> tuple:
    """A hashable form of a one-character item (a class's list made a tuple)."""
    op, av = item
    return (op, tuple(av) if isinstance(av, list) else av)


@cache
def _chars(key: tuple) -> frozenset[str]:
    """The ASCII characters a one-character item matches (the twin runs only on ASCII text)."""
    op, av = key
    item = (op, list(av) if isinstance(av, tuple) else av)
    state = sre_parse.State()
    state.flags = re.ASCII
    regex = sre_compile.compile(sre_parse.SubPattern(state, [item]), re.ASCII | re.DOTALL)
    return frozenset(c for c in map(chr, range(128)) if regex.fullmatch(c))
