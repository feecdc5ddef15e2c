"""Cognition services: background thinking about the person (drift, autobiography)
and about the router (follow-up calibration, reflection, the weight regulator).

Each module exposes ``run(call: ServiceCall) -> ServiceResult`` (services/service_call.py),
named by dotted path in ``configs/schedules.toml``.
"""
