"""Per-token rate limits (a GCRA token bucket in Redis) and the request bounds from ``configs/limits.toml``.

The bucket lives in Redis, not in the web process, so N web processes on M hosts share one
budget per token. The arithmetic runs in one Lua script on Redis's own clock: no race between
processes, no dependence on the web hosts' clocks agreeing.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

import redis

from services.config_files import at_least, load_config

KEY = "ratelimit:%s:%s"  # scope, fingerprint of the token (never the token itself)

# GCRA: the key holds the "theoretical arrival time" (ms). A request is allowed when the bucket,
# after adding it, is not more than `burst` intervals ahead of now (so `burst` requests pass at
# once, then one per interval); otherwise the reply is how
# many ms to wait. Returns [allowed (0/1), wait_ms].
_GCRA = """
local now_parts = redis.call('TIME')
local now = tonumber(now_parts[1]) * 1000 + math.floor(tonumber(now_parts[2]) / 1000)
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
local new_tat = tat + interval
local ahead = new_tat - now
local allowed_ahead = interval * burst
if ahead > allowed_ahead then
  return {0, ahead - allowed_ahead}
end
redis.call('SET', KEYS[1], new_tat, 'PX', ahead)
return {1, 0}
"""


@dataclass(frozen=True)
class Rate:
    per_minute: int = at_least(60, 1)
    burst: int = at_least(10, 1)


@dataclass(frozen=True)
class RequestBounds:
    max_query_chars: int = at_least(500, 1)
    max_offset: int = at_least(100_000, 1)
    max_id_chars: int = at_least(64, 1)


@dataclass(frozen=True)
class Limits:
    chat: Rate = field(default_factory=lambda: Rate(per_minute=30, burst=10))
    memory: Rate = field(default_factory=lambda: Rate(per_minute=120, burst=30))
    request: RequestBounds = field(default_factory=RequestBounds)


def load_limits(configs_dir: Path | None) -> Limits:
    """Read ``limits.toml`` (missing file → defaults); unknown keys and non-positive values are errors."""
    return load_config(configs_dir, "limits.toml", Limits())


def fingerprint(secret: str) -> str:
    """A stable, non-reversible name for a token (Redis keys and logs never hold the token)."""
    return hashlib.sha256(secret.encode()).hexdigest()[:32]


class RateLimiter:
    """Token buckets in Redis, one per (scope, token)."""

    def __init__(self, connection: redis.Redis) -> None:
        self.connection = connection
        self._script = connection.register_script(_GCRA)

    def wait_s(self, scope: str, who: str, rate: Rate) -> float:
        """Take one request from the bucket: 0.0 when allowed, else the seconds until it would be."""
        interval_ms = max(1, round(60_000 / rate.per_minute))
        allowed, wait_ms = self._script(keys=[KEY % (scope, who)], args=[interval_ms, rate.burst])
        return 0.0 if int(allowed) else int(wait_ms) / 1000.0
