"""`engram backup` while `engram run` serves, `engram restore` into an empty data directory: the same answers.

Alice and Bob chat, their memory is enriched, Alice sets a reminder due after the backup; Carol keeps
chatting while the backup is written. The backup restores into a new data directory, where each user's
export equals the one taken before the backup (Carol's exchanges: a whole prefix of hers, no half-stored
turn), recall answers with the same ids, and the restored system, started, delivers Alice's reminder once
to her stream and to no one else's. Bad paths, a non-empty target, a running server and a corrupt file
get a clear message and exit 2, and leave nothing behind.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import threading
import time
from pathlib import Path

import httpx
import pytest
import redis

from bench.pipeline import unthrottled_configs, wait_for_enrichment, wait_for_roles
from services.backup import KEPT_PREFIXES
from tests.fake_llm import FakeLLM
from tests.llm_steps import Json, Reply
from tests.servers import start_postgres, start_redis, wait_until
from tests.system import ROOT, System, read_stream, running_system
from tests.test_e2e_reminders import FAST_SCHEDULE, EventsListener, create, in_seconds

pytestmark = [pytest.mark.e2e, pytest.mark.integration, pytest.mark.slow]

TOKENS = {"alice": "alice-backup-token", "bob": "bob-backup-token1", "carol": "carol-backup-token"}
TALK = {
    "alice": ["I adopted a grey cat called Miso last spring.", "Miso likes to sleep on the radiator."],
    "bob": ["My sister Lena lives in Porto and teaches chemistry.", "I am learning to sail on the Douro."],
}


def engram(data_dir: Path, *args: str, schedules: Path | None = None,
           urls: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``engram ARGS`` (``python consumer.py``) against ``data_dir``, as a person would run it; with ``urls``
    (DATABASE_URL, REDIS_URL) against those servers instead."""
    env = {**os.environ, "ENGRAM_DATA_DIR": str(data_dir), "HF_HUB_OFFLINE": "1"}
    env.pop("DATABASE_URL", None)
    env.pop("REDIS_URL", None)
    env.update(urls or {})
    if schedules is not None:
        env["ENGRAM_SCHEDULES_FILE"] = str(schedules)
    return subprocess.run([sys.executable, str(ROOT / "consumer.py"), *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)


def exported(data_dir: Path, user: str, urls: dict[str, str] | None = None) -> dict:  # type: ignore[type-arg]
    done = engram(data_dir, "export", "--user", user, urls=urls)
    assert done.returncode == 0, done.stderr
    bundle = json.loads(done.stdout)
    bundle.pop("exported_at")
    return bundle


def recalled(data_dir: Path, user: str, query: str, urls: dict[str, str] | None = None) -> list:  # type: ignore[type-arg]
    done = engram(data_dir, "recall", "--user", user, "--json", query, urls=urls)
    assert done.returncode == 0, done.stderr
    return [(hit.get("kind"), hit.get("id")) for hit in json.loads(done.stdout)["results"]]


def talk(system: System, user: str, text: str) -> str:
    headers = {"Authorization": f"Bearer {TOKENS[user]}"}
    with httpx.Client(timeout=httpx.Timeout(60, read=120)) as client, client.stream(
            "POST", system.base_url + "/chat", json={"text": text}, headers=headers) as response:
        assert response.status_code == 200, response.read()
        frames = read_stream(response)
    assert [f.event for f in frames if f.event in ("message", "error")] == ["message"]
    return response.headers["X-Request-ID"]


def wait_enriched(system: System, timeout_s: float = 400) -> None:
    """Until the memory workers are done (every chunk and episode of the chats so far is stored)."""
    redis_url, _ = system.urls()
    wait_for_roles(redis_url, timeout_s)
    waited = wait_for_enrichment(redis.Redis.from_url(redis_url), timeout_s)
    assert waited < timeout_s, "the memory workers did not catch up"


def test_a_backup_taken_mid_traffic_restores_the_same_answers(tmp_path: Path, fake_llm: FakeLLM) -> None:
    fake_llm.route("MEMORY CHUNK", Json({"gists": ["a pet and a place"], "facts": [], "entities": [],
                                         "emotion": "calm", "salience": 0.4, "open_loops": []}))
    fake_llm.route("EPISODE", Json({"title": "chat", "gist": "a chat", "summary": "a chat", "intent": "",
                                    "emotion": "", "outcome": "", "salience": 0.2, "open_loops": []}))
    schedules = tmp_path / "fast-schedules.toml"
    schedules.write_text(FAST_SCHEDULE)
    original, restored, backup = tmp_path / "original", tmp_path / "restored", tmp_path / "engram.backup"
    tokens = ",".join(f"{token}:{user}" for user, token in TOKENS.items())
    common = {"OPENAI_BASE_URL": fake_llm.url, "ENGRAM_LOCAL_LLM": "false", "ENGRAM_API_TOKENS": tokens,
              "ENGRAM_SCHEDULES_FILE": str(schedules), "ENGRAM_SSE_KEEPALIVE_S": "1",
              # Carol chats as fast as replies come: no per-token rate limit.
              "ENGRAM_CONFIGS_DIR": str(unthrottled_configs(tmp_path / "configs"))}
    with running_system(original, **common) as system:
        for user, lines in TALK.items():
            for line in lines:
                fake_llm.script_stream(Reply(f"Noted: {line}"))
                talk(system, user, line)
        wait_enriched(system)
        reminder = create(system, TOKENS["alice"], {"text": "feed Miso", "due_at": in_seconds(120)})
        before = {user: exported(original, user) for user in TALK}
        recall_before = recalled(original, "alice", "what is my cat called")
        assert recall_before, "recall finds Alice's cat"

        # Carol chats all through the backup.
        stop, carols = threading.Event(), []

        def carol() -> None:
            while not stop.is_set():
                carols.append(talk(system, "carol", f"Note number {len(carols)} about my garden."))

        talker = threading.Thread(target=carol, daemon=True)
        talker.start()
        assert wait_until(lambda: len(carols) >= 2, 60)
        done = engram(original, "backup", str(backup))
        during = len(carols)
        stop.set()
        talker.join(timeout=120)
        assert done.returncode == 0, done.stderr
        assert during > 2, "Carol chatted while the backup was written"
        assert not [p for p in tmp_path.iterdir() if p.name.startswith(".engram-backup-")], "no temporary left"
        carol_all = [e["request_id"] for e in exported(original, "carol")["exchanges"]]
        # A running server owns the original data directory: restoring into it is refused.
        refused = engram(original, "restore", str(backup))
        assert refused.returncode == 2 and "running" in refused.stderr, refused.stderr

    done = engram(restored, "restore", str(backup))
    assert done.returncode == 0, done.stderr
    for user in TALK:
        assert exported(restored, user) == before[user], f"{user}'s memory came back the same"
    carol_restored = [e["request_id"] for e in exported(restored, "carol")["exchanges"]]
    assert carol_restored and carol_restored == carol_all[:len(carol_restored)], "Carol's turns up to the snapshot"
    assert recalled(restored, "alice", "what is my cat called") == recall_before

    # Restoring again into the now restored directory is refused; nothing in it changes.
    again = engram(restored, "restore", str(backup))
    assert again.returncode == 2 and "not empty" in again.stderr, again.stderr

    # Into servers engram did not start (an operator's own PostgreSQL and Redis, DATABASE_URL / REDIS_URL): the
    # same memory, and every kept Redis key (threads' state, proactive logs, delivered-once keys) there.
    external = {"postgres": start_postgres(tmp_path / "own-postgres"), "redis": start_redis(tmp_path / "own-redis")}
    try:
        urls = {"DATABASE_URL": external["postgres"].url, "REDIS_URL": external["redis"].url}
        done = engram(tmp_path / "unused", "restore", str(backup), urls=urls)
        assert done.returncode == 0, done.stderr
        for user in TALK:
            assert exported(tmp_path / "unused", user, urls) == before[user], f"{user}'s memory in the own servers"
        assert recalled(tmp_path / "unused", "alice", "what is my cat called", urls) == recall_before
        with tarfile.open(backup) as archive:
            manifest = json.loads(archive.extractfile("manifest.json").read())  # type: ignore[union-attr]
        own_redis = redis.Redis.from_url(urls["REDIS_URL"])
        kept = sum(1 for prefix in KEPT_PREFIXES for _ in own_redis.scan_iter(match=prefix + "*"))
        assert manifest["redis_keys"] > 0 and kept == manifest["redis_keys"]
        twice = engram(tmp_path / "unused", "restore", str(backup), urls=urls)
        assert twice.returncode == 2 and "not empty" in twice.stderr, twice.stderr
    finally:
        for server in external.values():
            server.stop()

    with running_system(restored, **common) as system:
        alice, bob = EventsListener(system, TOKENS["alice"]), EventsListener(system, TOKENS["bob"])
        try:
            arrived = alice.wait_for(1, timeout_s=120)
            assert [frame.data["id"] for frame in arrived] == [reminder["id"]]
            time.sleep(4)  # more scheduler ticks: still once, and nothing for Bob
            assert len(alice.reminders()) == 1 and bob.reminders() == []
        finally:
            alice.close()
            bob.close()
        # And the restored system answers as before.
        fake_llm.script_stream(Reply("Miso is well."))
        talk(system, "alice", "How is Miso?")


def test_bad_paths_and_a_corrupt_backup_get_a_clear_error(tmp_path: Path) -> None:
    missing = engram(tmp_path / "empty", "restore", str(tmp_path / "no-such.backup"))
    assert missing.returncode == 2 and "no such backup file" in missing.stderr, missing.stderr
    nowhere = engram(tmp_path / "data", "backup", str(tmp_path / "no-such-dir" / "x.backup"))
    assert nowhere.returncode == 2 and "does not exist" in nowhere.stderr, nowhere.stderr
    not_a_backup = tmp_path / "notes.txt"
    not_a_backup.write_text("hello")
    wrong = engram(tmp_path / "empty", "restore", str(not_a_backup))
    assert wrong.returncode == 2 and "not an Engram backup" in wrong.stderr, wrong.stderr
    # A real backup (of an empty system), then one byte of its database dump flipped.
    backup = tmp_path / "small.backup"
    done = engram(tmp_path / "data", "backup", str(backup))
    assert done.returncode == 0, done.stderr
    exists = engram(tmp_path / "data", "backup", str(backup))
    assert exists.returncode == 2 and "exists" in exists.stderr
    with tarfile.open(backup) as archive:
        dump = archive.getmember("postgres.dump")
    raw = bytearray(backup.read_bytes())
    raw[dump.offset_data + dump.size // 2] ^= 0xFF
    corrupt = tmp_path / "corrupt.backup"
    corrupt.write_bytes(bytes(raw))
    broken = engram(tmp_path / "fresh", "restore", str(corrupt))
    assert broken.returncode == 2 and "corrupt" in broken.stderr, broken.stderr
    assert not (tmp_path / "fresh").exists() or not any((tmp_path / "fresh").iterdir()), "nothing half-restored"
    assert not [p for p in tmp_path.iterdir() if ".restoring-" in p.name], "no staging directory left"
