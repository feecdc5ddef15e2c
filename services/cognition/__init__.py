"""Cognition services: background thinking about the person (drift, autobiography).

Each module exposes ``run(call: ServiceCall) -> ServiceResult`` (services/service_call.py),
named by dotted path in ``configs/schedules.toml``.
"""
