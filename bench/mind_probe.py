"""Does the local model use what it remembers? A quick probe of the compact prompts, without the pipeline.

Each probe of ``bench/data/mind_probes.jsonl`` (written before any prompt was tuned on it) is one
model call built by the code the digest and the chunker use:

- ``respond``: facts and recalled turns rendered by services/memory/context.py, the history and
  the message put together by services/llm/profile.compact_messages, the respond role's settings;
  scored by expected words (any of each group), forbidden words (a pet's name used for the person,
  the meat offered to a vegetarian), and echo (the reply repeats the person's message).
- ``chunk``: the compact profile's chunk, read from the person's words (services/memory/from_words.py, no
  model call); scored by facts holding the expected words, and no fact made of the assistant's words.

A third of the probes (ids whose number divides by 3) is held out: never read while tuning, its
detail shown only with ``--show-held-out``. How to read it: the held-out counts are the figure (the tune
counts were looked at); it is a quick probe of prompts, and ``bench.answers`` through POST /chat is the measure.

    python -m bench.mind_probe [--model qwen2.5-0.5b|smollm2] [--split tune|held-out|all] [--kind respond|chunk]
        [--threads N] [--show]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import statistics
import subprocess
import time
from functools import partial
from typing import Any

from services.embedded.lifecycle import free_port
from services.llm.client import LLMClient
from services.llm.fallback import generate_with_fallback
from services.llm.guard import ScaffoldGuard
from services.llm.local import local_llm_command, local_llm_url, wait_for_llm
from services.llm.model_files import local_model, verified_model
from services.llm.profile import compact_messages, load_profile
from services.llm.roles import load_role_configs
from services.memory.config import MemoryConfig
from services.memory.context import Personal, render
from services.memory.from_words import chunk_from_words
from services.memory.recall import RecallHit
from services.prompts import PromptLibrary
from services.settings import PROJECT_ROOT, Settings

PROBES = PROJECT_ROOT / "bench" / "data" / "mind_probes.jsonl"
WORD = re.compile(r"[a-z0-9']+")
# Answering a question about the person in their voice ("My dog's name is Pixel", "I am Dana").
SPEAKS_AS_PERSON = re.compile(r"^(?:my\b|i (?:am|'m|have|live|work|play|drive|teach|ran)\b)", re.IGNORECASE)


def held_out(probe: dict[str, Any]) -> bool:
    return int(probe["id"][1:]) % 3 == 0


def _at(day: str) -> dt.datetime:
    return dt.datetime.fromisoformat(day).replace(hour=12, tzinfo=dt.UTC)


def memory_text(probe: dict[str, Any], settings: Settings) -> str:
    """What context assembly would render for the probe's facts and recalled turns under the profile."""
    profile = load_profile(settings)
    cfg = MemoryConfig()
    facts = [RecallHit(text, "fact", 1.0, {"relevance": 1.0}, [], [], n, at=_at(day))
             for n, (day, text) in enumerate(probe.get("facts") or [])]
    lines = [{"speaker": speaker, "text": text, "at": _at(day)} for day, speaker, text in probe.get("turns") or []]
    exchanges = [RecallHit(lines[0]["text"], "exchange", 1.0, {"relevance": 1.0}, [1], [], 1, at=lines[0]["at"],
                           lines=lines)] if lines else []
    exchanges = exchanges[: profile.budgets.memory_turns] if profile.compact else exchanges
    budget = profile.budgets.memory_tokens if profile.compact else cfg.context.budget_tokens
    return render(Personal(), facts, [], exchanges, cfg, budget, compact=profile.compact)


def _norm(text: str) -> str:
    return " ".join(WORD.findall(text.lower()))


def echoed(reply: str, message: str) -> bool:
    """The reply repeats the person's message (all of it, at its start, or as most of the reply)."""
    said, answered = _norm(message), _norm(reply)
    return bool(said) and (answered.startswith(said) or (len(said.split()) >= 4 and said in answered))


def score_reply(probe: dict[str, Any], reply: str) -> dict[str, Any]:
    lowered = reply.lower()
    missing = [group for group in probe.get("expect") or [] if not any(word in lowered for word in group)]
    forbidden = [word for word in probe.get("forbid") or [] if re.search(rf"\b{re.escape(word)}\b", lowered)]
    echo = echoed(reply, probe["message"])
    swapped = probe["message"].rstrip().endswith("?") and SPEAKS_AS_PERSON.match(reply.strip()) is not None
    return {"right": not missing and not forbidden and not echo and not swapped, "missing": missing,
            "forbidden": forbidden, "echo": echo, "swapped": swapped}


