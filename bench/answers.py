"""Are Engram's replies right? People tell it things over several conversations, then ask; we score the answers.

What it measures: the share of questions answered right through the real `POST /chat` path (SSE) of an
`engram run` this bench starts itself (its own data directory and port; the embedded local model, or
the endpoint of OPENAI_BASE_URL when set), on the scenarios of bench/answers_scenarios.toml: each
persona is a user of its own (an API token each) who tells things in conversations of their own
threads, the chunker given time to read each conversation before the next (the bench polls the
memory rows and the queue, never a fixed sleep), then asks, in a new thread. A reply is right when it
holds the expected words and none of the forbidden stale ones (bench/answers_score.py).
Questions of kind "untold" ask what the person never said; right when the reply says so instead of
inventing: a column of their own, outside the share right.

How to read it: one row per way of answering, per split. `Engram` is the real system. `no memory` asks
the same model the same questions with the same compact system prompt (prompts/compact/respond.md)
and only the question thread's own window; `everything` puts every earlier turn of the person into
that prompt as history (newest kept when it does not fit the context window: "fit" says for how many
questions it all fitted). Engram should sit far above `no memory` and near or above `everything`.
The tuning split may be looked at while tuning; every other split the file names ("frozen", …:
whole personas) is a figure on data nobody tuned on, reported apart, its wrong answers not printed
unless --show-frozen. Also printed: first delta p50/p95 over every chat turn, fallback replies ("I had
trouble ..."), and echoes (a reply that repeats the person's message).
Timings depend on what else runs on the cores; state the load average.

    python -m bench.answers [--personas maya,greta] [--split tuning|frozen|all] [--json out.json]
                            [--enrich-wait-s 600] [--no-baselines] [--show-frozen] [--report saved.json]

Measured 2026-11-28 on 2 shared cores (one persona: 2.5-13 min with SmolLM2, 6-21 min with Qwen, by load),
only part of the set ran; right share, Engram / no memory / everything:
  SmolLM2-135M  tuning maya (7)            29% / 14% /  0%   frozen greta (6)       33% /  0% /  0%
                first delta p50 12.9 s (load 9) and 0.8 s (load 5); fallbacks 1; echoes 0 of 30 turns
  Qwen2.5-0.5B  tuning maya, tomasz (13)   54% /  8% / 85%   frozen greta, ben (12) 50% /  8% / 58%
  (merge of `mind` at 1cbb076, today's compact prompts) first delta p50 19.2 s (load 13-18) and 6.4 s (load 4);
                fallbacks 0; echoes 14 of 58 turns (the person's statement said back, the issue's echo)
The whole set (12 personas, 74 questions) wants a quiet machine: ~1 h for SmolLM2, ~1.5 h for Qwen at load 4.
Later runs (2026-11-29, frozen: 0.5B 60 %, 1.5B 76 %, SmolLM2 60 %; the 1.5B on 4 tuning people 92 %) are in
bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
import tomllib
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import httpx
import redis
from openai import APIError, OpenAI
from rq import Queue
from rq.registry import FailedJobRegistry, StartedJobRegistry
from sqlalchemy import create_engine, text

from bench.answers_score import UNTOLD, Expectation, FactVerdict, is_echo, judge_fact, score
from bench.local import TurnResult, new_thread, percentile, turn
from consumer import WORKER_QUEUES
from services.db import sqlalchemy_url
from services.llm.profile import LLMProfile, compact_messages, load_profile
from services.llm.roles import RoleConfig, load_role_configs
from services.prompts import PromptLibrary
from services.settings import PROJECT_ROOT, Settings
from tests.system import System, running_system

SCENARIOS = Path(__file__).with_name("answers_scenarios.toml")
KINDS = ("fact", "changed", "preference", "list", "reminder", "time")  # told, then asked: the "right" share
# Asked about what was never told (bench/answers_score.py): a column of its own, outside "right", so that the share
# right stays comparable with the runs before these questions were written.
COLUMNS = (*KINDS, UNTOLD)
ENRICH_QUEUES = (WORKER_QUEUES["chunker"], WORKER_QUEUES["episodic"])
TOKEN_PREFIX = "answers-bench-"
BASELINE_TIMEOUT_S = 600.0  # llama.cpp serves one request at a time: a call may queue behind the chunker's
CHARS_PER_TOKEN = 3.5  # a conservative guess for English under these tokenizers: "everything" must fit


@dataclass
class Persona:
    name: str
    split: str
    conversations: list[list[str]]
    questions: list[Expectation]

    @property
    def user(self) -> str:
        return f"bench-{self.name}"

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {TOKEN_PREFIX}{self.name}"}


@dataclass
class Answer:
    persona: str
    split: str
    kind: str
    ask: str
    way: str  # "Engram", "no memory", "everything"
    reply: str
    right: bool
    missing: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    mode: str = ""
    fitted: bool = True


def load_personas(path: Path = SCENARIOS, names: list[str] | None = None, split: str = "all") -> list[Persona]:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    personas = [Persona(str(item["name"]), str(item["split"]), [list(c) for c in item["conversations"]],
                        [Expectation.of(q) for q in item["question"]]) for item in data["persona"]]
    unknown = sorted(set(names or ()) - {p.name for p in personas})
    if unknown:
        raise SystemExit(f"bench.answers: no persona {', '.join(unknown)} in {path.name}")
    # A kind no column shows would be asked and then counted nowhere: "untol" for "untold".
    misnamed = sorted({f"{p.name}: {q.kind!r}" for p in personas for q in p.questions if q.kind not in COLUMNS})
    if misnamed:
        raise SystemExit(f"bench.answers: unknown question kind in {path.name} ({', '.join(misnamed)}; "
                         f"kinds are {', '.join(COLUMNS)})")
    if split != "all" and split not in {p.split for p in personas}:
        raise SystemExit(f"bench.answers: no split {split!r} in {path.name} (it has "
                         f"{', '.join(splits_in(p.split for p in personas))}, or all)")
    chosen = [p for p in personas if split in ("all", p.split)]
    return sorted((p for p in chosen if p.name in names), key=lambda p: names.index(p.name)) if names else chosen


def splits_in(names: Iterable[str]) -> list[str]:
    """The splits named, "tuning" first, then the frozen ones in the file's order (each reported apart)."""
    seen = list(dict.fromkeys(names))
    return sorted(seen, key=lambda name: name != "tuning")


