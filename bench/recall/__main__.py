"""``python -m bench.recall [MODE] ...``: the modes of bench/recall/__init__.py (``scale`` when none is named)."""

from __future__ import annotations

import importlib
import sys

MODES = {"scale": "bench.recall.scale", "locomo": "bench.recall.locomo"}


def main(argv: list[str]) -> None:
    mode = argv.pop(0) if argv and argv[0] in MODES else "scale"
    importlib.import_module(MODES[mode]).main(argv)


if __name__ == "__main__":
    main(sys.argv[1:])
