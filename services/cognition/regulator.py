"""Routing stability regulator: the only writer of ``configs/generated/router_weights.json``.

Each run, first judges earlier steps whose cooldown is over: the mean pressure on the changed
weight since the step is compared with the pressure that caused it; unless it fell by
``min_improvement`` the step is reverted. Then it takes at most one new step: the weight with
the strongest mean pressure (reviews since the window start or since that weight's last
step), if it is above ``min_pressure`` with at least ``min_reviews`` reviews behind it and the
weight is not cooling down. A step moves the weight by ``learning_rate × pressure``, at most
``max_step``, and never further than ``max_drift`` from the configured value.

The override file is rewritten from the steps table (the latest kept or pending step per
weight), atomically, so a rerun of a fire writes the same file and the router — which re-reads
the file when its stat changes — picks the change up on its next decision, without a restart.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import tempfile
from collections import defaultdict
from pathlib import Path

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from services.cognition.calibration import latest_misroute_rate
from services.cognition.config import RegulatorConfig, cognition_config
from services.cognition.models import RegulatorStep, RoutingPressure, RoutingReview
from services.config_files import read_toml
from services.db import insert
from services.router.config import OVERRIDE_FILE, WEIGHTS_FILE, RouterConfig, known_signals, parse_config
from services.service_call import ServiceCall, ServiceResult
from services.settings import SettingsError

ACTIVE = ("pending", "kept")


def run(call: ServiceCall) -> ServiceResult:
    """Judge cooled-down steps, maybe take one new step, and write the override file."""
    context = call.context
    config = cognition_config(context).regulator
    now = call.now()
    configs_dir = Path(context.settings.configs_dir)
    base = base_config(configs_dir)
    with context.sessions.begin() as db:
        verdicts = judge_steps(db, call.fire_id, now, config)
    with context.sessions.begin() as db:
        step = take_step(db, call.fire_id, now, config, base)
        weights = regulated_weights(db)
    changed = write_override(configs_dir / OVERRIDE_FILE, weights)
    details = {"kept": verdicts.count("kept"), "reverted": verdicts.count("reverted"), "file_changed": changed}
    if step is None and not verdicts:
        return ServiceResult.skipped("no weight has enough pressure to move", **details)
    if step is not None:
        details.update(step=f"{step.mode}.{step.signal}", old=step.old_weight, new=step.new_weight)
    return ServiceResult.ran(**details)


def base_config(configs_dir: Path) -> RouterConfig:
    """The configured weights, without any override."""
    raw = read_toml(configs_dir / WEIGHTS_FILE)
    if raw is None:
        raise SettingsError(f"router weights not found: {configs_dir / WEIGHTS_FILE}")
    return parse_config(raw, WEIGHTS_FILE)


def mean_pressure(db: Session, after: dt.datetime, until: dt.datetime,
                  key: tuple[str, str] | None = None) -> tuple[dict[tuple[str, str], float], int]:
    """Mean pressure per (mode, signal) over the reviews in (after, until], and how many reviews that was.

    ``after`` is exclusive so that the reviews a step was taken on never count as evidence after it.
    """
    reviews = db.scalar(select(func.count()).where(RoutingReview.created_at > after,
                                                   RoutingReview.created_at <= until)) or 0
    statement = (select(RoutingPressure.mode, RoutingPressure.signal, func.sum(RoutingPressure.pressure))
                 .where(RoutingPressure.created_at > after, RoutingPressure.created_at <= until)
                 .group_by(RoutingPressure.mode, RoutingPressure.signal))
    if key is not None:
        statement = statement.where(RoutingPressure.mode == key[0], RoutingPressure.signal == key[1])
    sums = {(mode, signal): float(total) for mode, signal, total in db.execute(statement)}
    return ({k: v / reviews for k, v in sums.items()} if reviews else {}), reviews


def judge_steps(db: Session, fire_id: str, now: dt.datetime, config: RegulatorConfig) -> list[str]:
    """Keep or revert every pending step whose cooldown is over and that has enough new reviews."""
    cooled = now - dt.timedelta(hours=config.cooldown_h)
    verdicts = []
    for step in db.scalars(select(RegulatorStep).where(RegulatorStep.status == "pending",
                                                       RegulatorStep.created_at <= cooled)
                           .order_by(RegulatorStep.created_at)):
        key = (step.mode, step.signal)
        after, reviews = mean_pressure(db, step.created_at, now, key)
        if reviews < config.min_reviews:
            continue  # not enough evidence yet either way
        pressure_after = after.get(key, 0.0)
        # "Fell" means it moved towards zero (or past it) by at least min_improvement of where it was.
        towards = pressure_after * math.copysign(1.0, step.pressure_before)
        fell = towards <= abs(step.pressure_before) * (1.0 - config.min_improvement)
        status = "kept" if fell else "reverted"
        db.execute(update(RegulatorStep).where(RegulatorStep.id == step.id, RegulatorStep.status == "pending")
                   .values(status=status, pressure_after=round(pressure_after, 4), decided_fire_id=fire_id,
                           decided_at=now))
        verdicts.append(status)
    return verdicts


def take_step(db: Session, fire_id: str, now: dt.datetime, config: RegulatorConfig,
              base: RouterConfig) -> RegulatorStep | None:
    """At most one bounded change, on the weight under the strongest pressure; None when none qualifies."""
    existing = db.scalar(select(RegulatorStep).where(RegulatorStep.fire_id == fire_id))
    if existing is not None:
        return existing
    current = _current_weights(db, base)
    cooling, last_step = _step_times(db, now, config)
    window_start = now - dt.timedelta(hours=config.window_h)
    means, reviews = mean_pressure(db, window_start, now)
    ranked = sorted(means.items(), key=lambda item: (-abs(item[1]), item[0]))
    allowed = known_signals()  # a signal the router no longer has would make it ignore the whole file
    for key, _ in ranked:
        if key in cooling or key[0] not in current or key[1] not in allowed:
            continue
        since = max(window_start, last_step.get(key, window_start))
        own, own_reviews = mean_pressure(db, since, now, key) if since > window_start else (means, reviews)
        pressure = own.get(key, 0.0)
        if own_reviews < config.min_reviews or abs(pressure) < config.min_pressure:
            continue
        mode, signal = key
        old = current[mode].get(signal, 0.0)
        configured = base.weights[mode].get(signal, 0.0)
        delta = max(-config.max_step, min(config.max_step, config.learning_rate * pressure))
        new = round(max(configured - config.max_drift, min(configured + config.max_drift, old + delta)), 4)
        if new == old:
            continue  # already at its bound
        db.execute(insert(RegulatorStep).values(
            fire_id=fire_id, mode=mode, signal=signal, old_weight=old, new_weight=new,
            pressure_before=round(pressure, 4), reviews_before=own_reviews, misroute_rate=latest_misroute_rate(db),
            created_at=now).on_conflict_do_nothing(index_elements=["fire_id"]))
        return db.scalar(select(RegulatorStep).where(RegulatorStep.fire_id == fire_id))
    return None


def _step_times(db: Session, now: dt.datetime,
                config: RegulatorConfig) -> tuple[set[tuple[str, str]], dict[tuple[str, str], dt.datetime]]:
    """Weights that may not move now (cooling down or awaiting a verdict), and each weight's last step."""
    cooled = now - dt.timedelta(hours=config.cooldown_h)
    cooling: set[tuple[str, str]] = set()
    last: dict[tuple[str, str], dt.datetime] = {}
    for step in db.scalars(select(RegulatorStep).order_by(RegulatorStep.created_at)):
        key = (step.mode, step.signal)
        last[key] = step.created_at
        reverted_lately = step.status == "reverted" and step.decided_at is not None and step.decided_at > cooled
        if step.status == "pending" or step.created_at > cooled or reverted_lately:
            cooling.add(key)
    return cooling, last


