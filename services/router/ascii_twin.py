"""A router pattern's ``re.ASCII`` twin, run instead of it on ASCII text: the same answers at a lower cost.

On a ``str`` pattern ``\\b``, ``\\w`` and ``\\d`` ask Unicode's character tables (``\\b`` up to eight C calls a
position); compiled with ``re.ASCII`` they read one small table. On a text of ASCII characters only, the two
compilations agree but for two cases, which keep the twin away:
- ``\\s``: Unicode counts the separators U+001C-U+001F as white space, ASCII does not, so a pattern that says ``\\s``
  or ``\\S`` runs its twin only on a text without them;
- ignoring case, Unicode folds some non-ASCII letters onto ASCII ones ("ſ" is "s", the Kelvin sign "k"), so a pattern
  that may ignore case (its flags or an inline ``(?i)``) has no twin.
Literals, classes and anchors compare code points, the same in both. tests/test_router_ascii_twin.py checks every
twinned pattern's answers against the pattern's own.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from services.router.first_chars import grouped_twin

_SEPARATORS_RE = re.compile("[\x1c-\x1f]")
_SPACE_CLASS_RE = re.compile(r"\\[sS]")  # a pattern's text saying \s or \S (or an escaped backslash before an s)
_INLINE_CASE_RE = re.compile(r"\(\?[aiLmsux-]*i")  # "(?i)", "(?i:...)", "(?x-i:...)": case ignored somewhere


def ascii_twin(regex: re.Pattern, grouped: bool = False) -> re.Pattern | None:
    """``regex`` compiled with ``re.ASCII``, or None when it may ignore case (or is a bytes pattern); ``grouped``: with
    its alternatives grouped by first character (``first_chars.py``) where it has no capturing group."""
    if not isinstance(regex.pattern, str) or regex.flags & re.IGNORECASE or _INLINE_CASE_RE.search(regex.pattern):
        return None
    flags = (regex.flags & ~re.UNICODE) | re.ASCII
    try:
        return (grouped and grouped_twin(regex.pattern, flags)) or re.compile(regex.pattern, flags)
    except (re.error, ValueError):  # an inline "(?u)" that ASCII cannot take
        return None


def says_space_class(regex: re.Pattern) -> bool:
    """Whether ``regex`` may use the white-space class (``\\s``, ``\\S``), on which the twins disagree at U+001C-1F."""
    return _SPACE_CLASS_RE.search(regex.pattern) is not None


def _ascii_without_separators(text: str) -> bool:
    return text.isascii() and _SEPARATORS_RE.search(text) is None


def fit_test(regex: re.Pattern) -> Callable[[str], bool]:
    """Whether a twin answers as its pattern on a text: ASCII only, and no separator if the pattern reads ``\\s``;
    ``str.isascii`` itself (C) for a pattern that never reads ``\\s``."""
    return _ascii_without_separators if says_space_class(regex) else str.isascii


class Twinned:
    """A compiled pattern that runs its ``re.ASCII`` twin on the texts where the twin answers the same (``fit_test``);
    ``search``, ``match``, ``sub`` and the rest take the same arguments and give the pattern's answers; anything else
    (``pattern``, ``flags``) is the pattern's."""

    def __init__(self, regex: re.Pattern, grouped: bool = False) -> None:
        self.regex = regex
        self.twin = ascii_twin(regex, grouped)
        self._fits = fit_test(regex)

    def __getattr__(self, name: str):
        return getattr(self.regex, name)

    def _for(self, text: str) -> re.Pattern:
        return self.twin if self.twin is not None and self._fits(text) else self.regex

    def search(self, text: str, *bounds: int) -> re.Match | None:
        return self._for(text).search(text, *bounds)

    def match(self, text: str, *bounds: int) -> re.Match | None:
        return self._for(text).match(text, *bounds)

    def fullmatch(self, text: str, *bounds: int) -> re.Match | None:
        return self._for(text).fullmatch(text, *bounds)

    def findall(self, text: str, *bounds: int) -> list:
        return self._for(text).findall(text, *bounds)

    def finditer(self, text: str, *bounds: int):
        return self._for(text).finditer(text, *bounds)

    def sub(self, repl: str | Callable[[re.Match], str], text: str, count: int = 0) -> str:
        return self._for(text).sub(repl, text, count)


def twinned(pattern: str, flags: int = 0) -> Twinned:
    """``re.compile(pattern, flags)`` run as its ASCII twin on ASCII text: for a pattern with ``\\b`` or ``\\w`` that
    routing searches in every message."""
    return Twinned(re.compile(pattern, flags))


def grouped(pattern: str, flags: int = 0) -> Twinned:
    """``twinned``, the twin's alternatives grouped by first character (``first_chars.py``): for a long alternation
    tried at every word of every message."""
    return Twinned(re.compile(pattern, flags), grouped=True)
