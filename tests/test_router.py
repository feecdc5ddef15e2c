"""Mode router: context signals, scoring, determinism and tie-breaks (no real model)."""

from __future__ import annotations

import json
import logging
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from services.router import signals as rs
from services.router.decision import apply_tiebreak, score_modes, softmax, tiebreak_candidates
from services.router.exemplars import load_exemplars
from services.router.mode_router import ModeRouter, context_from_record
from services.router.signals import MODES, RoutingContext
from services.settings import SettingsError
from tests.fake_embedder import HashEmbedder

REPO_CONFIGS = Path(__file__).resolve().parents[1] / "configs"


@pytest.fixture
def configs_dir(tmp_path: Path) -> Path:
    """A private copy of the shipped configs, so a test may change them."""
    target = tmp_path / "configs"
    target.mkdir()
    for name in ("router.toml", "router_exemplars.toml"):
        shutil.copy(REPO_CONFIGS / name, target / name)
    return target


@pytest.fixture
def router(configs_dir: Path) -> ModeRouter:
    return ModeRouter(configs_dir)


def edit_router_toml(configs_dir: Path, old: str, new: str) -> None:
    path = configs_dir / "router.toml"
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def signals_of(text: str, **context) -> dict[str, float]:
    return rs.collect_signals(RoutingContext(text=text, **context))


def test_importing_the_router_loads_no_model_library():
    code = ("import sys, services.router.mode_router; "
            "sys.exit(int(bool({'torch', 'sentence_transformers'} & set(sys.modules))))")
    assert subprocess.run([sys.executable, "-c", code], cwd=REPO_CONFIGS.parent, check=False).returncode == 0



# --- context and continuation ----------------------------------------------------------------


def test_context_signals_pass_through_and_expire():
    ctx = RoutingContext(text="x", context_warmth=0.7, memory_confidence=0.4, topic_confidence=0.9, topic_is_new=True,
                         previous_mode="ACT", turns_since_previous_mode=1)
    signals = rs.context_signals(ctx, recent_turns=2)
    assert signals["context_warmth"] == 0.7 and signals["memory_confidence"] == 0.4
    assert signals["topic_confidence"] == 0.9 and signals["topic_is_new"] == 1.0
    assert signals["prev_act"] == 1.0 and signals["prev_clarify"] == 0.0
    ctx.turns_since_previous_mode = 3
    assert rs.context_signals(ctx, recent_turns=2)["prev_act"] == 0.0


def test_answer_to_a_clarifying_question_continues_the_action():
    memory = [("Remind me to call the dentist", "Sure - when should I remind you?")]
    signals = signals_of("tomorrow at 9", working_memory=memory, previous_mode="CLARIFY")
    assert signals["followup_fill"] == 1.0 and signals["skill_continuation"] == 1.0
    assert signals_of("tomorrow at 9")["followup_fill"] == 0.0
    assert signals_of("thanks!", working_memory=memory, previous_mode="CLARIFY")["followup_fill"] == 0.0


def test_follow_up_to_a_non_action_clarification_is_not_pushed_to_act(router):
    memory = [["Tell me more.", "More about what exactly?"]]
    signals = signals_of("the French revolution", working_memory=memory, previous_mode="CLARIFY")
    assert signals["followup_fill"] == 1.0 and signals["skill_continuation"] == 0.0
    context = {"working_memory": memory, "previous_mode": "CLARIFY"}
    assert router.route(context_from_record("the French revolution", context)).mode == "RESPOND"


def test_confirmation_reply_needs_a_pending_confirmation():
    assert signals_of("yes please", pending_confirmation=True)["confirmation_reply"] == 1.0
    assert signals_of("yes please")["confirmation_reply"] == 0.0


# --- scoring and decisions -------------------------------------------------------------------


def test_score_modes_is_bias_plus_weighted_sum():
    weights = {mode: {"bias": 0.0} for mode in MODES}
    weights["ACT"] = {"bias": 0.5, "skill_any": 2.0, "question": -1.0}
    scores = score_modes({"skill_any": 1.0, "question": 1.0}, weights)
    assert scores["ACT"] == 1.5 and scores["RESPOND"] == 0.0