def regulated_weights(db: Session) -> dict[str, dict[str, float]]:
    """Per weight, the value of its latest step that was not reverted (reverted steps restore the one before)."""
    latest: dict[tuple[str, str], float] = {}
    for step in db.scalars(select(RegulatorStep).where(RegulatorStep.status.in_(ACTIVE))
                           .order_by(RegulatorStep.created_at, RegulatorStep.id)):
        latest[(step.mode, step.signal)] = step.new_weight
    weights: dict[str, dict[str, float]] = defaultdict(dict)
    for (mode, signal), value in sorted(latest.items()):
        weights[mode][signal] = value
    return dict(weights)


def _current_weights(db: Session, base: RouterConfig) -> dict[str, dict[str, float]]:
    current = {mode: dict(table) for mode, table in base.weights.items()}
    for mode, table in regulated_weights(db).items():
        current.setdefault(mode, {}).update(table)
    return current


def write_override(path: Path, weights: dict[str, dict[str, float]]) -> bool:
    """Write (or remove, when nothing is regulated) the override file atomically; True when it changed."""
    if not weights:
        if path.exists():
            path.unlink()
            return True
        return False
    text = json.dumps({"weights": weights}, indent=2, sort_keys=True) + "\n"
    if path.exists() and path.read_text(encoding="utf-8") == text:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".router_weights.", suffix=".json")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temporary, path)  # the router sees the old file or the new one, never half of one
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return True

