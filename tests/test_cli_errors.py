"""Bad command lines get one clear line on stderr and exit 2, before any server or model starts."""

from __future__ import annotations

import pytest

import consumer


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["recall", "x", "--user", "u", "--k", "0"], "must be at least 1"),
        (["recall", "x", "--user", "u", "--k", "ten"], "not a whole number"),
        (["recall", "   ", "--user", "u"], "engram recall: the query is empty"),
        (["recall", "--user", "u"], "engram recall: give a query or --file"),
        (["recall", "x", "--user", "u", "--file", "q.txt"], "not both"),
        (["recall", "--user", "u", "--file", "/no/such/queries.txt"], "engram recall: cannot read"),
        (["import", "/no/such/file.jsonl", "--user", "u"], "engram import: cannot read /no/such/file.jsonl"),
        (["import", "x.jsonl", "--user", "u", "--batch-size", "-3"], "must be at least 1"),
        (["export"], "--user"),
        (["route", "--file", "/no/such/messages.txt"], "engram route: cannot read"),
        (["route", "   "], "engram route: the message is empty"),
        (["route"], "engram route: give a message or --file"),
    ],
)
def test_bad_command_lines_are_clear_errors(capsys, tmp_path, monkeypatch, args, message):
    monkeypatch.setenv("ENGRAM_DATA_DIR", str(tmp_path / "data"))
    try:
        code = consumer.main(args)
    except SystemExit as exit_:  # argparse's own usage errors
        code = exit_.code
    assert code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "data").exists(), "nothing was started or written"


def test_unreachable_database_is_one_clear_line(capsys, monkeypatch):
    monkeypatch.setenv("DATABASE_URL", "postgresql://127.0.0.1:1/nowhere")
    assert consumer.main(["migrate"]) == 2
    assert "engram migrate: cannot reach PostgreSQL" in capsys.readouterr().err
