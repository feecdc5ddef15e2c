"""GET /ops/services: every periodic service with its schedule, last run and next run."""

from __future__ import annotations

import datetime as dt

from flask import Blueprint, Response, current_app, jsonify
from flask.blueprints import BlueprintSetupState

from api.auth import current_user
from services.periodic.runs import last_runs, service_table
from services.periodic.schedules import load_schedules, schedules_path

bp = Blueprint("ops", __name__, url_prefix="/ops")


@bp.record_once
def _load_schedules(state: BlueprintSetupState) -> None:
    # Read once per app like the scheduler does: a broken file fails start-up, not every request.
    settings = state.app.extensions["engram"].settings
    state.app.extensions["engram.schedules"] = load_schedules(schedules_path(settings))


@bp.get("/services")
def services() -> Response:
    current_user()  # the same bearer token as the rest of the API when tokens are configured
    with current_app.extensions["engram.sessions"]() as session:
        runs = last_runs(session)
    specs = current_app.extensions["engram.schedules"]
    return jsonify(service_table(specs, runs, dt.datetime.now(dt.UTC)))