def wait_for_enrichment(engram: System, user: str, wait_s: float) -> float:
    """Seconds until every exchange of ``user`` has its chunk row, or the enrichment queues sit empty."""
    started = time.monotonic()
    engine = create_engine(sqlalchemy_url(engram.urls()[1]))
    client = redis.Redis.from_url(engram.urls()[0])
    idle_since: float | None = None
    try:
        while time.monotonic() - started < wait_s:
            with engine.connect() as connection:
                exchanges, chunks = connection.execute(text(
                    "SELECT (SELECT count(*) FROM exchanges WHERE user_id = :u),"
                    " (SELECT count(*) FROM memory_chunks WHERE user_id = :u)"), {"u": user}).one()
            busy = sum(Queue(name, connection=client).count + StartedJobRegistry(name, connection=client).count
                       for name in ENRICH_QUEUES)
            if chunks >= exchanges:
                break
            idle_since = None if busy else idle_since or time.monotonic()
            if idle_since is not None and time.monotonic() - idle_since > 5:
                break  # nothing queued or running: those exchanges get no chunk (a fast-path list add, IGNORE)
            time.sleep(1)
    finally:
        engine.dispose()
        client.close()
    return time.monotonic() - started


@dataclass
class Enrichment:
    """What the chunker made of every persona's conversations (the issue's "enrichment that is true")."""

    facts: dict[str, list[FactVerdict]] = field(default_factory=dict)  # by persona
    splits: dict[str, str] = field(default_factory=dict)
    chunks: int = 0
    failed: int = 0

    def add(self, persona: Persona, facts: list[FactVerdict], chunks: int, failed: int) -> None:
        self.facts[persona.name], self.splits[persona.name] = facts, persona.split
        self.chunks += chunks
        self.failed = failed  # the registry counts every persona's failed jobs so far

    def lines(self, show_frozen: bool) -> list[str]:
        valid = self.chunks / max(1, self.chunks + self.failed)
        out = [f"\nchunker: {self.chunks} exchanges enriched, {self.failed} jobs failed (valid {valid:.0%})"]
        for split in splits_in(self.splits.values()):
            facts = [f for name, kept in self.facts.items() if self.splits[name] == split for f in kept]
            if facts:
                out.append(f"  {split}: {len(facts)} active facts, {sum(f.true for f in facts)} true of the person "
                           f"({sum(f.true for f in facts) / len(facts):.0%})")
                if split == "tuning" or show_frozen:
                    out += [f"    not true ({f.why}): {f.text[:100]!r}" for f in facts if not f.true]
        return out


