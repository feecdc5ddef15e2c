"""The reply sees it: a question about an earlier session gets the evidence turn into the prompt the LLM
receives, with its speaker and date, most relevant first, within the memory block's token budget.

The whole hot path runs: an imported conversation (the real import path, then the vector backfill),
`POST /chat`, the digest job, and the scripted LLM's record of the request it got.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import replace

import pytest

from services.db import make_sessionmaker
from services.memory.config import load_memory_config
from services.memory.importer import pair_exchanges, parse_lines, store_records
from services.memory.vectors import fill_all
from services.queues import PROMPT_QUEUE
from tests.fake_embedder import HashEmbedder
from tests.llm_steps import Reply
from tests.sse import parse_frames

pytestmark = pytest.mark.integration

USER = "local"  # without tokens, every request is the single local user's
EVIDENCE = "[2025-03-02] Melanie: Tell her I started restoring an old Vespa scooter in the garage."
QUESTION = "Which scooter was Melanie restoring in her garage?"
# Turns that share a word or two with the question: relevant enough to be recalled, less than the evidence.
# One session before the evidence's and one after it, so neither oldest-first nor newest-first order
# would put the evidence first: only ranking by relevance does.
BEFORE = [("Caroline", "Melanie, my neighbour keeps an old scooter in his garage under a tarp.", "b1"),
          ("Melanie", "He should sell it before the tyres rot.", "b2")]
EVIDENCE_SESSION = [("Caroline", "I finally visited my grandmother last week.", "c1"),
                    ("Caroline", "She asked about your new hobby!", "c2"),
                    ("Melanie", "Tell her I started restoring an old Vespa scooter in the garage.", "c3"),
                    ("Caroline", "That sounds like a lot of grease and patience.", "c4")]
AFTER = [("Caroline", "My brother wants to buy an electric scooter for the city.", "a1"),
         ("Melanie", "Electric ones are quiet, but check the battery range first.", "a2"),
         ("Caroline", "Melanie, is your garage still full of paint tins from the move?", "a3"),
         ("Melanie", "Yes, the garage is a mess until the weekend.", "a4")]
SESSIONS = [("s0", dt.datetime(2025, 1, 12, 10, 0, tzinfo=dt.UTC), BEFORE),
            ("s1", dt.datetime(2025, 3, 2, 18, 0, tzinfo=dt.UTC), EVIDENCE_SESSION),
            ("s2", dt.datetime(2025, 6, 20, 9, 30, tzinfo=dt.UTC), AFTER)]
DISTRACTORS = [text for _, text, _ in BEFORE + AFTER]


def _import(db_engine) -> None:  # type: ignore[no-untyped-def]
    lines = []
    for session, start, turns in SESSIONS:
        for n, (speaker, text, key) in enumerate(turns):
            lines.append(json.dumps({"session": session, "speaker": speaker, "text": text, "external_id": key,
                                     "timestamp": (start + dt.timedelta(seconds=40 * n)).isoformat()}))
    good, bad, _ = parse_lines(lines)
    assert not bad
    sessions = make_sessionmaker(db_engine)
    store_records(sessions, HashEmbedder(), USER, pair_exchanges(good))
    fill_all(sessions, HashEmbedder())  # the worker's embedder in these tests is the same HashEmbedder


def _memory_block(client, run_jobs, fake_llm, thread_id: str | None = None) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    """What the LLM got between <memory> and </memory> for QUESTION asked over HTTP, and the thread's id."""
    fake_llm.script(Reply("It was a Vespa."))
    body = {"text": QUESTION, **({"thread_id": thread_id} if thread_id else {})}
    response = client.post("/chat", json=body, buffered=False)
    assert response.status_code == 200, response.get_data(as_text=True)
    run_jobs((PROMPT_QUEUE,))
    frames = [frame for frame in parse_frames(response.response) if not frame.comment]
    assert [frame.data["text"] for frame in frames if frame.event == "message"] == ["It was a Vespa."]
    prompt = "\n".join(message["content"] for message in fake_llm.requests[-1]["messages"]
                       if isinstance(message.get("content"), str))
    assert "<memory>\n" in prompt, f"the prompt carries no memory block:\n{prompt[:2000]}"
    block = prompt[prompt.index("<memory>\n") + len("<memory>\n"):prompt.index("\n</memory>")]
    return block, response.headers["X-Thread-ID"]


def _first_position(block: str, texts: list[str]) -> int:
    positions = [block.index(text) for text in texts if text in block]
    return min(positions) if positions else len(block)


def test_an_earlier_sessions_evidence_turn_reaches_the_prompt_first_with_speaker_and_date(
        client, run_jobs, fake_llm, db_engine):  # type: ignore[no-untyped-def]
    _import(db_engine)
    block, _ = _memory_block(client, run_jobs, fake_llm)
    assert EVIDENCE in block, f"the evidence turn is not in the prompt:\n{block}"
    shown = [text for text in DISTRACTORS if text in block]
    assert shown, f"no other turn was recalled, so the order is not tested:\n{block}"
    # Most relevant first: the evidence turn comes before every less relevant turn, older or newer.
    assert block.index(EVIDENCE) < _first_position(block, DISTRACTORS), block
    budget = load_memory_config(None).context
    assert len(block) <= budget.budget_tokens * budget.chars_per_token


def test_a_tight_memory_budget_drops_the_less_relevant_turns_and_keeps_the_evidence(
        client, run_jobs, fake_llm, db_engine, worker_context):  # type: ignore[no-untyped-def]
    _import(db_engine)
    wide, thread_id = _memory_block(client, run_jobs, fake_llm)
    assert [text for text in DISTRACTORS if text in wide], wide
    config = load_memory_config(worker_context.settings.configs_dir)
    # Room for the section's title and the evidence turn with its line marks, not for any other line recalled
    # (the shortest, "- " + a distractor, is 64 characters). The evidence holds the question's words, so it
    # comes without the turn it replies to (span_replied_to "unmatched").
    tokens = (len("Things said before:") + len(EVIDENCE) + 20) // config.context.chars_per_token + 1
    tight = replace(config, context=replace(config.context, budget_tokens=int(tokens)))
    worker_context.extras["memory_config"] = tight  # what the digest reads memory.toml into, once per process
    # The same thread: the first question and its reply are working memory (the history), not recall.
    narrow, _ = _memory_block(client, run_jobs, fake_llm, thread_id)
    assert EVIDENCE in narrow, f"the evidence turn was dropped for a less relevant one:\n{narrow}"
    assert len(narrow) <= tight.context.budget_tokens * tight.context.chars_per_token
    assert not [text for text in DISTRACTORS if text in narrow], f"the budget was not applied:\n{narrow}"
