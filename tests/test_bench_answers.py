"""bench/answers.py: its scorer (expected and stale words, echoes, LoCoMo's token F1) and one run end to end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.answers import COLUMNS, KINDS, Answer, load_personas, summary, table
from bench.answers_score import Expectation, is_echo, judge_fact, locomo_f1, score, token_f1
from bench.local import TurnResult
from tests.fake_llm import FakeLLM
from tests.llm_steps import Json, Reply

ROOT = Path(__file__).resolve().parents[1]


def test_a_reply_is_right_with_the_expected_words_and_wrong_with_a_stale_one() -> None:
    changed = Expectation("changed", "What do I do now?", any=("teach*", "school"), forbidden=("bank*",))
    assert score(changed, "You're a Teacher at a secondary school now.").right
    stale = score(changed, "You work at the bank, and you teach on weekends.")
    assert not stale.right and stale.stale == ["bank*"]
    missing = score(changed, "You are a nurse.")
    assert not missing.right and missing.missing == ["any: teach*|school"]


def test_an_untold_question_is_right_only_when_the_reply_does_not_invent() -> None:
    asked = Expectation.of({"kind": "untold", "ask": "What's my dog called?", "forbidden": ["tom"]})
    assert score(asked, "You haven't told me your dog's name yet.").right
    assert score(asked, "I don't know what your dog is called - what's their name?").right
    assert not score(asked, "Your dog is called Max.").right  # invented
    assert not score(asked, "Your dog is called Tom.").right  # the cat's name, taken for the dog's
    assert not score(asked, "I'm not sure, but maybe Tom?").right  # a doubt that still offers the wrong one


def test_a_question_of_a_kind_no_column_shows_is_refused_with_its_name(tmp_path: Path) -> None:
    scenarios = tmp_path / "scenarios.toml"
    scenarios.write_text(SCENARIO.replace('kind = "fact"', 'kind = "untol"', 1))
    with pytest.raises(SystemExit, match="unknown question kind in scenarios.toml \\(pia: 'untol'; kinds are fact,"):
        load_personas(scenarios)


def test_untold_questions_stand_apart_from_the_share_right() -> None:
    answers = [Answer("pia", "tuning", "fact", "What's my cat called?", "Engram", "Tom.", True),
               Answer("pia", "tuning", "fact", "Where do I work?", "Engram", "A bank.", False),
               Answer("pia", "tuning", "untold", "What's my dog called?", "Engram", "Max.", False)]
    assert summary(answers, [], [])["tuning/Engram"] == pytest.approx(
        {"right": 0.5, "questions": 2, "fact": 0.5, "untold": 0.0})
    row = next(line for line in table(answers, [], show_frozen=False).splitlines() if "Engram" in line)
    assert row.split()[1] == "50%" and row.split()[-1] == "0%"  # the share right leaves the untold one out


def test_all_phrases_are_needed_and_dates_match_in_any_spelling() -> None:
    listed = Expectation("list", "What's on my list?", all=("oat milk", "banana*", "rice"))
    assert score(listed, "On your shopping list: oat milk, bananas and rice.").right
    assert score(listed, "Oat-milk, rice, one banana").right
    assert not score(listed, "milk oat, bananas, rice").right  # a phrase's words stand together, in order
    assert score(listed, "bananas and rice").missing == ["oat milk"]
    dated = Expectation("time", "When?", all=("14", "june"))
    assert score(dated, "It's on the 14th of June!").right
    assert score(dated, "June 14").right
    shift = Expectation("changed", "When do I work?", all=("06 00", "14 00"))
    assert score(shift, "You work 06:00\u201314:00 now.").right  # an en dash parts the times as a hyphen does
    assert not score(dated, "On the 4th of June").right
    timed = Expectation("reminder", "When?", any=("9",))
    assert score(timed, "Tomorrow at 9am.").right and score(timed, "at 9:00").right
    assert not score(timed, "at 19:00").right


def test_a_name_spelt_with_a_letter_ascii_lacks_matches_either_spelling() -> None:
    """NFKD leaves "ł" and "ı" whole, so they were dropped: a right "You live in Wrocław now" was scored wrong."""
    moved = Expectation("changed", "Which city?", any=("wroclaw",), forbidden=("poznan",))
    assert score(moved, "You live in Wrocław now.").right and score(moved, "Wroclaw").right
    assert score(Expectation("changed", "Which city?", any=("wrocław",)), "You live in Wroclaw.").right
    assert not score(moved, "Still in Poznań.").right
    assert score(Expectation("preference", "What?", any=("patlıcan",)), "Try patlican kebab").right
    assert score(Expectation("fact", "How far?", any=("5k",)), "A 5K run, easy.").right


def test_an_echo_is_the_persons_message_again() -> None:
    said = "I left the bank, I teach maths now."
    assert is_echo(said, "I left the bank, I teach maths now.")
    assert is_echo(said, "I left the bank, I teach maths now")
    assert is_echo(said, "Oh! I left the bank, I teach maths now.")
    assert not is_echo(said, "Congratulations on the new job! How are the students?")
    assert not is_echo("What's my cat called?", "Your cat is called Biscuit.")
    assert not is_echo("thanks", "")


def test_a_stored_fact_is_true_when_it_is_the_persons_own_current_statement() -> None:
    said = ["Hi! I'm Maya, I just moved to Leeds for a new job.", "I work at a bank, in the mortgage department.",
            "Remind me tomorrow at 8 to print the worksheets", "Big news: I left the bank. I'm teaching maths now."]
    changed = ("bank*", "mortgage*")
    assert judge_fact("I just moved to Leeds for a new job.", "user", said, changed).true
    assert judge_fact("You are teaching maths now.", "user", said, changed).true  # "you" for the person
    assert judge_fact("The user moved to Leeds.", "user", said, changed).true  # a model's wording, same words
    assert judge_fact("I work at a bank, in the mortgage department.", "user", said, changed).why == "changed since"
    assert judge_fact("The user left the bank.", "user", said, changed).true  # the news of the change itself
    assert judge_fact("The user did it", "user", said, changed).why == "says nothing"
    assert judge_fact("Remind me tomorrow at 8 to print the worksheets", "user", said, changed).why == "a request"
    assert judge_fact("Maya is a nurse in Leeds.", "user", said, changed).why == "not their words"
    assert judge_fact("I moved to Leeds.", "assistant", said, changed).why == "the assistant's"


def test_token_f1_as_the_locomo_paper_scores() -> None:
    # "the", "and", commas and punctuation go; Porter stems: cats→cat, running→run.
    assert token_f1("The cats, running!", "cat run") == 1.0
    # prediction {cat, were, run} against {cat, run}: precision 2/3, recall 1 → 0.8
    assert token_f1("the cats were running", "cat running") == pytest.approx(0.8)
    assert token_f1("7 May 2023", "8 May 2023") == pytest.approx(2 / 3)
    assert token_f1("nothing", "something else") == 0.0
    # multi-hop: each comma part of the answer against the best part of the reply, averaged
    assert locomo_f1("painting, pottery", "pottery, painting, camping", 1) == pytest.approx(2 / 3)
    # open-domain: only the answer's first ";" part counts
    assert locomo_f1("psychology", "psychology; counseling", 3) == 1.0
    assert locomo_f1("psychology", "psychology; counseling", 4) == pytest.approx(2 / 3)


def test_the_scenarios_hold_what_the_bench_promises() -> None:
    personas = load_personas()
    questions = [(p.split, q) for p in personas for q in p.questions]
    assert len(personas) >= 8 and len(questions) >= 60
    splits = {p.split for p in personas}
    assert {"tuning", "frozen"} <= splits
    for split in splits:  # each split a figure of its own: 25 questions or more, every kind
        chosen = [q for s, q in questions if s == split]
        assert len(chosen) >= 25, split
        assert set(KINDS) <= {q.kind for q in chosen} <= set(COLUMNS), split  # untold questions where written
    assert len({p.name for p in personas}) == len(personas)  # one user each
    for persona in personas:
        assert len(persona.conversations) >= 2, persona.name  # told across conversations, then asked
    assert all(q.any or q.all for _, q in questions)
    assert all(q.forbidden for _, q in questions if q.kind == "changed")



def test_any_split_the_file_names_is_chosen_and_reported_apart(tmp_path: Path) -> None:
    scenarios = tmp_path / "scenarios.toml"
    scenarios.write_text(SCENARIO + SCENARIO.replace('"pia"', '"ola"').replace('"tuning"', '"frozen9"'))
    assert [p.name for p in load_personas(scenarios, split="frozen9")] == ["ola"]
    assert [p.name for p in load_personas(scenarios)] == ["pia", "ola"]
    with pytest.raises(SystemExit, match="no split 'frozen7' in scenarios.toml \\(it has tuning, frozen9, or all\\)"):
        load_personas(scenarios, split="frozen7")
    answers = [Answer(name, split, "fact", "What's my cat called?", "Engram", "A dog.", False, ["any: biscuit"])
               for name, split in (("ola", "frozen9"), ("pia", "tuning"))]
    turns = [TurnResult("What's my cat called?", "A dog.", "RESPOND", 0.5, 1.0, False, "")]
    shown = table(answers, turns, show_frozen=False)
    assert shown.index("tuning (1 questions, 1 personas)") < shown.index("frozen9 (1 questions, 1 personas)")
    assert "wrong [pia/fact" in shown and "wrong [ola/" not in shown  # a frozen split's misses stay unread
    assert "wrong [ola/fact" in table(answers, turns, show_frozen=True)


SCENARIO = """
[[persona]]
name = "pia"
split = "tuning"
conversations = [["My cat is called Biscuit."], ["We moved from Gdansk to Berlin last month."]]

