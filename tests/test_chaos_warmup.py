"""The chaos soak's own rules: when it starts judging a process's memory (bench/chaos_checks.py ``warm_from``):
only once every kind of work it can be given has run in it, so a one-off model load is in its level and not counted
as growth; and its request logs outlive the run, since every chat's log is read again at the end."""

from __future__ import annotations

from bench.chaos import events_ttl_s
from bench.chaos_checks import RSS_SETTLE_S, warm_from
from services.settings import Settings

BORN = 1000.0


def run(service: str, at: float, outcome: str = "ran", **details: int) -> tuple[str, float, float, str, dict]:
    return service, at, at + 1.0, outcome, dict(details)


def test_warm_once_a_prompt_was_answered_and_every_service_ran_after_it() -> None:
    runs = [run("experience", BORN + 10), run("reminders", BORN + 20, reminders=1, prompts=0),
            run("reminders", BORN + 70, prompts=1), run("vector_backfill", BORN + 80, "skipped"),
            run("experience", BORN + 90), run("drift", BORN + 100), run("reminders", BORN + 102, prompts=0)]
    # The prompt at +70 loads the request graph; then every service has run once after it (drift last, at +100).
    assert warm_from(runs, BORN) == BORN + 101.0


def test_not_warm_without_a_prompt_or_while_a_service_has_not_run_since() -> None:
    no_prompt = [run("reminders", BORN + 5, reminders=2, prompts=0), run("experience", BORN + 30)]
    assert warm_from(no_prompt, BORN) is None
    experience_only_before = [run("experience", BORN + 10), run("reminders", BORN + 20, prompts=1)]
    assert warm_from(experience_only_before, BORN) is None
    # A prompt answered before the process appeared loaded nothing in it.
    before_birth = [run("reminders", BORN - 50, prompts=1), run("experience", BORN + 10)]
    assert warm_from(before_birth, BORN) is None


def test_a_service_counts_with_its_first_run_even_a_skipped_one() -> None:
    runs = [run("reminders", BORN + 3, prompts=1), run("thread_expiry", BORN + 8, "skipped"),
            run("thread_expiry", BORN + 400), run("experience", BORN + 9, "skipped")]
    # No service's work loads anything in the periodic worker (experience queues its embeddings for the chunker).
    assert warm_from(runs, BORN) == BORN + RSS_SETTLE_S


def test_the_request_logs_outlive_the_soak_and_its_checks() -> None:
    # The first hour-long soak read its first chats' logs again 61 minutes after they ended: gone (the default
    # hour), and each reported as a request without its message.
    for minutes in (4, 15, 60, 120):
        ttl = Settings.from_env({"ENGRAM_EVENTS_TTL_S": str(events_ttl_s(minutes))}).events_ttl_s
        drain_and_checks_s = 150 + 420 + 300 + 600  # reminders, the last chat, the job check, the replays
        assert ttl >= minutes * 60 + drain_and_checks_s