def run_respond(llm: LLMClient, prompts: PromptLibrary, settings: Settings, probe: dict[str, Any]) -> dict[str, Any]:
    profile = load_profile(settings)
    system = prompts.render(profile.prompt("respond"))
    messages = compact_messages(system, probe.get("history") or [], memory_text(probe, settings), probe["message"],
                                profile.budgets)
    started = time.monotonic()
    first: list[float] = []
    completion, fallback = generate_with_fallback(
        llm, "respond", messages, lambda _t: first.append(time.monotonic() - started) if not first else None,
        guard=partial(ScaffoldGuard, message=probe["message"]))
    result = score_reply(probe, completion.text)
    result.update(reply=completion.text, fallback=fallback, first_s=first[0] if first else None,
                  prompt_tokens=completion.prompt_tokens)
    result["right"] = result["right"] and not fallback
    return result


def run_chunk(probe: dict[str, Any]) -> dict[str, Any]:
    """The chunk of the probe's message, read from the words as the compact profile's chunker does."""
    chunk = chunk_from_words(probe["message"])
    facts = [fact["text"] for fact in chunk["facts"]]
    lowered = " ".join(facts).lower()
    missing = [group for group in probe.get("expect_facts") or [] if not any(word in lowered for word in group)]
    untrue = [fact for fact in facts if any(word in fact.lower() for word in probe.get("forbid_facts") or [])]
    extra = not probe.get("expect_facts") and facts  # a message that states nothing about the person
    return {"valid": True, "right": not missing and not untrue and not extra, "facts": facts, "missing": missing,
            "untrue": untrue, "gist": chunk["gists"][0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default=None, help="ENGRAM_LOCAL_MODEL value (default: the settings')")
    parser.add_argument("--split", choices=("tune", "held-out", "all"), default="tune")
    parser.add_argument("--kind", choices=("respond", "chunk", "all"), default="all")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--show", action="store_true", help="print every probe's output")
    parser.add_argument("--show-held-out", action="store_true")
    parser.add_argument("--base-url", help="an already running server instead of starting one")
    args = parser.parse_args()
    env = {"ENGRAM_LLM_PROFILE": "compact", **({"ENGRAM_LOCAL_MODEL": args.model} if args.model else {})}
    settings = Settings.from_env({**__import__("os").environ, **env})
    probes = [json.loads(line) for line in PROBES.read_text().splitlines() if line.strip()]
    probes = [p for p in probes if args.split == "all" or held_out(p) == (args.split == "held-out")]
    probes = [p for p in probes if args.kind == "all" or p["kind"] == args.kind]
    server = None
    base_url = args.base_url
    if base_url is None:
        model = local_model(settings.local_model)
        path = verified_model(model, settings.model_files_dir)
        port = free_port()
        server = subprocess.Popen(local_llm_command(path, port, n_ctx=model.n_ctx,
                                                    n_threads=args.threads or model.n_threads),
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        base_url = local_llm_url(port)
        wait_for_llm(base_url, timeout=120)
    try:
        llm = LLMClient(base_url=base_url, api_key=None,
                        roles=load_profile(settings).roles(load_role_configs(settings.configs_dir)))
        prompts = PromptLibrary(settings.prompts_dir)
        results = []
        for probe in probes:
            result = run_respond(llm, prompts, settings, probe) if probe["kind"] == "respond" else \
                run_chunk(probe)
            result.update(id=probe["id"], kind=probe["kind"], held_out=held_out(probe))
            results.append(result)
            if args.show and (not result["held_out"] or args.show_held_out):
                print(json.dumps({k: v for k, v in result.items() if k not in ("held_out",)}, ensure_ascii=False))
        report(results, settings.local_model)
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=30)


def report(results: list[dict[str, Any]], model: str) -> None:
    for split in (False, True):
        for kind in ("respond", "chunk"):
            rows = [r for r in results if r["kind"] == kind and r["held_out"] == split]
            if not rows:
                continue
            name = "held-out" if split else "tune"
            right = sum(r["right"] for r in rows)
            line = f"{model} {name:8} {kind:7} right {right}/{len(rows)}"
            if kind == "respond":
                firsts = sorted(r["first_s"] for r in rows if r.get("first_s") is not None)
                line += (f"  echo {sum(r['echo'] for r in rows)}  as the person {sum(r['swapped'] for r in rows)}"
                         f"  forbidden {sum(bool(r['forbidden']) for r in rows)}"
                         f"  fallbacks {sum(r['fallback'] for r in rows)}"
                         f"  first delta p50 {statistics.median(firsts) if firsts else float('nan'):.2f} s")
            else:
                line += (f"  valid {sum(r['valid'] for r in rows)}/{len(rows)}"
                         f"  facts {sum(len(r['facts']) for r in rows)}"
                         f"  untrue {sum(len(r.get('untrue') or []) for r in rows)}")
            print(line)


if __name__ == "__main__":
    main()
