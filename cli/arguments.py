"""What the person at the terminal typed: input files, argument types, and the error that explains them."""

from __future__ import annotations

import argparse
import sys
from typing import TextIO


class CommandError(Exception):
    """A clear message for the person at the terminal; ``engram`` prints it and exits 2."""


def open_input(path: str) -> TextIO:
    """The file to read (``-`` is stdin), or a ``CommandError`` that says why it cannot be read."""
    if path == "-":
        return sys.stdin
    try:
        return open(path, encoding="utf-8")  # noqa: SIM115 - the caller closes it
    except OSError as exc:
        raise CommandError(f"cannot read {path}: {exc.strerror}") from None


def one_input(value: str | None, path: str | None, what: str) -> None:
    """A command takes its ``what`` on the command line or one per line of ``--file``: exactly one of them,
    and not blank; else a ``CommandError`` that says which is wrong."""
    if bool(value) == bool(path):
        raise CommandError(f"give a {what} or --file (not both)")
    if value is not None and not value.strip():
        raise CommandError(f"the {what} is empty")


def positive_int(raw: str) -> int:
    """argparse type for counts such as ``--k``: a whole number of at least 1."""
    try:
        value = int(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{raw!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value
