"""The periodic framework: schedules as configuration, the scheduler that only enqueues (once per
fire, even with two of them), and the runner that records every outcome in service_runs and metrics."""

from __future__ import annotations

import datetime as dt
import time
from dataclasses import replace

import fakeredis
import pytest
from apscheduler.schedulers.background import BackgroundScheduler
from rq import Queue
from rq.registry import FailedJobRegistry
from sqlalchemy import select

from services.periodic.firing import FIRED_KEY, fire_id_for, fire_manual, fire_scheduled
from services.periodic.runner import execute
from services.periodic.runs import ServiceRun, last_runs
from services.periodic.schedules import ServiceSpec, load_schedules
from services.queues import PERIODIC_QUEUE
from services.settings import PROJECT_ROOT, SettingsError
from tests.periodic_services import CALLS_KEY, schedules_file
from workers.scheduler import Leadership, ServiceTick, build_scheduler

NOON = dt.datetime(2026, 11, 23, 12, 0, 30, tzinfo=dt.UTC)
COGNITION = {"drift": "drift", "autobiography": "autobiography"}


def spec(name: str = "counter", job: str = "tests.periodic_services.counting", **kw) -> ServiceSpec:  # type: ignore[no-untyped-def]
    return ServiceSpec(name=name, queue=kw.pop("queue", PERIODIC_QUEUE), job=job, **{"every_s": 60.0, **kw})


# --- configuration ------------------------------------------------------------------------------

def test_the_shipped_schedules_name_every_service_of_design_section_6():
    services = load_schedules(PROJECT_ROOT / "configs" / "schedules.toml")
    assert {"reminders", "thread_expiry", "experience", "goals"} <= set(services)
    assert all(services[name].enabled for name in ("reminders", "thread_expiry", "experience", "goals"))
    for name, module in COGNITION.items():
        assert services[name].job == f"services.cognition.{module}.run"
        assert services[name].enabled  # the cognition services ship on
    assert services["reminders"].every_s == 60 and services["thread_expiry"].cron == "*/5 * * * *"
    assert all(s.queue != "prompt-queue" for s in services.values())


@pytest.mark.parametrize(("body", "complaint"), [
    ('[services.x]\nqueue = "periodic-queue"\njob = "a.b"\n', "exactly one of cron"),
    ('[services.x]\ncron = "* * * * *"\nevery_s = 5\nqueue = "periodic-queue"\njob = "a.b"\n', "exactly one of"),
    ('[services.x]\ncron = "61 * * * *"\nqueue = "periodic-queue"\njob = "a.b"\n', "not valid"),
    ('[services.x]\ncron = "* * *"\nqueue = "periodic-queue"\njob = "a.b"\n', "5 fields"),
    ('[services.x]\nevery_s = 0\nqueue = "periodic-queue"\njob = "a.b"\n', "positive"),
    ('[services.x]\nevery_s = 5\nqueue = "nowhere"\njob = "a.b"\n', "queue must be one of"),
    ('[services.x]\nevery_s = 5\nqueue = "periodic-queue"\njob = "nodots"\n', "dotted path"),
    ('[services.x]\nevery_s = 5\nqueue = "periodic-queue"\njob = "a.b"\nenabled = "yes"\n', "true or false"),
    ('[service.x]\nevery_s = 5\n', "unknown top-level"),
])
def test_a_wrong_schedule_fails_loudly_naming_the_problem(tmp_path, body, complaint):
    with pytest.raises(SettingsError, match=complaint):
        load_schedules(schedules_file(tmp_path, body))


def test_a_missing_file_means_no_services_and_options_are_kept(tmp_path):
    assert load_schedules(tmp_path / "absent.toml") == {}
    loaded = load_schedules(schedules_file(
        tmp_path, '[services.goals]\ncron = "*/30 * * * *"\nqueue = "background-queue"\njob = "a.b"\n'
                  'min_interval_s = 9\n'))
    assert loaded["goals"].options == {"min_interval_s": 9} and loaded["goals"].schedule == "cron */30 * * * *"


def test_fire_times_and_next_runs():
    every = spec(every_s=60.0)
    assert every.fire_time(NOON) == NOON.replace(second=0)
    assert every.next_run(NOON) == NOON.replace(second=0) + dt.timedelta(minutes=1)
    cron = spec(every_s=None, cron="*/5 * * * *")
    assert cron.next_run(NOON) == dt.datetime(2026, 11, 23, 12, 5, tzinfo=dt.UTC)
    assert cron.fire_time(NOON) == NOON.replace(second=0)
    assert replace(cron, enabled=False).next_run(NOON) is None


