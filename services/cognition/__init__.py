"""Cognition services: background thinking about the person (drift, autobiography, skill profiles)
and about the router (follow-up calibration, reflection, the weight regulator).

Each module exposes ``run(call: ServiceCall) -> ServiceResult`` (services/periodic/contract.py),
named by dotted path in ``configs/schedules.toml``.
"""
