"""Typed settings: the only module that reads the environment.

Entrypoints call ``Settings.from_env()`` once and pass the object down; nothing else
looks at ``os.environ``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

PROJECT_ROOT = Path(__file__).resolve().parents[1]
# `./data` means the directory `engram` is started from, like any command-line tool's relative
# path: two checkouts (or two working directories) never share one database by accident.
DEFAULT_DATA_DIR = Path("data")
LLM_PROFILES = ("auto", "compact", "full")
# services/embeddings.py's backends: auto = the shipped graph for memory, its int8-activation rewrite for requests.
EMBEDDERS = ("auto", "onnx", "onnx-int8")
# The models `engram run` can serve itself (services/llm/model_files.py pins their bytes); the first is the default.
# The first is the default: the 1.5B answers from memory far more often (bench/RESULTS.md, 2026-11-29 fourth
# session: 94 % of the tuning people's questions against the 0.5B's 76 %).
LOCAL_MODELS = ("qwen2.5-1.5b", "qwen2.5-0.5b", "smollm2")
# One folder for assembled model files, shared by every data directory (model_files.py says why).
DEFAULT_MODEL_FILES_DIR = Path.home() / ".cache" / "engram" / "models"
PLACEHOLDER_SECRETS = {"changeme", "change-me", "secret", "token", "xxx", "your-token-here"}
LOOPBACK_HOSTS = {"127.0.0.1", "localhost", "::1"}
MIN_EVENTS_TTL_S = 600  # longer than a stream is followed (ENGRAM_SSE_CAP_S, 360 s by default)


class SettingsError(ValueError):
    """A setting is missing, malformed or unsafe."""


@dataclass(frozen=True)
class Settings:
    redis_url: str | None = None
    database_url: str | None = None
    data_dir: Path = DEFAULT_DATA_DIR
    configs_dir: Path = PROJECT_ROOT / "configs"
    prompts_dir: Path = PROJECT_ROOT / "prompts"
    # Periodic services; None = configs_dir / "schedules.toml" (tests point this at a faster schedule).
    schedules_file: Path | None = None
    host: str = "127.0.0.1"
    port: int = 8080
    web_workers: int = 2
    # Two: a killed one's job is retried by the other at once (bench/worker_kill.py), not after a restart.
    digest_workers: int = 2
    api_tokens: Mapping[str, str] = field(default_factory=dict)
    # Users who operate this deployment: with tokens, only they see and retry jobs owned by no user
    # (periodic service runs). Without tokens the single local user is the operator.
    operators: frozenset[str] = frozenset()
    default_user: str = "local"
    max_text_chars: int = 8000
    openai_base_url: str | None = None
    openai_api_key: str | None = None
    local_llm: bool = True  # False: no local model; without an endpoint Engram refuses to start
    local_model: str = LOCAL_MODELS[0]  # one of LOCAL_MODELS
    model_files_dir: Path = DEFAULT_MODEL_FILES_DIR
    local_llm_threads: int = 0  # llama.cpp threads of the chat server; 0 = the model's measured default
    llm_profile: str = "auto"
    embedder: str = "auto"  # one of EMBEDDERS
    log_level: str = "INFO"
    role: str = "engram"
    sse_keepalive_s: float = 15.0
    sse_still_working_s: float = 20.0
    sse_cap_s: float = 360.0
    job_timeout_s: int = 400
    job_retries: int = 2
    # How long a worker's new PostgreSQL connection waits for a database that is restarting (crash recovery
    # after a kill took 10-30 s on a loaded machine) before its job fails: a chat must outlive a restart.
    database_wait_s: float = 90.0
    hung_after_s: float = 480.0
    # CPU niceness of the housekeeping roles (chunker, episodic, background) under `engram run`: chat
    # before housekeeping. 19 = they get the cores only when chat turns leave them idle (a burst's
    # enrichment catches up afterwards); 0 = equal share.
    housekeeping_nice: int = 19
    # How long a request's event log (its replay for a client that resumes with Last-Event-ID) is kept
    # after its last event.
    events_ttl_s: int = 3600

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """Build settings from environment variables (``ENGRAM_*`` plus the usual URLs)."""
        env = os.environ if env is None else env
        defaults = cls()
        settings = cls(
            redis_url=env.get("REDIS_URL") or None,
            database_url=env.get("DATABASE_URL") or None,
            data_dir=Path(env.get("ENGRAM_DATA_DIR") or defaults.data_dir).resolve(),
            configs_dir=Path(env.get("ENGRAM_CONFIGS_DIR", defaults.configs_dir)).resolve(),
            prompts_dir=Path(env.get("ENGRAM_PROMPTS_DIR", defaults.prompts_dir)).resolve(),
            schedules_file=Path(env["ENGRAM_SCHEDULES_FILE"]).resolve() if env.get("ENGRAM_SCHEDULES_FILE") else None,
            host=env.get("ENGRAM_HOST", defaults.host),
            port=_int(env, "ENGRAM_PORT", defaults.port),
            web_workers=_int(env, "ENGRAM_WEB_WORKERS", defaults.web_workers),
            digest_workers=_int(env, "ENGRAM_DIGEST_WORKERS", defaults.digest_workers),
            api_tokens=parse_tokens(env.get("ENGRAM_API_TOKENS", "")),
            operators=frozenset(name.strip() for name in env.get("ENGRAM_OPERATORS", "").split(",") if name.strip()),
            default_user=env.get("ENGRAM_DEFAULT_USER", defaults.default_user),
            max_text_chars=_int(env, "ENGRAM_MAX_TEXT_CHARS", defaults.max_text_chars),
            openai_base_url=env.get("OPENAI_BASE_URL") or None,
            openai_api_key=env.get("OPENAI_API_KEY") or None,
            local_llm=_bool(env, "ENGRAM_LOCAL_LLM", defaults.local_llm),
            local_model=env.get("ENGRAM_LOCAL_MODEL", defaults.local_model).strip().lower() or defaults.local_model,
            model_files_dir=_model_files_dir(env),
            local_llm_threads=_int(env, "ENGRAM_LOCAL_LLM_THREADS", defaults.local_llm_threads),
            llm_profile=env.get("ENGRAM_LLM_PROFILE", defaults.llm_profile).strip().lower() or defaults.llm_profile,
            embedder=env.get("ENGRAM_EMBEDDER", defaults.embedder),
            log_level=env.get("ENGRAM_LOG_LEVEL", defaults.log_level).upper(),
            role=env.get("ENGRAM_ROLE", defaults.role),
            sse_keepalive_s=_float(env, "ENGRAM_SSE_KEEPALIVE_S", defaults.sse_keepalive_s),
            sse_still_working_s=_float(env, "ENGRAM_SSE_STILL_WORKING_S", defaults.sse_still_working_s),
            sse_cap_s=_float(env, "ENGRAM_SSE_CAP_S", defaults.sse_cap_s),
            job_timeout_s=_int(env, "ENGRAM_JOB_TIMEOUT_S", defaults.job_timeout_s),
            job_retries=_int(env, "ENGRAM_JOB_RETRIES", defaults.job_retries),
            database_wait_s=_float(env, "ENGRAM_DATABASE_WAIT_S", defaults.database_wait_s),
            hung_after_s=_float(env, "ENGRAM_HUNG_AFTER_S", defaults.hung_after_s),
            housekeeping_nice=_int(env, "ENGRAM_HOUSEKEEPING_NICE", defaults.housekeeping_nice),
            events_ttl_s=_int(env, "ENGRAM_EVENTS_TTL_S", defaults.events_ttl_s),
        )
        settings.validate()
        return settings

    def with_urls(self, redis_url: str, database_url: str) -> Settings:
        """A copy pointing at concrete servers (used once the embedded ones are up)."""
        return replace(self, redis_url=redis_url, database_url=database_url)

    @property
    def compact_prompts(self) -> bool:
        """The small-model profile: compact prompts, history as chat turns, memory from words, the ACT fast path."""
        return self.llm_profile == "compact"

    @property
    def models_dir(self) -> Path:
        """Where graphs built from the installed models at load are kept between processes."""
        return self.data_dir / "models"

    @property
    def uses_embedded(self) -> bool:
        return self.redis_url is None or self.database_url is None

    @property
    def auth_required(self) -> bool:
        return bool(self.api_tokens)

    def is_operator(self, user_id: str) -> bool:
        """Whether ``user_id`` operates the deployment (sees and retries jobs owned by no user)."""
        return user_id in self.operators if self.auth_required else True

    def validate(self) -> None:
        """Refuse settings that would run unsafely or cannot work."""
        self._check_bounds()
        if self.llm_profile not in LLM_PROFILES:
            raise SettingsError(f"ENGRAM_LLM_PROFILE must be one of {', '.join(LLM_PROFILES)}, "
                                f"got {self.llm_profile!r}")
        if self.embedder not in EMBEDDERS:
            raise SettingsError(f"ENGRAM_EMBEDDER must be one of {', '.join(EMBEDDERS)}, got {self.embedder!r}")
        if self.local_model not in LOCAL_MODELS:
            raise SettingsError(f"ENGRAM_LOCAL_MODEL must be one of {', '.join(LOCAL_MODELS)}, "
                                f"got {self.local_model!r}")
        for token in self.api_tokens:
            if token.lower() in PLACEHOLDER_SECRETS or len(token) < 8:
                raise SettingsError("ENGRAM_API_TOKENS holds a placeholder or too-short token (min 8 chars)")
        unknown = sorted(self.operators - set(self.api_tokens.values()))
        if self.api_tokens and unknown:
            raise SettingsError(f"ENGRAM_OPERATORS names users no token in ENGRAM_API_TOKENS has: {', '.join(unknown)}")
        if self.host not in LOOPBACK_HOSTS and not self.api_tokens:
            raise SettingsError(
                f"refusing to listen on {self.host} without authentication: set ENGRAM_API_TOKENS "
                "(token:user,...) or keep ENGRAM_HOST=127.0.0.1"
            )

    def _check_bounds(self) -> None:
        if not 0 < self.port < 65536:
            raise SettingsError(f"ENGRAM_PORT must be 1-65535, got {self.port}")
        if not 0 <= self.local_llm_threads <= 64:
            raise SettingsError(f"ENGRAM_LOCAL_LLM_THREADS must be 0 (the model's default) to 64, "
                                f"got {self.local_llm_threads}")
        if not 0 <= self.housekeeping_nice <= 19:
            raise SettingsError(f"ENGRAM_HOUSEKEEPING_NICE must be 0-19, got {self.housekeeping_nice}")
        if self.database_wait_s < 0:
            raise SettingsError(f"ENGRAM_DATABASE_WAIT_S must be 0 or more, got {self.database_wait_s}")
        if self.max_text_chars < 1:
            raise SettingsError("ENGRAM_MAX_TEXT_CHARS must be positive")
        if self.events_ttl_s < MIN_EVENTS_TTL_S:
            raise SettingsError(f"ENGRAM_EVENTS_TTL_S must be at least {MIN_EVENTS_TTL_S} (a chat's stream is followed "
                                f"for up to ENGRAM_SSE_CAP_S), got {self.events_ttl_s}")


def parse_tokens(raw: str) -> dict[str, str]:
    """Parse ``token:user,token2:user2`` into a token → user mapping."""
    tokens: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in raw.split(","))):
        token, sep, user = item.partition(":")
        if not sep or not token.strip() or not user.strip():
            raise SettingsError(f"ENGRAM_API_TOKENS entry {item!r} must look like token:user")
        tokens[token.strip()] = user.strip()
    return tokens


def _model_files_dir(env: Mapping[str, str]) -> Path:
    if env.get("ENGRAM_MODEL_FILES_DIR"):
        return Path(env["ENGRAM_MODEL_FILES_DIR"]).expanduser().resolve()
    if env.get("XDG_CACHE_HOME"):
        return Path(env["XDG_CACHE_HOME"]).expanduser().resolve() / "engram" / "models"
    return DEFAULT_MODEL_FILES_DIR


def _int(env: Mapping[str, str], name: str, default: int) -> int:
    return _parsed(env, name, default, int, "an integer")


def _float(env: Mapping[str, str], name: str, default: float) -> float:
    return _parsed(env, name, default, float, "a number")


def _parsed(env: Mapping[str, str], name: str, default: Any, parse: Callable[[str], Any], what: str) -> Any:
    raw = env.get(name)
    if raw in (None, ""):
        return default
    try:
        return parse(raw)
    except ValueError:
        raise SettingsError(f"{name} must be {what}, got {raw!r}") from None


def _bool(env: Mapping[str, str], name: str, default: bool) -> bool:
    raw = env.get(name)
    if raw in (None, ""):
        return default
    if raw.lower() in {"1", "true", "yes", "on"}:
        return True
    if raw.lower() in {"0", "false", "no", "off"}:
        return False
    raise SettingsError(f"{name} must be true or false, got {raw!r}")