# --- scheduling: once per fire, coalesced -------------------------------------------------------

class AlwaysLeads(Leadership):
    """Two schedulers that both believe they lead (a lease that lapsed mid-tick)."""

    def hold(self) -> bool:
        return True


def test_two_leaders_ticking_the_same_fire_enqueue_it_once():
    connection = fakeredis.FakeRedis()
    clock = lambda: NOON  # noqa: E731
    first = ServiceTick(connection, AlwaysLeads(connection), spec(), clock)
    second = ServiceTick(connection, AlwaysLeads(connection), spec(), clock)
    assert [first(), second()] == ["enqueued", "already fired"]
    assert Queue(PERIODIC_QUEUE, connection=connection).count == 1


def test_a_standby_never_enqueues_and_a_fire_waiting_in_the_queue_absorbs_the_next():
    connection = fakeredis.FakeRedis()
    leader, standby = Leadership(connection), Leadership(connection)
    assert leader.hold()
    assert ServiceTick(connection, standby, spec(), lambda: NOON)() == "standby"
    tick = ServiceTick(connection, leader, spec(), lambda: NOON)
    assert tick() == "enqueued"
    later = ServiceTick(connection, leader, spec(), lambda: NOON + dt.timedelta(minutes=5))
    assert later() == "coalesced"  # five minutes of missed ticks behind a queued run: still one run
    assert Queue(PERIODIC_QUEUE, connection=connection).count == 1


def test_the_scheduler_coalesces_missed_ticks_and_skips_disabled_services(tmp_path, settings):
    path = schedules_file(tmp_path, '[services.on]\nevery_s = 60\nqueue = "periodic-queue"\njob = "a.b"\n'
                                    '[services.off]\nevery_s = 60\nqueue = "periodic-queue"\njob = "a.b"\n'
                                    'enabled = false\n')
    scheduler = build_scheduler(replace(settings, schedules_file=path), fakeredis.FakeRedis(),
                                scheduler_class=BackgroundScheduler)
    ids = {job.id for job in scheduler.get_jobs()}
    assert "service:on" in ids and "service:off" not in ids
    assert scheduler._job_defaults["coalesce"] is True  # APScheduler runs a missed streak once


@pytest.mark.integration
def test_two_running_schedulers_record_each_fire_once(tmp_path, settings, worker_context, real_redis, run_jobs):
    path = schedules_file(tmp_path, '[services.pulse]\nevery_s = 1\nqueue = "periodic-queue"\n'
                                    'job = "tests.periodic_services.counting"\n')
    fast = replace(settings, schedules_file=path)
    worker_context.settings = fast
    schedulers = [build_scheduler(fast, real_redis, scheduler_class=BackgroundScheduler) for _ in range(2)]
    fired: list[str] = []
    for scheduler in schedulers:
        scheduler.start()
    try:
        deadline = time.monotonic() + 4.5
        while time.monotonic() < deadline:  # run the queued fires as they come, like a worker
            run_jobs((PERIODIC_QUEUE,))
            time.sleep(0.2)
    finally:
        for scheduler in schedulers:
            scheduler.shutdown(wait=True)
    run_jobs((PERIODIC_QUEUE,))
    fired = [key.decode() for key in real_redis.keys(FIRED_KEY % ("pulse", "*"))]
    with worker_context.sessions() as session:
        rows = session.scalars(select(ServiceRun).where(ServiceRun.service == "pulse")).all()
    assert len(rows) >= 3
    assert len({row.fire_id for row in rows}) == len(rows)  # no fire recorded twice
    assert len(rows) <= len(fired)  # every recorded run is one fire of the schedule
    assert all(row.outcome == "ran" for row in rows)
    assert int(real_redis.get(CALLS_KEY % "pulse")) == len(rows)


# --- running: outcome, duration, idempotency, failures ------------------------------------------

@pytest.mark.integration
def test_a_run_is_recorded_once_with_outcome_duration_and_metrics(worker_context, real_redis, client):
    service = spec()
    fire_id = fire_id_for(service, NOON)
    first = execute(worker_context, service, fire_id, scheduled_for=NOON, clock=lambda: NOON)
    again = execute(worker_context, service, fire_id, scheduled_for=NOON, clock=lambda: NOON)
    assert first.outcome == "ran" and first.details["calls"] == 1
    assert again.outcome == "ran" and again.details["already_recorded"]
    assert int(real_redis.get(CALLS_KEY % "counter")) == 1  # the second call changed nothing
    with worker_context.sessions() as session:
        row = session.scalars(select(ServiceRun)).one()
        latest = last_runs(session)["counter"]
    assert (row.outcome, row.fire_id, row.trigger) == ("ran", fire_id, "schedule")
    assert row.duration_ms is not None and row.finished_at is not None and row.details["calls"] == 1
    assert latest.outcome == "ran"
    body = client.get("/metrics").get_data(as_text=True)
    assert 'engram_service_runs_total{outcome="ran",service="counter"} 1.0' in body
    assert 'engram_service_seconds_count{service="counter"} 1.0' in body


