"""``engram route``: show how a message would be routed, with signals and scores, without replying."""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Iterator
from typing import Any, TextIO

from cli.arguments import one_input, open_input
from services.router.objects import request_object
from services.router.skills import skill_explanation, skill_hint
from services.router.textview import text_view
from services.settings import Settings


def register(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = commands.add_parser("route", help="route a message deterministically and show why")
    parser.add_argument("text", nargs="?", help="the message (or use --file)")
    parser.add_argument("--file", "-f", help="route one message per line of this file ('-' for stdin); JSON lines out")
    parser.add_argument("--user", help="use this user's current thread as context (working memory, last mode)")
    parser.add_argument("--json", action="store_true", help="print the full decision as JSON")
    parser.add_argument("--no-embedding", action="store_true", help="route on text signals only (no model load)")
    parser.set_defaults(handler=run)


def run(settings: Settings, args: argparse.Namespace) -> int:
    one_input(args.text, args.file, "message")
    stream = open_input(args.file) if args.file else None  # before loading the model: fail fast
    router = _router(settings, embed=not args.no_embedding)
    context = _user_context(settings, args.user) if args.user else None
    if stream is not None:
        with stream:
            for record in route_lines(router, stream, context):
                print(json.dumps(record), flush=True)
        return 0
    decision = router.route_text(args.text, context)
    if args.json:
        print(json.dumps(decision.to_dict(), indent=2))
    else:
        _print_human(args.text, decision)
    return 0


def route_lines(router: Any, lines: TextIO, context: dict[str, Any] | None) -> Iterator[dict[str, Any]]:
    """One JSON record per non-empty line: text, mode, confidence, scores, signals, latency_ms."""
    for line in lines:
        text = line.rstrip("\n")
        if not text.strip():
            continue
        started = time.perf_counter()
        decision = router.route_text(text, context)
        yield {
            "text": text,
            "mode": decision.mode,
            "confidence": round(decision.confidence, 4),
            "scores": decision.scores,
            "signals": decision.signals,
            "skill": skill_hint(text, decision.signals),
            "request": request_read(text),
            # Embedding included: what a person waits for; the decision keeps routing-only latency.
            "latency_ms": round((time.perf_counter() - started) * 1000, 3),
            "routing_ms": decision.latency_ms,
        }


def request_read(text: str) -> str | None:
    """The request's verb, its object and what it leaves out, as the router parsed it (None: no request found)."""
    found = request_object(text_view(text).lower)
    return found.explain() if found is not None else None


def _router(settings: Settings, *, embed: bool) -> Any:
    from services.router.mode_router import ModeRouter

    embedder = None
    if embed:
        from services.embeddings import load_embedder

        embedder = load_embedder(settings.embedder, graph_dir=settings.models_dir)
    return ModeRouter(settings.configs_dir, embedder)


def _user_context(settings: Settings, user: str) -> dict[str, Any]:
    """Working memory and last mode of the user's current thread, as the digest job would see them."""
    import redis

    from services.embedded.servers import ensure_servers
    from services.threads import ThreadStore, context_warmth

    handle = ensure_servers(settings, want_postgres=False) if settings.redis_url is None else None
    try:
        client = redis.Redis.from_url(handle.redis_url if handle else settings.redis_url)  # type: ignore[arg-type]
        threads = ThreadStore(client)
        thread_id = threads.current_thread(user)
        if thread_id is None:
            return {}
        state = threads.state(thread_id)
        memory = [[m.get("user", ""), m.get("reply", "")] for m in threads.working_memory(thread_id)]
        return {
            "working_memory": memory,
            "context_warmth": context_warmth(state, time.time()),
            "previous_mode": state.last_mode,
            "turns_since_previous_mode": max(1, state.turns_since_mode),
            "topic_confidence": state.topic_confidence,
            "pending_confirmation": bool(state.extra.get("pending_action")),
        }
    finally:
        if handle is not None:
            handle.stop()


def _print_human(text: str, decision: Any) -> None:
    print(f"{decision.mode}  (confidence {decision.confidence:.2f}, margin {decision.margin:.2f}, "
          f"{decision.latency_ms:.3f} ms routing)")
    print(f"message: {text!r}")
    print("scores:  " + "  ".join(f"{m}={s:.2f}" for m, s in sorted(decision.scores.items(), key=lambda i: -i[1])))
    active = {k: v for k, v in decision.signals.items() if v}
    print("signals: " + ", ".join(f"{k}={v:g}" for k, v in sorted(active.items())))
    request = request_read(text)
    if request:
        print(f"request: {request}")
    skill = skill_explanation(text, decision.signals)
    if skill:
        print(f"skill:   {skill}")
    if decision.tiebreak_eligible:
        print("close call: the chat path would ask the LLM tie-breaker between the top two")
