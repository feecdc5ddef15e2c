"""A turn that matches on its own is returned without the turn it replies to, so its slot goes to the next answer
(span_replied_to "unmatched")."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from typing import Any

import pytest

from services.memory.config import load_memory_config
from services.memory.search import Candidate
from services.memory.spans import SpanPicker
from services.settings import PROJECT_ROOT, SettingsError

NOW = dt.datetime(2025, 9, 1, tzinfo=dt.UTC)
SHIPPED = load_memory_config(PROJECT_ROOT / "configs").recall


def _row(line_id: int, text: str, lex: float, replied: tuple[int, str, float] | None) -> dict[str, Any]:
    row = {"id": line_id, "exchange_id": line_id, "speaker": "Jon", "text": text, "external_id": f"D1:{line_id}",
           "occurred_at": NOW, "lex": lex, "p_id": None}
    if replied is not None:
        p_id, p_text, p_lex = replied
        row.update(p_id=p_id, p_exchange_id=p_id, p_speaker="Gina", p_text=p_text, p_external_id=f"D1:{p_id}",
                   p_occurred_at=NOW, p_lex=p_lex)
    return row


def _spans(mode: str) -> list[list[str]]:
    """"What did Jon get from the networking event?": hits, best first, as the turns each one lists."""
    rows = [
        # Holds some of the question's words itself (its prompt holds more): a whole answer all the same.
        _row(2, "The event got me two investors.", 0.4, (1, "How was the networking event?", 1.0)),
        # Holds none of them: only its prompt says what "it" is.
        _row(4, "Yes, and a mentor too!", 0.0, (3, "Anything else from the networking event?", 0.9)),
    ]
    picker = SpanPicker(replace(SHIPPED, span_replied_to=mode), set())
    return [[line["external_id"] for line in picker.take(Candidate("exchange", r["id"], r, NOW, 0.5, 0.5, None, 0))]
            for r in rows]


def test_a_turn_that_matches_on_its_own_comes_without_its_prompt():
    assert SHIPPED.span_replied_to == "unmatched"
    # Three turns carry both answers; "always" spends a fourth on the first answer's prompt.
    assert _spans("unmatched") == [["D1:2"], ["D1:3", "D1:4"]]
    assert _spans("always") == [["D1:1", "D1:2"], ["D1:3", "D1:4"]]


def test_an_unknown_span_mode_is_refused(tmp_path):
    (tmp_path / "memory.toml").write_text('[recall]\nspan_replied_to = "sometimes"\n')
    with pytest.raises(SettingsError, match="unmatched"):
        load_memory_config(tmp_path)