[[persona.question]]
kind = "fact"
ask = "What's my cat called?"
any = ["biscuit"]

[[persona.question]]
kind = "changed"
ask = "Where do I live these days?"
any = ["berlin"]
forbidden = ["gdansk"]
"""
# Every exchange's chunk: one fact in the person's words, one they never said.
CHUNK = {"gists": ["The person told about their cat."], "entities": [], "emotion": "neutral",
         "facts": [{"text": "The user has a cat called Biscuit.", "speaker": "user", "confidence": 0.9},
                   {"text": "The user lives in Gdansk.", "speaker": "user", "confidence": 0.9}],
         "salience": 0.5, "open_loops": []}
EPISODE = {"title": "Chat", "gist": "A chat.", "summary": "A chat.", "intent": "chat", "emotion": "neutral",
           "outcome": "none", "salience": 0.3, "open_loops": []}


@pytest.fixture
def scripted_llm() -> Iterator[FakeLLM]:
    server = FakeLLM().start()
    # Routes match the whole conversation text, first match wins: housekeeping first, then the later question.
    server.route("MEMORY CHUNK", Json(CHUNK))
    server.route("EPISODE", Json(EPISODE))
    server.route("Where do I live these days?", Reply("You live in Gdansk."))  # the stale answer: wrong
    server.route("What's my cat called?", Reply("Your cat is called Biscuit."))
    server.route("Gdansk to Berlin", Reply("Berlin, how exciting!"))
    server.route("Biscuit", Reply("What a lovely name for a cat."))
    yield server
    server.stop()


@pytest.mark.e2e
@pytest.mark.integration
@pytest.mark.slow
def test_the_bench_runs_end_to_end_and_scores_a_stale_answer_wrong(tmp_path: Path, scripted_llm: FakeLLM) -> None:
    scenarios = tmp_path / "scenarios.toml"
    scenarios.write_text(SCENARIO)
    out = tmp_path / "answers.json"
    env = {**os.environ, "OPENAI_BASE_URL": scripted_llm.url, "OPENAI_API_KEY": "test", "ENGRAM_LOCAL_LLM": "false"}
    done = subprocess.run([sys.executable, "-m", "bench.answers", "--scenarios", str(scenarios), "--json", str(out),
                           # A wait that ends when the chunks are in: on loaded cores (two suites beside a model
                           # server) the two chunks had not come in 60 s, alone they come in seconds.
                           "--data-dir", str(tmp_path / "data"), "--enrich-wait-s", "300"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    table = done.stdout
    assert "tuning (2 questions, 1 personas)" in table
    for row in ("Engram", "no memory", "everything"):
        assert any(line.strip().startswith(row) and "50%" in line for line in table.splitlines()), table
    assert "wrong [pia/changed/" in table and "stale gdansk" in table
    assert "fallbacks 0; echoes 0" in table
    assert "chunker: 2 exchanges enriched, 0 jobs failed (valid 100%)" in table, table
    assert "tuning: 2 active facts, 1 true of the person (50%)" in table, table
    assert "not true (not their words): 'The user lives in Gdansk.'" in table, table
    result = json.loads(out.read_text())
    engram = {a["kind"]: a for a in result["answers"] if a["way"] == "Engram"}
    assert engram["fact"]["right"] and engram["fact"]["reply"] == "Your cat is called Biscuit."
    assert not engram["changed"]["right"] and engram["changed"]["stale"] == ["gdansk"]
    assert result["summary"]["tuning/Engram"]["right"] == 0.5
    assert result["summary"]["tuning/Engram"]["changed"] == 0.0
