"""Pure parts of the cognition services: settings, quiet hours, local days, idle queues."""

from __future__ import annotations

import datetime as dt
import tomllib

import pytest
from rq import Queue, SimpleWorker

from services.cognition.config import CognitionConfig, load_cognition_config
from services.cognition.gate import busy_queues, in_quiet_hours, local_day_start
from services.queues import BACKGROUND_QUEUE, PROMPT_QUEUE
from services.settings import PROJECT_ROOT, SettingsError

NIGHT = (dt.time(22), dt.time(8))


def utc(day: int, hour: int, minute: int = 0) -> dt.datetime:
    return dt.datetime(2026, 3, day, hour, minute, tzinfo=dt.UTC)


def test_the_shipped_file_states_the_defaults():
    assert load_cognition_config(PROJECT_ROOT / "configs") == CognitionConfig()


@pytest.mark.parametrize("content, message", [
    ('[drift]\nquiet_start = "late"\n', "quiet_start"),
    ("[drift]\nrelevance_bar = 1.5\n", "relevance_bar"),
    ("[drift]\ndaily_cap = 'three'\n", "daily_cap"),
    ("[dreams]\nx = 1\n", "unknown section"),
])
def test_bad_settings_fail_at_load_with_a_clear_message(tmp_path, content, message):
    (tmp_path / "cognition.toml").write_text(content)
    with pytest.raises(SettingsError, match=message):
        load_cognition_config(tmp_path)


def test_the_schedules_name_every_cognition_service():
    with (PROJECT_ROOT / "configs" / "schedules.toml").open("rb") as handle:
        services = tomllib.load(handle)["services"]
    jobs = {entry["job"] for entry in services.values()}
    assert {f"services.cognition.{name}.run" for name in
            ("drift", "autobiography")} <= jobs


@pytest.mark.parametrize("now, zone, quiet", [
    (utc(10, 21, 30), "Europe/Berlin", True),  # 22:30 local
    (utc(10, 20, 59), "Europe/Berlin", False),  # 21:59 local
    (utc(10, 6, 59), "Europe/Berlin", True),  # 07:59 local
    (utc(10, 7, 0), "Europe/Berlin", False),  # 08:00 local
    (utc(10, 23, 0), "America/New_York", False),  # 19:00 local (EDT since 8 March)
    (utc(10, 3, 0), "America/New_York", True),  # 23:00 local
    (utc(10, 3, 0), "Not/AZone", True),  # unknown zone → UTC, 03:00
])
def test_quiet_hours_wrap_midnight_in_the_persons_zone(now, zone, quiet):
    assert in_quiet_hours(now, zone, *NIGHT) is quiet


def test_quiet_hours_inside_one_day_and_none():
    assert in_quiet_hours(utc(10, 13), "UTC", dt.time(12), dt.time(14))
    assert not in_quiet_hours(utc(10, 15), "UTC", dt.time(12), dt.time(14))
    assert not in_quiet_hours(utc(10, 3), "UTC", dt.time(0), dt.time(0))


def test_the_local_day_starts_at_local_midnight_across_dst():
    # 29 March 2026: Berlin springs forward; the day began at 00:00 CET = 23:00 UTC the day before.
    assert local_day_start(utc(29, 12), "Europe/Berlin") == utc(28, 23)
    assert local_day_start(utc(30, 12), "Europe/Berlin") == utc(29, 22)


def probe_idle() -> str:
    """An RQ job that asks whether the system is idle, as a periodic service does."""
    from rq import get_current_job

    return busy_queues(get_current_job().connection)


def run_probe(connection, peers: int = 0) -> str:
    """Run ``probe_idle`` as a real job on the background queue, ``peers`` more jobs queued behind it."""
    background = Queue(BACKGROUND_QUEUE, connection=connection)
    job = background.enqueue(probe_idle)
    for _ in range(peers):
        background.enqueue(probe_idle)
    SimpleWorker([background], connection=connection).work(burst=True, max_jobs=1)
    background.empty()
    job.refresh()
    return job.return_value()


@pytest.mark.integration
def test_idle_is_asked_of_rq_and_ignores_the_asking_job_and_its_queued_peers(real_redis):
    assert busy_queues(real_redis) == ""
    assert run_probe(real_redis) == ""  # the service's own job does not count
    assert run_probe(real_redis, peers=2) == ""  # other services fired in the same minute wait anyway
    Queue(PROMPT_QUEUE, connection=real_redis).enqueue("workers.digest.run", "request")
    assert run_probe(real_redis) == "prompt-queue: 1 queued, 0 running"

