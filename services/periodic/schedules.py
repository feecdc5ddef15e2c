"""``configs/schedules.toml``: which periodic services exist, when they fire, where they run.

Each ``[services.NAME]`` table has exactly one of ``cron`` (five fields, UTC) or ``every_s``
(seconds), a ``queue`` (one of the RQ queues), a ``job`` (dotted path of a
``run(call: ServiceCall) -> ServiceResult`` function) and ``enabled``. Any other key is an
option of that service (``min_interval_s`` of goals, say), read by the service itself.
Reading is strict: a typo fails start-up instead of silently never firing.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger

from services.config_files import read_toml
from services.queues import ALL_QUEUES
from services.settings import Settings, SettingsError

RESERVED = {"cron", "every_s", "queue", "job", "enabled", "description"}
_JOB_RE = re.compile(r"^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)+$")
_NAME_RE = re.compile(r"^[a-z][a-z0-9_]*$")
EPOCH = dt.datetime(2000, 1, 1, tzinfo=dt.UTC)  # interval fires are aligned to this instant


@dataclass(frozen=True)
class ServiceSpec:
    name: str
    queue: str
    job: str
    enabled: bool = True
    cron: str | None = None
    every_s: float | None = None
    description: str = ""
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def schedule(self) -> str:
        """The schedule as written: ``cron */5 * * * *`` or ``every 60s``."""
        return f"cron {self.cron}" if self.cron else f"every {self.every_s:g}s"

    def trigger(self) -> CronTrigger | IntervalTrigger:
        """The APScheduler trigger (UTC); intervals are aligned to a fixed epoch, not to start-up."""
        if self.cron:
            return CronTrigger.from_crontab(self.cron, timezone="UTC")
        return IntervalTrigger(seconds=float(self.every_s or 0), start_date=EPOCH, timezone="UTC")

    def next_run(self, after: dt.datetime) -> dt.datetime | None:
        """The first fire time strictly after ``after`` (None when disabled)."""
        if not self.enabled:
            return None
        trigger = self.trigger()
        return trigger.get_next_fire_time(None, after + dt.timedelta(microseconds=1))

    def fire_time(self, now: dt.datetime) -> dt.datetime:
        """The scheduled fire time a tick at ``now`` belongs to (the latest one not after ``now``)."""
        if self.every_s:
            step = dt.timedelta(seconds=float(self.every_s))
            return EPOCH + step * ((now - EPOCH) // step)
        return now.replace(second=0, microsecond=0)  # cron has minute resolution


def schedules_path(settings: Settings) -> Path:
    """Where the schedules live: ``ENGRAM_SCHEDULES_FILE`` if set, else ``configs/schedules.toml``."""
    return settings.schedules_file or settings.configs_dir / "schedules.toml"


def load_schedules(path: Path) -> dict[str, ServiceSpec]:
    """Every service of the file, validated; an absent file means no periodic services."""
    data = read_toml(path) or {}
    unknown = sorted(set(data) - {"services"})
    if unknown:
        raise SettingsError(f"{path.name}: unknown top-level key(s) {unknown}; services go under [services.NAME]")
    services = data.get("services", {})
    if not isinstance(services, dict):
        raise SettingsError(f"{path.name}: [services] must be a table of [services.NAME] tables")
    return {name: _spec(path.name, name, table) for name, table in services.items()}


def _spec(label: str, name: str, table: Any) -> ServiceSpec:
    where = f"{label}: [services.{name}]"
    if not _NAME_RE.match(name):
        raise SettingsError(f"{where}: a service name is lower-case letters, digits and _")
    if not isinstance(table, dict):
        raise SettingsError(f"{where} must be a table")
    cron, every_s = table.get("cron"), table.get("every_s")
    if (cron is None) == (every_s is None):
        raise SettingsError(f"{where} needs exactly one of cron = \"m h dom mon dow\" or every_s = seconds")
    if cron is not None:
        _check_cron(where, cron)
    if every_s is not None and (isinstance(every_s, bool) or not isinstance(every_s, int | float) or every_s <= 0):
        raise SettingsError(f"{where}: every_s must be a positive number of seconds, got {every_s!r}")
    queue, job, enabled = table.get("queue"), table.get("job"), table.get("enabled", True)
    if queue not in ALL_QUEUES:
        raise SettingsError(f"{where}: queue must be one of {', '.join(ALL_QUEUES)}, got {queue!r}")
    if not isinstance(job, str) or not _JOB_RE.match(job):
        raise SettingsError(f"{where}: job must be a dotted path like services.periodic.reminders.run, got {job!r}")
    if not isinstance(enabled, bool):
        raise SettingsError(f"{where}: enabled must be true or false, got {enabled!r}")
    options = {key: value for key, value in table.items() if key not in RESERVED}
    return ServiceSpec(name=name, queue=queue, job=job, enabled=enabled, cron=cron,
                       every_s=float(every_s) if every_s is not None else None,
                       description=str(table.get("description", "")), options=options)


def _check_cron(where: str, cron: Any) -> None:
    if not isinstance(cron, str) or len(cron.split()) != 5:
        raise SettingsError(f"{where}: cron must have 5 fields (minute hour day month weekday), got {cron!r}")
    try:
        CronTrigger.from_crontab(cron, timezone="UTC")
    except ValueError as exc:
        raise SettingsError(f"{where}: cron {cron!r} is not valid: {exc}") from None