def check_facts(engram: System, persona: Persona) -> tuple[list[FactVerdict], int, int]:
    """The person's active facts judged (``judge_fact``), and how many chunker jobs stored a chunk or failed."""
    said = [message for conversation in persona.conversations for message in conversation]
    changed = tuple(phrase for question in persona.questions if question.kind == "changed"
                    for phrase in question.forbidden)
    engine = create_engine(sqlalchemy_url(engram.urls()[1]))
    client = redis.Redis.from_url(engram.urls()[0])
    try:
        with engine.connect() as connection:
            facts = connection.execute(text("SELECT text, speaker FROM facts WHERE user_id = :u"
                                            " AND superseded_at IS NULL ORDER BY id"), {"u": persona.user}).all()
            chunks = connection.execute(text("SELECT count(*) FROM memory_chunks WHERE user_id = :u"),
                                        {"u": persona.user}).scalar_one()
        failed = FailedJobRegistry(WORKER_QUEUES["chunker"], connection=client).count
    finally:
        engine.dispose()
        client.close()
    return [judge_fact(row.text, row.speaker, said, changed) for row in facts], int(chunks), failed


class Baselines:
    """The same model asked directly, with the compact respond prompt: no memory, and everything said so far."""

    def __init__(self, engram: System, profile: LLMProfile) -> None:
        base_url = os.environ.get("OPENAI_BASE_URL")
        if not base_url:
            base_url = f"http://127.0.0.1:{(engram.data_dir / 'run' / 'llm.port').read_text().strip()}/v1"
        self.client = OpenAI(base_url=base_url, api_key=os.environ.get("OPENAI_API_KEY") or "none",
                             timeout=BASELINE_TIMEOUT_S, max_retries=0)
        self.role: RoleConfig = profile.roles(load_role_configs(PROJECT_ROOT / "configs"))["respond"]
        self.model = self.role.model if self.role.model != "default" else self.client.models.list().data[0].id
        self.budgets = profile.budgets
        self.system = PromptLibrary(PROJECT_ROOT / "prompts").render("compact/respond")
        room = self.role.context_window - self.role.max_tokens - len(self.system) / CHARS_PER_TOKEN - 100
        self.everything = replace(self.budgets, history_exchanges=10_000, history_chars=int(room * CHARS_PER_TOKEN),
                                  reply_chars=10_000)

    def ask(self, history: list[dict[str, str]], question: str, everything: bool) -> tuple[str, bool]:
        """The model's reply, and whether the whole history fitted the prompt."""
        budgets = self.everything if everything else self.budgets
        messages = compact_messages(self.system, history, "", question, budgets)
        fitted = sum(m["role"] == "user" for m in messages) - 1 == len(history)
        try:
            reply = self.client.chat.completions.create(model=self.model, messages=messages,  # type: ignore[arg-type]
                                                        temperature=self.role.temperature,
                                                        max_tokens=self.role.max_tokens)
        except APIError as exc:  # on a loaded machine a call can time out: a wrong answer, not a lost run
            print(f"  baseline call failed ({type(exc).__name__}); scored as an empty reply", flush=True)
            return "", fitted
        return (reply.choices[0].message.content or "").strip(), fitted


def ask_engram(engram: System, message: str, thread: dict[str, str], persona: Persona) -> TurnResult:
    """One chat turn; a turn that fails over HTTP (a timeout on a loaded machine) is an empty reply, not a lost run."""
    started = time.monotonic()
    try:
        return turn(engram, message, thread, persona.headers)
    except httpx.HTTPError as exc:
        print(f"  chat turn failed ({type(exc).__name__}); scored as an empty reply", flush=True)
        return TurnResult(message, "", "error", None, time.monotonic() - started, False, type(exc).__name__)