@pytest.mark.integration
def test_a_skip_keeps_the_gates_reason(worker_context):
    result = execute(worker_context, spec("quiet", "tests.periodic_services.gated"), "quiet@1", clock=lambda: NOON)
    with worker_context.sessions() as session:
        row = session.scalars(select(ServiceRun)).one()
    assert result.outcome == row.outcome == "skipped"
    assert row.reason == "quiet hours" and row.details == {"quiet_until": "07:00"}


@pytest.mark.integration
def test_a_missing_module_is_a_failed_run_with_the_reason_not_a_crash(worker_context):
    service = spec("ghost", "services.cognition.ghost.run")  # a service whose module was never written
    result = execute(worker_context, service, "ghost@1", clock=lambda: NOON)
    assert result.outcome == "failed"
    assert "services.cognition.ghost.run cannot be imported" in result.reason
    missing_function = execute(worker_context, spec("odd", "tests.periodic_services.nothing_here"), "odd@1")
    assert "has no function 'nothing_here'" in missing_function.reason
    wrong_type = execute(worker_context, spec("typed", "tests.periodic_services.not_a_result"), "typed@1")
    assert wrong_type.outcome == "failed" and "not a ServiceResult" in wrong_type.reason


@pytest.mark.integration
def test_a_service_that_raises_is_recorded_as_failed_and_the_job_fails(worker_context):
    with pytest.raises(RuntimeError, match="fell over"):
        execute(worker_context, spec("boom", "tests.periodic_services.boom"), "boom@1", clock=lambda: NOON)
    with worker_context.sessions() as session:
        row = session.scalars(select(ServiceRun)).one()
    assert row.outcome == "failed" and row.reason == "RuntimeError: the service fell over"


@pytest.mark.integration
def test_each_failed_fire_keeps_its_own_job_and_reason(tmp_path, worker_context, real_redis, run_jobs):
    # In the soak a fire that failed (PostgreSQL restarting) lost its traceback to the next fire's job, which
    # took the same id: the failed registry named a job whose hash said nothing of the failure.
    path = schedules_file(tmp_path, '[services.boom]\nevery_s = 60\nqueue = "periodic-queue"\n'
                                    'job = "tests.periodic_services.boom"\n')
    worker_context.settings = replace(worker_context.settings, schedules_file=path)
    service = load_schedules(path)["boom"]
    for minute in range(3):
        assert fire_scheduled(real_redis, service, NOON + dt.timedelta(minutes=minute)) == "enqueued"
        run_jobs((PERIODIC_QUEUE,))
    queue = Queue(PERIODIC_QUEUE, connection=real_redis)
    failed = queue.job_class.fetch_many(FailedJobRegistry(queue=queue).get_job_ids(), connection=real_redis)
    assert len(failed) == 3
    for job in failed:
        assert job is not None and job.get_status() == "failed" and "the service fell over" in (job.exc_info or "")
    assert sorted(job.args[1] for job in failed) == [fire_id_for(service, NOON + dt.timedelta(minutes=m))
                                                     for m in range(3)]


@pytest.mark.integration
def test_the_rq_job_runs_by_name_and_fire_id_and_a_manual_run_gets_its_own_fire(
        tmp_path, worker_context, real_redis, run_jobs):
    path = schedules_file(tmp_path, '[services.counter]\ncron = "0 3 * * *"\nqueue = "periodic-queue"\n'
                                    'job = "tests.periodic_services.counting"\nenabled = false\n')
    worker_context.settings = replace(worker_context.settings, schedules_file=path)
    service = load_schedules(path)["counter"]
    assert fire_scheduled(real_redis, service, NOON) == "enqueued"
    manual = fire_manual(real_redis, service, NOON)
    run_jobs((PERIODIC_QUEUE,))
    assert fire_scheduled(real_redis, service, NOON) == "already fired"
    run_jobs((PERIODIC_QUEUE,))
    with worker_context.sessions() as session:
        rows = {row.fire_id: row for row in session.scalars(select(ServiceRun))}
    assert set(rows) == {fire_id_for(service, NOON), manual}
    assert rows[manual].trigger == "manual" and rows[manual].outcome == "ran"
    assert int(real_redis.get(CALLS_KEY % "counter")) == 2
