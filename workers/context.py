"""Building the per-process worker context (``services.service_call.WorkerContext``): connections, clients, models.

``EngramWorker`` builds it before its work loop (so models load once per process, never per
job); a plain ``rq worker`` builds it on the first job instead. Tests install their own.
"""

from __future__ import annotations

import os
from typing import Any

import redis

from services.act.config import ActConfig, process_act_config
from services.config_files import once_per_process
from services.connections import redis_client as patient_redis
from services.db import make_engine, make_sessionmaker
from services.embedded.postgres import share_niceness_with_backends
from services.llm.client import LLMClient
from services.llm.priority import ChatPriority
from services.llm.profile import LLMProfile, load_profile
from services.llm.roles import load_role_configs
from services.memory.config import MemoryConfig, process_memory_config
from services.metrics import Metrics
from services.prompts import PromptLibrary
from services.service_call import WorkerContext
from services.settings import Settings
from services.streams import EventLog
from services.threads import ThreadStore


def build_context(settings: Settings, *, redis_client: redis.Redis | None = None) -> WorkerContext:
    """Connect to Redis, PostgreSQL and the LLM endpoint described by ``settings``."""
    if not settings.database_url:
        raise RuntimeError("workers need DATABASE_URL (engram run sets it for its children)")
    if redis_client is None:
        if not settings.redis_url:
            raise RuntimeError("workers need REDIS_URL (engram run sets it for its children)")
        redis_client = patient_redis(settings.redis_url)
    if not settings.openai_base_url:
        raise RuntimeError("workers need OPENAI_BASE_URL (engram run sets it when it starts the local model)")
    engine = make_engine(settings.database_url, wait_s=settings.database_wait_s)
    nice = os.getpriority(os.PRIO_PROCESS, 0)
    if nice > 0:  # a housekeeping role (consumer.HOUSEKEEPING_ROLES): its SQL should not outrank a chat either
        share_niceness_with_backends(engine, settings.data_dir, nice)
    metrics = Metrics(redis_client)
    profile = load_profile(settings)
    llm = LLMClient(
        base_url=settings.openai_base_url,
        api_key=settings.openai_api_key,
        roles=profile.roles(load_role_configs(settings.configs_dir)),
        observer=lambda role, completion: _record_llm(metrics, role, completion),
        before_background=ChatPriority(redis_client).wait_for_chat,
    )
    return WorkerContext(
        settings=settings,
        redis=redis_client,
        engine=engine,
        sessions=make_sessionmaker(engine),
        events=EventLog(redis_client, ttl_s=settings.events_ttl_s),
        threads=ThreadStore(redis_client),
        metrics=metrics,
        llm=llm,
        prompts=PromptLibrary(settings.prompts_dir),
        extras={"llm_profile": profile},
    )


def memory_config(context: WorkerContext) -> MemoryConfig:
    """``configs/memory.toml``, read once per process (workers.startup loads it before the loop)."""
    return process_memory_config(context.extras, context.settings.configs_dir)


def llm_profile(context: WorkerContext) -> LLMProfile:
    """The prompt profile of this process (compact for the small local model), read once."""
    return once_per_process(context.extras, "llm_profile", lambda: load_profile(context.settings))


def act_config(context: WorkerContext) -> ActConfig:
    """``configs/act.toml``, read once per process."""
    return process_act_config(context.extras, context.settings.configs_dir)


def _record_llm(metrics: Metrics, role: str, completion: Any) -> None:
    metrics.observe("engram_llm_seconds", completion.latency_s, {"role": role})
    if getattr(completion, "first_token_s", None) is not None:
        metrics.observe("engram_llm_first_token_seconds", completion.first_token_s, {"role": role})
    metrics.inc("engram_tokens_total", {"role": role, "kind": "prompt"}, completion.prompt_tokens)
    metrics.inc("engram_tokens_total", {"role": role, "kind": "completion"}, completion.completion_tokens)