def run_persona(engram: System, persona: Persona, baselines: Baselines | None, enrich_wait_s: float,
                turns: list[TurnResult], waits: list[float], enrichment: Enrichment) -> list[Answer]:
    told: list[dict[str, str]] = []
    for conversation in persona.conversations:
        thread = new_thread(engram, persona.headers)
        for message in conversation:
            result = ask_engram(engram, message, thread, persona)
            turns.append(result)
            told.append({"user": message, "reply": result.reply})
        waits.append(wait_for_enrichment(engram, persona.user, enrich_wait_s))
    enrichment.add(persona, *check_facts(engram, persona))
    answers: list[Answer] = []
    thread = new_thread(engram, persona.headers)
    asked: dict[str, list[dict[str, str]]] = {"no memory": [], "everything": []}
    for question in persona.questions:
        result = ask_engram(engram, question.ask, thread, persona)
        turns.append(result)
        answers.append(_answer(persona, question, "Engram", result.reply, mode=result.mode))
        if baselines is None:
            continue
        for way, everything in (("no memory", False), ("everything", True)):
            reply, fitted = baselines.ask((told if everything else []) + asked[way], question.ask, everything)
            asked[way].append({"user": question.ask, "reply": reply})
            answers.append(_answer(persona, question, way, reply, fitted=fitted))
    return answers


def _answer(persona: Persona, question: Expectation, way: str, reply: str, **extra: Any) -> Answer:
    verdict = score(question, reply)
    return Answer(persona.name, persona.split, question.kind, question.ask, way, reply, verdict.right,
                  verdict.missing, verdict.stale, **extra)


def share(answers: list[Answer]) -> str:
    return f"{sum(a.right for a in answers) / len(answers):>5.0%}" if answers else "    -"


def table(answers: list[Answer], turns: list[TurnResult], show_frozen: bool) -> str:
    lines = []
    for split in splits_in(a.split for a in answers):
        chosen = [a for a in answers if a.split == split]
        questions = sum(a.way == "Engram" for a in chosen)
        lines.append(f"\n{split} ({questions} questions, {len({a.persona for a in chosen})} personas)")
        lines.append(f"  {'way':<11} {'right':>5}  " + "  ".join(f"{kind:>10}" for kind in COLUMNS) + "   fit")
        for way in ("Engram", "no memory", "everything"):
            rows = [a for a in chosen if a.way == way]
            if rows:
                kinds = "  ".join(f"{share([a for a in rows if a.kind == kind]):>10}" for kind in COLUMNS)
                told = [a for a in rows if a.kind != UNTOLD]
                fit = f"   {sum(a.fitted for a in rows)}/{len(rows)}" if way == "everything" else ""
                lines.append(f"  {way:<11} {share(told)}  {kinds}{fit}")
        if split == "tuning" or show_frozen:
            for a in chosen:
                if a.way == "Engram" and not a.right:
                    why = "; ".join(filter(None, ["missing " + ", ".join(a.missing) if a.missing else "",
                                                  "stale " + ", ".join(a.stale) if a.stale else ""]))
                    lines.append(f"    wrong [{a.persona}/{a.kind}/{a.mode}] {a.ask!r} -> {a.reply[:110]!r} ({why})")
    firsts = [t.first_delta_s if t.first_delta_s is not None else t.message_s for t in turns]
    echoes = [t for t in turns if _echoed(t)]
    lines.append(f"\nchat turns {len(turns)}: first delta p50 {percentile(firsts, 0.5):.2f} s, "
                 f"p95 {percentile(firsts, 0.95):.2f} s; fallbacks {sum(t.fallback for t in turns)}; "
                 f"echoes {len(echoes)}")
    lines += [f"  echo: {t.text!r} -> {t.reply[:100]!r}" for t in echoes[:10]]
    return "\n".join(lines)


def _echoed(turn: TurnResult) -> bool:
    """A statement said back; an action's confirmation restates what it will do ("Done: I'll remind you on Saturday
    … to buy the food for Pufi …" for "Remind me on Saturday to buy the food for Pufi …") and is no echo."""
    return turn.mode != "ACT" and is_echo(turn.text, turn.reply)