def test_softmax_sums_to_one_and_orders_like_scores():
    probabilities = softmax({"RESPOND": 2.0, "CLARIFY": 1.0, "ACKNOWLEDGE": 0.0, "ACT": 0.0, "IGNORE": -5.0}, 0.5)
    assert sum(probabilities.values()) == pytest.approx(1.0, abs=1e-3)
    assert probabilities["RESPOND"] > probabilities["CLARIFY"] > probabilities["ACT"]


@pytest.mark.parametrize(
    ("text", "context", "mode"),
    [
        ("Schedule it.", None, "CLARIFY"),
        ("Remind me", None, "CLARIFY"),
        ("Send it to her.", None, "CLARIFY"),
        ("remind me tomorrow at 9 to call the dentist", None, "ACT"),
        ("Add milk to my shopping list", None, "ACT"),
        ("What's on my shopping list?", None, "ACT"),
        ("what do you know about me?", None, "RESPOND"),  # asked, it wants an answer in words (issue 31)
        ("How do vaccines train the immune system?", None, "RESPOND"),
        ("thanks!", None, "ACKNOWLEDGE"),
        ("👍", None, "ACKNOWLEDGE"),
        ("...", None, "IGNORE"),
        ("asdfghjkl", None, "IGNORE"),
        ("", None, "IGNORE"),
        ("tomorrow at 9", {"working_memory": [["Remind me to call the dentist", "When should I remind you?"]],
                           "previous_mode": "CLARIFY"}, "ACT"),
        ("ok", {"working_memory": [["Add milk to my shopping list", "Added milk."]], "previous_mode": "ACT"},
         "ACKNOWLEDGE"),
        ("Forget that I live in Paris", None, "ACT"),
        ("Delete my shopping list", None, "ACT"),
        ("cancel my dentist reminder", None, "ACT"),
        ("Delete it.", None, "CLARIFY"),
        ("Cancel that.", None, "CLARIFY"),
        ("Cancel that.", {"working_memory": [["Remind me at 6 to call the plumber", "Done, 6pm."]],
                          "previous_mode": "ACT"}, "ACT"),
        ("How do I delete a file in Linux?", None, "RESPOND"),
        ("Can you forget things?", None, "RESPOND"),
    ],
)
def test_known_cases_route_on_signals_alone(router, text, context, mode):
    assert router.route(context_from_record(text, context)).mode == mode


def test_same_input_same_decision(configs_dir):
    embedder = HashEmbedder()
    ctx = context_from_record("Send it to her.", None, embedder.embed("Send it to her."))
    first = ModeRouter(configs_dir, embedder).route(ctx)
    again = ModeRouter(configs_dir, HashEmbedder()).route(ctx)
    for decision in (again, ModeRouter(configs_dir, embedder).route(ctx)):
        assert (decision.mode, decision.scores, decision.signals, decision.margin) == (
            first.mode, first.scores, first.signals, first.margin)


def test_decision_is_json_serialisable_and_complete(router):
    decision = router.route(context_from_record("Remind me"))
    payload = json.loads(json.dumps(decision.to_dict()))
    assert set(payload["scores"]) == set(MODES)
    assert payload["mode"] == payload["deterministic_mode"] == "CLARIFY"
    assert payload["margin"] == pytest.approx(max(decision.scores.values()) - sorted(decision.scores.values())[-2])
    assert payload["confidence"] == decision.probabilities["CLARIFY"]
    assert payload["latency_ms"] >= 0 and payload["weights_version"]
    assert all(isinstance(value, float) for value in payload["signals"].values())


# --- exemplar similarity ---------------------------------------------------------------------


