"""LoCoMo QA: does Engram's recalled context let the model answer questions about a long real conversation?

What it measures: token F1 (bench/answers_score.locomo_f1, as LoCoMo's paper scores answers) of the
model's reply against the dataset's answer, for a seeded sample of LoCoMo questions, asked two ways
of the same model with the same compact system prompt (prompts/compact/respond.md): with the
context Engram assembles for that question (services.memory.context.assemble over the conversation
imported as `bench.recall locomo` imports it: the real import path, vectors and vocabulary filled, no
enrichment; its full shape, "Things said before", each line dated and named for its speaker) in the compact
prompt's memory note under the profile's budgets, and with no memory. The compact shape (compact_notes) shows
only the person's own lines ("user"), so for a conversation between two named people it shows none of the turns:
measured with it, Engram would be the no-memory row. "Today" in the system prompt is the day after the
conversation (the day recall is asked on), not this machine's date. (Its "Engram dated" way and ``--context-only``,
bench/RESULTS.md 2026-11-29, were removed on 2026-11-30.)
How to read it: F1 is 0-1 per question, averaged; the target is Engram ≥ 2× no memory. The sample
draws the same number of questions from each answered category (multi-hop, temporal, open-domain,
single-hop; adversarial questions have no answer in the dataset, only a refusal to score) with
random.Random(seed) over the dev conversations. A question asks for a short phrase.

Data: ``../shared/data/locomo-dev/`` (snap-research/locomo, CC BY-NC 4.0), read there, never copied;
absent → the bench says so and exits 0. The model: the embedded local model this bench starts
(llama.cpp, as `engram run` does), or the endpoint of OPENAI_BASE_URL when set.

Measured 2026-11-28, Qwen2.5-Coder-0.5B-Instruct Q4_K_M (merge of `mind` at 1cbb076, today's compact prompts and
budgets; Engram's context median 1,622 characters), load average 13-18: the run was stopped at 65 of the 100
questions (the JSON is written after each; --report prints it), 16-17 of each category:
  token F1     all    multi-hop  temporal  open-domain  single-hop
  Engram       0.116  0.115      0.026     0.075        0.250
  no memory    0.051  0.046      0.000     0.086        0.072       Engram / no memory 2.30× (target ≥ 2×)

Measured 2026-11-29 (bench/RESULTS.md): at load 25-38 the 0.5B, at nice 15 beside two nice -10 llama.cpp servers,
answered 4 questions of seed 29 in 40 minutes; the run resumes where it stopped (--resume).

    python -m bench.answers_locomo [--per-category 25] [--seed 28] [--data DIR] [--json out.json [--resume]]
                                   [--ways "Engram,no memory"] [--report out.json]
A failed call is tried again (the local server started again if it died); after four failures the run stops
with the questions so far in --json, and --resume asks the rest.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from openai import APIError, OpenAI
from sqlalchemy.orm import Session, sessionmaker

from bench.answers_score import locomo_f1
from bench.recall.locomo import CATEGORIES
from bench.recall.locomo_data import Question, find_data, load
from services.db import make_engine, make_sessionmaker
from services.embedded.lifecycle import free_port
from services.embedded.postgres import EmbeddedPostgres
from services.embeddings import load_embedder
from services.llm.local import LOCAL_LLM_ALIAS, local_llm_command, local_llm_model, local_llm_url, wait_for_llm
from services.llm.profile import compact_messages, load_profile
from services.llm.roles import load_role_configs
from services.memory.config import load_memory_config
from services.memory.context import assemble
from services.migrate import upgrade_head
from services.prompts import PromptLibrary
from services.settings import PROJECT_ROOT, Settings

ANSWERED = (1, 2, 3, 4)
# How the memory note is made for each way of asking: Engram's context, no memory.
WAYS: dict[str, Callable[[str], str]] = {"Engram": lambda context: context, "no memory": lambda context: ""}
SHORT = "{question} Answer in a few words."
LLM_START_S = 240.0
ATTEMPTS = 4


def sample(questions: list[Question], per_category: int, seed: int) -> list[Question]:
    """``per_category`` questions of each answered category (all of them when fewer), seeded."""
    rng = random.Random(seed)
    drawn = []
    for category in ANSWERED:
        pool = sorted((q for q in questions if q.category == category and q.answer), key=lambda q: (q.user, q.text))
        drawn.append(rng.sample(pool, min(per_category, len(pool))))
    # Asked in turn, a question of each category: a run cut short still covers every category.
    return [group[index] for index in range(max(map(len, drawn))) for group in drawn if index < len(group)]


class Model:
    """The endpoint of OPENAI_BASE_URL, or the local model served by a llama.cpp server started here."""

    def __init__(self) -> None:
        self.process: subprocess.Popen[bytes] | None = None
        base_url = os.environ.get("OPENAI_BASE_URL")
        self.name = base_url or ""
        if not base_url:
            base_url = self.start()
        self.client = OpenAI(base_url=base_url, api_key=os.environ.get("OPENAI_API_KEY") or "none", timeout=600,
                             max_retries=0)
        self.model = LOCAL_LLM_ALIAS if self.process else self.client.models.list().data[0].id

    def start(self) -> str:
        chosen = local_llm_model(Settings.from_env())
        assert chosen is not None
        model, path = chosen
        port = free_port()
        command = local_llm_command(path, port, n_ctx=model.n_ctx, n_threads=model.n_threads)
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                        start_new_session=True)
        base_url, self.name = local_llm_url(port), f"local {model.label}"
        wait_for_llm(base_url, LLM_START_S)
        return base_url

    def revive(self) -> None:
        """A local server that died (OOM on a shared box) is started again; an endpoint of a user's is left alone."""
        if self.process is not None and self.process.poll() is not None:
            print(f"  the local model's server exited ({self.process.returncode}); starting it again", flush=True)
            self.client = self.client.with_options(base_url=self.start())

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", help="folder of LoCoMo conversation files (default ../shared/data/locomo-dev)")
    parser.add_argument("--per-category", type=int, default=25)
    parser.add_argument("--seed", type=int, default=28)
    parser.add_argument("--json", type=Path, help="write every question, reply and F1 here")
    parser.add_argument("--ways", default="Engram,no memory",
                        help=f"comma-separated, of {', '.join(WAYS)} (default: Engram,no memory)")
    parser.add_argument("--resume", action="store_true", help="keep the questions already in --json; ask the rest")
    parser.add_argument("--report", type=Path, help="print the table of a --json file written before (or in part)")
    args = parser.parse_args()
    if args.report:
        print(report(json.loads(args.report.read_text())))
        return
    folder = find_data(args.data)
    if folder is None:
        print(f"bench.answers_locomo: no LoCoMo data found ({args.data or '../shared/data/locomo-dev'}); skipped")
        return
    settings = replace(Settings.from_env(), llm_profile=os.environ.get("ENGRAM_LLM_PROFILE") or "compact")
    profile = load_profile(settings)
    role = profile.roles(load_role_configs(PROJECT_ROOT / "configs"))["respond"]
    prompts = PromptLibrary(PROJECT_ROOT / "prompts")
    ways = [way.strip() for way in args.ways.split(",")]
    if unknown := [way for way in ways if way not in WAYS]:
        raise SystemExit(f"unknown way(s) {unknown}; known: {', '.join(WAYS)}")
    config = load_memory_config(PROJECT_ROOT / "configs")
    embedder = load_embedder("auto", cache_size=0)
    load_before = " ".join(f"{value:.1f}" for value in os.getloadavg())
    model = Model()
    rows: list[dict[str, Any]] = []
    if args.resume and args.json and args.json.exists():
        rows = json.loads(args.json.read_text())
    done = {(row["user"], row["question"]) for row in rows}
    try:
        with imported(folder, embedder) as (sessions, everything):
            questions = sample(everything, args.per_category, args.seed)
            print(f"LoCoMo QA: {len(questions)} questions ({args.per_category} a category of "
                  f"{', '.join(CATEGORIES[c] for c in ANSWERED)}, seed {args.seed}) on {model.name}; "
                  f"load average {load_before}", flush=True)
            started = time.monotonic()
            for index, question in enumerate(questions, 1):
                if (question.user, question.text) in done:
                    continue
                with sessions() as session:
                    context = assemble(session, embedder, question.user, question.text, config=config,
                                       now=question.now).text
                asked = SHORT.format(question=question.text)
                # Today is the day after the conversation, as when the bench recalls (not this machine's date).
                system = prompts.render(profile.prompt("respond"), now=question.now)
                # The recalled talk is this question's note, with the whole memory budget (as measured before
                # the note was split into the block about the person and the message's own part).
                budgets = replace(profile.budgets, recalled_tokens=profile.budgets.memory_tokens)
                replies = {way: ask(model, role, compact_messages(system, [], WAYS[way](context), asked, budgets))
                           for way in ways}
                rows.append({"user": question.user, "category": question.category, "question": question.text,
                             "answer": question.answer, "context_chars": len(context), "context": context,
                             **{way: {"reply": reply, "f1": locomo_f1(reply, question.answer, question.category)}
                                for way, reply in replies.items()}})
                if index % 20 == 0:
                    print(f"  {index}/{len(questions)} ({time.monotonic() - started:.0f} s)", flush=True)
                if args.json:  # after every question: a run cut short still leaves its figures (--report)
                    args.json.write_text(json.dumps(rows, indent=1))
    finally:
        model.stop()
    print(report(rows))
    print(f"load average {' '.join(f'{v:.1f}' for v in os.getloadavg())} (at the start {load_before})")