def summary(answers: list[Answer], turns: list[TurnResult], waits: list[float]) -> dict[str, Any]:
    firsts = [t.first_delta_s if t.first_delta_s is not None else t.message_s for t in turns]
    result: dict[str, Any] = {"first_delta_p50_s": percentile(firsts, 0.5),
                              "first_delta_p95_s": percentile(firsts, 0.95),
                              "fallbacks": sum(t.fallback for t in turns),
                              "echoes": sum(_echoed(t) for t in turns), "turns": len(turns),
                              "enrichment_wait_s": waits, "load_average": os.getloadavg()}
    for split in [*splits_in(a.split for a in answers), "all"]:
        for way in ("Engram", "no memory", "everything"):
            rows = [a for a in answers if a.way == way and split in ("all", a.split)]
            told = [a for a in rows if a.kind != UNTOLD]
            if told:
                result[f"{split}/{way}"] = {"right": sum(a.right for a in told) / len(told), "questions": len(told),
                                            **{kind: sum(a.right for a in rows if a.kind == kind)
                                               / sum(a.kind == kind for a in rows)
                                               for kind in COLUMNS if any(a.kind == kind for a in rows)}}
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--personas", help="comma-separated persona names (default: every one of the split)")
    parser.add_argument("--split", default="all", help="a split the scenarios name (tuning, frozen) or all")
    parser.add_argument("--scenarios", type=Path, default=SCENARIOS)
    parser.add_argument("--json", type=Path, help="write every answer and the summary here")
    parser.add_argument("--enrich-wait-s", type=float, default=600.0, help="at most this long after a conversation")
    parser.add_argument("--no-baselines", action="store_true")
    parser.add_argument("--show-frozen", action="store_true", help="print the frozen splits' wrong answers too")
    parser.add_argument("--data-dir", type=Path)
    parser.add_argument("--report", type=Path, help="print the table of a --json file written before (or in part)")
    args = parser.parse_args()
    if args.report:
        saved = json.loads(args.report.read_text())
        print(f"{args.report}: {saved['model']}")
        print(table([Answer(**a) for a in saved["answers"]], [TurnResult(**t) for t in saved["turns"]],
                    args.show_frozen))
        return
    personas = load_personas(args.scenarios, args.personas.split(",") if args.personas else None, args.split)
    if not personas:
        raise SystemExit("bench.answers: no persona chosen")
    data_dir = args.data_dir or Path(tempfile.mkdtemp(prefix="engram-bench-answers-")) / "data"
    data_dir.mkdir(parents=True, exist_ok=True)
    tokens = ",".join(f"{TOKEN_PREFIX}{p.name}:{p.user}" for p in personas)
    endpoint = os.environ.get("OPENAI_BASE_URL")
    profile_name = os.environ.get("ENGRAM_LLM_PROFILE") or ("full" if endpoint else "compact")
    profile = load_profile(replace(Settings.from_env(), llm_profile=profile_name))
    load_before = " ".join(f"{value:.1f}" for value in os.getloadavg())
    started = time.monotonic()
    turns: list[TurnResult] = []
    waits: list[float] = []
    answers: list[Answer] = []
    enrichment = Enrichment()
    with running_system(data_dir, ENGRAM_API_TOKENS=tokens) as engram:
        baselines = None if args.no_baselines else Baselines(engram, profile)
        model = endpoint or f"the embedded local model {Settings.from_env().local_model}"
        print(f"bench.answers: {len(personas)} personas on {model}, "
              f"profile {profile.name}; load average {load_before}", flush=True)
        for persona in personas:
            answers += run_persona(engram, persona, baselines, args.enrich_wait_s, turns, waits, enrichment)
            right = [a.right for a in answers if a.persona == persona.name and a.way == "Engram"]
            print(f"  {persona.name} ({persona.split}): {sum(right)}/{len(right)} right "
                  f"({time.monotonic() - started:.0f} s)", flush=True)
            if args.json:  # after every persona: a long run cut short still leaves its figures (--report)
                args.json.write_text(json.dumps({"summary": summary(answers, turns, waits), "model": model,
                                                 "facts": {name: [asdict(f) for f in kept]
                                                           for name, kept in enrichment.facts.items()},
                                                 "answers": [asdict(a) for a in answers],
                                                 "turns": [asdict(t) for t in turns]}, indent=1))
    print(table(answers, turns, args.show_frozen))
    print("\n".join(enrichment.lines(args.show_frozen)))
    load = " ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"enrichment waits: {sum(waits):.0f} s in all (max {max(waits, default=0):.0f} s); wall "
          f"{time.monotonic() - started:.0f} s; load average {load} (at the start {load_before})")


if __name__ == "__main__":
    main()
