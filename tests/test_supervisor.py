"""The supervisor with real child processes (fakeredis stands in for heartbeats; a real Redis where leases are)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
import time

import fakeredis
import pytest

from services.janitor import LEASE_KEY, OWNED_KEY
from services.queues import LEASE_KEY as THREAD_LEASE_KEY
from services.supervisor import HEARTBEAT_KEY, OPEN_FILES_WANTED, Role, Supervisor, pid_alive, raise_open_files_limit
from tests.servers import wait_until

PY = sys.executable


def role(name: str, code: str, heartbeat: bool = True) -> Role:
    return Role(name, [PY, "-c", textwrap.dedent(code)], dict(os.environ), heartbeat=heartbeat)




def test_crashed_role_is_restarted_with_growing_backoff():
    supervisor = Supervisor([role("crashy", "import sys; sys.exit(3)")], redis_client=None, hung_after_s=60)
    supervisor.start()
    child = supervisor.children["crashy"]
    try:
        assert wait_until(lambda: (supervisor.check(), child.restarts >= 2)[1])
        assert child.exit_codes[:2] == [3, 3]
        assert child.backoff_s >= 4.0  # 1 s, then 2 s, then 4 s next
    finally:
        supervisor.stop_all()


def test_hung_role_is_killed_and_replaced():
    redis_client = fakeredis.FakeRedis()
    supervisor = Supervisor([role("stuck", "import time; time.sleep(60)")], redis_client=redis_client,
                            hung_after_s=0.3)
    supervisor.start()
    child = supervisor.children["stuck"]
    first_pid = child.process.pid
    try:
        assert wait_until(lambda: (supervisor.check(), child.restarts >= 1)[1], timeout=5)
        assert child.exit_codes[0] == -signal.SIGKILL
        assert not pid_alive(first_pid) or os.waitpid(first_pid, os.WNOHANG)
    finally:
        supervisor.stop_all()


def test_a_beating_role_is_not_hung():
    redis_client = fakeredis.FakeRedis()
    supervisor = Supervisor([role("busy", "import time; time.sleep(60)")], redis_client=redis_client,
                            hung_after_s=0.3)
    supervisor.start()
    child = supervisor.children["busy"]
    try:
        deadline = time.monotonic() + 1.2
        while time.monotonic() < deadline:
            redis_client.set(HEARTBEAT_KEY % f"{socket.gethostname()}:{child.process.pid}", time.time())
            supervisor.check()
            time.sleep(0.05)
        assert child.restarts == 0
    finally:
        supervisor.stop_all()


def test_sigterm_stops_every_child_within_seconds(tmp_path):
    pids = tmp_path / "pids"
    # Run a supervisor in a real process, then signal it like an operator would.
    runner = tmp_path / "run.py"
    runner.write_text(textwrap.dedent(f"""
        import os, sys, time
        sys.path.insert(0, {os.getcwd()!r})
        from services.supervisor import Role, Supervisor
        child = [sys.executable, "-c", "import time; time.sleep(120)"]
        ignore = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(120)"
        stubborn = [sys.executable, "-c", ignore]
        env = dict(os.environ)
        roles = [Role("a", child, env), Role("b", child, env), Role("c", stubborn, env)]
        sup = Supervisor(roles, redis_client=None, hung_after_s=60, grace_s=1.0)
        import threading
        def report():
            time.sleep(0.5)
            open({str(pids)!r}, "w").write(" ".join(str(c.process.pid) for c in sup.children.values()))
        threading.Thread(target=report, daemon=True).start()
        sys.exit(sup.run())
    """))
    process = subprocess.Popen([PY, str(runner)])
    assert wait_until(pids.exists, timeout=10)
    time.sleep(0.3)
    children = [int(p) for p in pids.read_text().split()]
    assert len(children) == 3 and all(pid_alive(p) for p in children)
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=30) == 0  # the child that ignores SIGTERM is killed after the grace period
    assert wait_until(lambda: not any(pid_alive(p) for p in children), timeout=3)


def test_children_die_with_a_killed_supervisor(tmp_path):
    pids = tmp_path / "pids"
    runner = tmp_path / "run.py"
    runner.write_text(textwrap.dedent(f"""
        import os, sys, time, threading
        sys.path.insert(0, {os.getcwd()!r})
        from services.supervisor import Role, Supervisor
        roles = [Role("a", [sys.executable, "-c", "import time; time.sleep(120)"], dict(os.environ))]
        sup = Supervisor(roles, redis_client=None, hung_after_s=60)
        def report():
            time.sleep(0.5)
            open({str(pids)!r}, "w").write(" ".join(str(c.process.pid) for c in sup.children.values()))
        threading.Thread(target=report, daemon=True).start()
        sup.run()
    """))
    process = subprocess.Popen([PY, str(runner)])
    assert wait_until(pids.exists, timeout=10)
    time.sleep(0.2)
    child = int(pids.read_text())
    process.kill()
    process.wait()
    assert wait_until(lambda: not pid_alive(child), timeout=5)


def test_the_open_files_limit_is_raised_for_the_roles():
    """`engram run` raises the soft limit its roles inherit: at 1,024 a web process refuses its thousandth stream."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard <= 1024:
        pytest.skip(f"the hard limit here is {hard}: nothing to raise to")
    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, hard))
    try:
        wanted = OPEN_FILES_WANTED if hard == resource.RLIM_INFINITY else min(OPEN_FILES_WANTED, hard)
        assert raise_open_files_limit() == wanted == resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        assert resource.getrlimit(resource.RLIMIT_NOFILE)[1] == hard, "the hard limit is left alone"
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_a_worker_that_dies_mid_job_has_its_leases_lapsed_at_once(real_redis, redis_server):  # type: ignore[no-untyped-def]
    """The supervisor sees its child exit: the job it ran goes back to RQ at the janitor's next pass and its
    thread is free, not a whole lease (10 s, 15 s) later; a job another run has taken over keeps its lease."""
    code = f"""
        import time, redis
        from services.janitor import hold_lease
        from services.queues import ThreadLease
        from services.supervisor import process_key
        connection = redis.Redis.from_url({redis_server.url!r})
        pipeline = connection.pipeline()
        hold_lease(pipeline, "job-of-the-dead", "run-token", holder=process_key())
        pipeline.execute()
        assert ThreadLease(connection, "thread-of-the-dead", holder=process_key()).claim("r1")[0]
        time.sleep(60)
    """
    supervisor = Supervisor([role("digest", code)], redis_client=real_redis, hung_after_s=60)
    supervisor.start()
    child = supervisor.children["digest"]
    try:
        assert wait_until(lambda: real_redis.exists(THREAD_LEASE_KEY % "thread-of-the-dead"), timeout=20)
        os.kill(child.process.pid, signal.SIGKILL)
        assert wait_until(lambda: (supervisor.check(), child.restarts >= 1)[1], timeout=5)
        assert not real_redis.exists(LEASE_KEY % "job-of-the-dead"), "the dead run's lease is lapsed"
        assert not real_redis.exists(THREAD_LEASE_KEY % "thread-of-the-dead"), "and its thread's"
        assert real_redis.exists(OWNED_KEY % "job-of-the-dead"), "so the janitor takes the job for abandoned"
        # The replacement starts a job; another run took the first job over meanwhile: its lease stays.
        assert wait_until(lambda: (supervisor.check(), real_redis.exists(LEASE_KEY % "job-of-the-dead"))[1],
                          timeout=20)
        real_redis.set(LEASE_KEY % "job-of-the-dead", "a-later-run")
        os.kill(child.process.pid, signal.SIGKILL)
        assert wait_until(lambda: (supervisor.check(), child.restarts >= 2)[1], timeout=5)
        assert real_redis.get(LEASE_KEY % "job-of-the-dead") == b"a-later-run"
    finally:
        supervisor.stop_all()