@contextmanager
def imported(folder: Path, embedder: Any) -> Iterator[tuple[sessionmaker[Session], list[Question]]]:
    """The conversations imported as `bench.recall locomo` imports them, in a throwaway PostgreSQL; their questions."""
    with tempfile.TemporaryDirectory(prefix="engram-answers-locomo-") as tmp:
        server = EmbeddedPostgres(Path(tmp), port=free_port())
        server.start()
        try:
            engine = make_engine(server.url, pool_size=2)
            upgrade_head(engine)
            sessions = make_sessionmaker(engine)
            yield sessions, load(sessions, embedder, folder)[0]
            engine.dispose()
        finally:
            server.stop()


def ask(model: Model, role: Any, messages: list[dict[str, str]]) -> str:
    """The reply; a failed call is tried again (the server revived if it died), and after ATTEMPTS raises, so a
    question is never scored on an empty reply the model did not give (a resumed run asks it again)."""
    for attempt in range(1, ATTEMPTS + 1):
        try:
            reply = model.client.chat.completions.create(model=model.model, messages=messages,  # type: ignore[arg-type]
                                                         temperature=0.0, max_tokens=role.max_tokens)
            return (reply.choices[0].message.content or "").strip()
        except APIError as exc:  # on a loaded machine a call can time out, or the server be killed
            print(f"  call failed ({type(exc).__name__}, attempt {attempt} of {ATTEMPTS})", flush=True)
            if attempt == ATTEMPTS:
                raise
            time.sleep(10 * attempt)
            model.revive()
    raise AssertionError("unreachable")


def report(rows: list[dict[str, Any]]) -> str:
    by_category: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_category[row["category"]].append(row)
    ways = [way for way in WAYS if rows and way in rows[0]]
    lines = [f"\n{'token F1':<13} {'all':>6}  " + "  ".join(f"{CATEGORIES[c]:>11}" for c in sorted(by_category))]
    means = {}
    for way in ways:
        means[way] = sum(row[way]["f1"] for row in rows) / max(1, len(rows))
        cells = "  ".join(f"{sum(r[way]['f1'] for r in group) / len(group):>11.3f}"
                          for _, group in sorted(by_category.items()))
        lines.append(f"{way:<13} {means[way]:>6.3f}  {cells}")
    for way in ways:
        if way != "no memory" and means.get("no memory"):
            lines.append(f"{way} / no memory: {means[way] / means['no memory']:.2f}× (target ≥ 2×)")
    counts = ", ".join(f"{CATEGORIES[c]} {len(group)}" for c, group in sorted(by_category.items()))
    lines.append(f"{len(rows)} questions ({counts})")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
