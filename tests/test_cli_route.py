"""`engram route`: decisions with signals and scores, without generating a reply."""

from __future__ import annotations

import io
import json

import pytest

import consumer


def route(capsys, *args: str) -> tuple[int, str, str]:
    code = consumer.main(["route", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_human_output_names_the_mode_scores_and_signals(capsys):
    code, out, _ = route(capsys, "Remind me", "--no-embedding")
    assert code == 0
    assert out.startswith("CLARIFY")
    assert "scores:" in out and "skill_remind=1" in out


def test_the_explanation_names_the_skill_and_whether_the_command_says_enough(capsys):
    _, out, _ = route(capsys, "Please store this: the gate code is 5512", "--no-embedding")
    assert out.startswith("ACT") and "skill:   memorize (skill_remember); says what to do: it can run" in out
    _, out, _ = route(capsys, "Add the things I mentioned to my list.", "--no-embedding")
    assert out.startswith("CLARIFY") and "points_back=1" in out
    assert "skill:   list (skill_list); points at something said earlier that is not in this conversation" in out
    _, out, _ = route(capsys, "Could you write me a short poem about the sea?", "--no-embedding")
    assert out.startswith("RESPOND") and "skill:" not in out


def test_json_output_has_the_full_decision(capsys):
    code, out, _ = route(capsys, "remind me tomorrow at 9 to call the dentist", "--no-embedding", "--json")
    decision = json.loads(out)
    assert code == 0 and decision["mode"] == "ACT"
    assert set(decision["scores"]) == {"RESPOND", "CLARIFY", "ACKNOWLEDGE", "ACT", "IGNORE"}
    assert decision["signals"]["has_time"] == 1


def test_file_mode_prints_one_json_object_per_line(capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO("hi there\n\nSchedule it.\n!!!\n"))
    code, out, _ = route(capsys, "--file", "-", "--no-embedding")
    records = [json.loads(line) for line in out.splitlines()]
    assert code == 0
    assert [r["mode"] for r in records] == ["ACKNOWLEDGE", "CLARIFY", "IGNORE"]
    assert [r["skill"] for r in records] == [None, "schedule", None]
    assert all({"text", "mode", "confidence", "scores", "signals", "latency_ms"} <= set(r) for r in records)


def test_file_from_disk(capsys, tmp_path):
    path = tmp_path / "messages.txt"
    path.write_text("What's on my shopping list?\nthanks a lot\n")
    code, out, _ = route(capsys, "--file", str(path), "--no-embedding")
    assert code == 0 and [json.loads(line)["mode"] for line in out.splitlines()] == ["ACT", "ACKNOWLEDGE"]


@pytest.mark.parametrize("args", [[], ["   "], ["hello", "--file", "-"]])
def test_bad_invocations_exit_2_with_a_message(capsys, args):
    code, _, err = route(capsys, *args)
    assert code == 2 and err.startswith("engram route:")


def test_missing_file_is_a_clear_error(capsys, tmp_path):
    code, _, err = route(capsys, "--file", str(tmp_path / "nope.txt"), "--no-embedding")
    assert code == 2 and "cannot read" in err


@pytest.mark.slow
def test_with_the_real_model(capsys):
    code, out, _ = route(capsys, "Add milk to my shopping list", "--json")
    decision = json.loads(out)
    assert code == 0 and decision["mode"] == "ACT" and decision["signals"]["embedding_used"] == 1