def test_exemplar_similarity_favours_the_exemplars_mode(configs_dir):
    embedder = HashEmbedder()
    edit_router_toml(configs_dir, "top_k = 3", "top_k = 1")
    router = ModeRouter(configs_dir, embedder)
    sentence = load_exemplars(configs_dir / "router_exemplars.toml")["ACT"][0]
    decision = router.route(RoutingContext(text=sentence, embedding=embedder.embed(sentence)))
    assert decision.signals["sim_act"] == pytest.approx(1.0, abs=1e-3)
    assert decision.signals["sim_act"] == max(decision.signals[f"sim_{mode.lower()}"] for mode in MODES)
    assert decision.signals["embedding_used"] == 1.0 and decision.embedding_model == embedder.model_id


def test_wrong_embedding_shape_is_ignored_with_a_warning(configs_dir, caplog):
    router = ModeRouter(configs_dir, HashEmbedder())
    with caplog.at_level(logging.WARNING, logger="services.router"):
        decision = router.route(RoutingContext(text="hello", embedding=np.ones(8, dtype=np.float32)))
    assert decision.signals["embedding_used"] == 0.0 and decision.signals["sim_respond"] == 0.0
    assert "does not match" in caplog.text


@pytest.mark.parametrize(
    ("old", "new"),
    [("margin = 0.6", "margn = 0.6"), ("[scoring]", "[scorng]"), ("top_k = 3", "top_k = true"),
     ("[oscillation]", "[oscillation\n")],
)
def test_typo_in_router_toml_is_refused(configs_dir, old, new):
    edit_router_toml(configs_dir, old, new)
    with pytest.raises(SettingsError, match="router.toml"):
        ModeRouter(configs_dir)


# --- tie-breaks ------------------------------------------------------------------------------


def test_tiebreak_margin_narrows_with_warmth(configs_dir):
    # Only RESPOND's bias, 0.4 ahead of every other mode.
    weights = "".join(f"[weights.{mode}]\nbias = {0.4 if mode == 'RESPOND' else 0.0}\n" for mode in MODES)
    (configs_dir / "router.toml").write_text(f"[tiebreak]\nmargin = 0.6\nwarmth_narrowing = 0.5\n{weights}")
    router = ModeRouter(configs_dir)
    assert router.config.tiebreak_threshold(0.0) == pytest.approx(0.6)
    assert router.config.tiebreak_threshold(1.0) == pytest.approx(0.3)
    cold = router.route(context_from_record("hello", {"context_warmth": 0.0}))
    warm = router.route(context_from_record("hello", {"context_warmth": 1.0}))
    assert cold.margin == warm.margin == pytest.approx(0.4)
    assert cold.tiebreak_eligible and not warm.tiebreak_eligible


def test_clear_decision_is_not_tiebreak_eligible(router):
    assert not router.route(context_from_record("...")).tiebreak_eligible


def _decision(router: ModeRouter):
    decision = router.route(context_from_record("Remind me"))
    first, second = tiebreak_candidates(decision)
    assert first == decision.mode and second != first
    assert decision.scores[first] >= decision.scores[second] >= max(
        score for mode, score in decision.scores.items() if mode not in (first, second))
    return decision, first, second


def test_tiebreaker_choosing_the_runner_up_wins(router):
    decision, first, second = _decision(router)
    broken = apply_tiebreak(decision, f" {second.lower()}. ")
    assert broken.mode == second and broken.deterministic_mode == first
    assert broken.tiebreaker_used and broken.tiebreaker_result == second
    assert broken.confidence == decision.probabilities[second]
    assert apply_tiebreak(decision, second).mode == second


@pytest.mark.parametrize("answer", [None, "", "banana", "IGNORE_ME"])
def test_failed_or_invalid_tiebreaker_keeps_deterministic_winner(router, answer):
    decision, first, _ = _decision(router)
    kept = apply_tiebreak(decision, answer)
    assert kept.mode == first and kept.tiebreaker_used and kept.tiebreaker_result is None


def test_tiebreaker_choosing_a_third_mode_is_ignored(router):
    decision, first, second = _decision(router)
    third = next(mode for mode in MODES if mode not in (first, second))
    kept = apply_tiebreak(decision, third)
    assert kept.mode == first and kept.tiebreaker_result == third
