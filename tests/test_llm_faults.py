"""LLM endpoint faults through the real openai client: each one retried once, then the real reply."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from services.errors import LLMMalformedOutput
from services.llm.client import LLMClient
from services.llm.failures import retry_after
from services.llm.fallback import FALLBACK_REPLY, generate_with_fallback
from services.llm.roles import RoleConfig
from tests.fake_llm import FakeLLM
from tests.llm_steps import Cut, Error, Garbage, Hang, Reply

USER = [{"role": "user", "content": "Tell me about otters"}]
REAL = "Otters hold hands while they sleep."


@pytest.fixture
def client(fake_llm: FakeLLM) -> Iterator[LLMClient]:
    roles = {"default": RoleConfig(timeout_s=0.5), "respond": RoleConfig(stream=True, timeout_s=0.5)}
    llm = LLMClient(base_url=fake_llm.url, api_key=None, roles=roles)
    yield llm
    llm.close()


@pytest.mark.parametrize("fault", [
    Hang(3.0),                                      # timeout
    Error(429, headers={"Retry-After": "1"}),       # rate limited
    Error(500),
    Garbage(),                                      # malformed stream
    Cut("Otters are the best swimmers of", after_chunks=2),  # connection cut mid-reply
], ids=["timeout", "429", "500", "malformed", "cut"])
def test_a_fault_is_retried_once_and_the_real_reply_arrives(fake_llm: FakeLLM, client: LLMClient, fault) -> None:
    fake_llm.script(fault, Reply(REAL, chunk_size=5))
    deltas: list[str] = []
    retries: list[bool] = []
    completion, fallback = generate_with_fallback(client, "respond", USER, deltas.append, lambda: retries.append(True))
    assert not fallback and completion.text == REAL
    assert retries == [True], "the client is told to drop the partial text once"
    assert len(fake_llm.requests) == 2


def test_a_429_retry_waits_as_long_as_retry_after_asks(fake_llm: FakeLLM, client: LLMClient) -> None:
    fake_llm.script(Error(429, headers={"Retry-After": "1"}), Reply(REAL))
    completion, fallback = generate_with_fallback(client, "respond", USER, lambda _: None)
    first, second = fake_llm.arrivals
    assert not fallback and second - first >= 1.0


def test_a_stream_cut_mid_reply_is_not_taken_for_a_reply(fake_llm: FakeLLM, client: LLMClient) -> None:
    fake_llm.script(Cut("Otters are the best swimmers of", after_chunks=2))
    with pytest.raises(LLMMalformedOutput, match="cut off"):
        client.stream("respond", USER, lambda _: None)


def test_two_faults_in_a_row_give_the_apology(fake_llm: FakeLLM, client: LLMClient) -> None:
    fake_llm.script(Cut("Otters", after_chunks=1), Error(500))
    completion, fallback = generate_with_fallback(client, "respond", USER, lambda _: None)
    assert fallback and completion.text == FALLBACK_REPLY


@pytest.mark.parametrize(("raw", "seconds"), [("2", 2.0), ("0.5", 0.5), (None, None), ("soon", None), ("-1", None),
                                              ("Wed, 21 Oct 2015 07:28:00 GMT", None)])
def test_retry_after_header_parsing(raw: str | None, seconds: float | None) -> None:
    assert retry_after(raw) == seconds


def test_a_stream_whose_connection_breaks_after_done_keeps_its_reply(fake_llm: FakeLLM, client: LLMClient) -> None:
    fake_llm.script(Reply(REAL, chunk_size=5, end_body=False), Reply("And they have pockets."))
    deltas: list[str] = []
    assert client.stream("respond", USER, deltas.append).text == REAL == "".join(deltas)
    opened = fake_llm.connections_opened
    assert client.stream("respond", USER, lambda _: None).text == "And they have pockets."
    assert fake_llm.connections_opened == opened + 1, "the broken connection is not reused"
