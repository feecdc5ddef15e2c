"""The scripted OpenAI-protocol test server, over raw HTTP and through the openai client."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import openai
import pytest

from tests.fake_llm import FakeLLM, RemoteFakeLLM
from tests.llm_steps import Error, Garbage, Hang, Json, Reply, ToolCalls, step_from_dict, step_to_dict
from tests.openai_wire import MODEL_ID

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def fake(fake_llm: FakeLLM) -> FakeLLM:
    """The session's scripted server (conftest), reset for this test."""
    return fake_llm


@pytest.fixture
def sdk(fake: FakeLLM) -> Iterator[openai.OpenAI]:
    client = openai.OpenAI(base_url=fake.url, api_key="test", max_retries=0, timeout=5)
    yield client
    client.close()


def chat(fake: FakeLLM, text: str = "hello there", **extra: object) -> httpx.Response:
    body = {"model": "m", "messages": [{"role": "system", "content": "sys"}, {"role": "user", "content": text}]}
    return httpx.post(f"{fake.url}/chat/completions", json=body | extra, timeout=5)


def sse_events(raw: str) -> list[str]:
    return [line[len("data: "):] for line in raw.splitlines() if line.startswith("data: ")]


def test_models_lists_one_model(fake: FakeLLM) -> None:
    response = httpx.get(f"{fake.url}/models", timeout=5)
    assert response.status_code == 200
    assert [model["id"] for model in response.json()["data"]] == [MODEL_ID]


def test_default_reply_echoes_last_user_message(fake: FakeLLM) -> None:
    body = chat(fake, "x" * 100).json()
    assert body["choices"][0]["message"]["content"] == "Echo: " + "x" * 60
    assert body["choices"][0]["finish_reason"] == "stop"
    assert body["usage"]["total_tokens"] == body["usage"]["prompt_tokens"] + body["usage"]["completion_tokens"]


def test_default_reply_in_json_mode_is_empty_object(fake: FakeLLM) -> None:
    body = chat(fake, response_format={"type": "json_object"}).json()
    assert body["choices"][0]["message"]["content"] == "{}"


def test_stream_is_sse_with_done_and_usage_when_asked(fake: FakeLLM) -> None:
    fake.script(Reply("abcdefghij", chunk_size=3))
    response = chat(fake, stream=True, stream_options={"include_usage": True})
    assert response.headers["content-type"].startswith("text/event-stream")
    events = sse_events(response.text)
    assert events[-1] == "[DONE]"
    chunks = [json.loads(event) for event in events[:-1]]
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    assert text == "abcdefghij"
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] == 4


def test_stream_without_include_usage_sends_no_usage(fake: FakeLLM) -> None:
    events = sse_events(chat(fake, stream=True).text)
    assert all("usage" not in json.loads(event) for event in events[:-1])


def test_steps_are_consumed_in_order_then_default(fake: FakeLLM) -> None:
    fake.script(Reply("one"), Json({"a": 1}))
    contents = [chat(fake, "q").json()["choices"][0]["message"]["content"] for _ in range(3)]
    assert contents == ["one", '{"a": 1}', "Echo: q"]


def test_route_matches_any_message_regardless_of_queue(fake: FakeLLM) -> None:
    fake.route(contains="CHUNKER", step=Json({"gists": []}))
    fake.script(Reply("chat reply"))
    messages = [{"role": "system", "content": "You are the CHUNKER"}, {"role": "user", "content": "x"}]
    routed = httpx.post(f"{fake.url}/chat/completions", json={"model": "m", "messages": messages}, timeout=5).json()
    assert routed["choices"][0]["message"]["content"] == '{"gists": []}'
    assert chat(fake).json()["choices"][0]["message"]["content"] == "chat reply"


def test_error_step_answers_status_and_openai_error_body(fake: FakeLLM) -> None:
    fake.script(Error(429), Error(503, body="plain failure"))
    first, second = chat(fake), chat(fake)
    assert first.status_code == 429 and "error" in first.json()
    assert second.status_code == 503 and second.text == "plain failure"


def test_garbage_is_not_json(fake: FakeLLM) -> None:
    fake.script(Garbage(), Garbage())
    with pytest.raises(json.JSONDecodeError):
        chat(fake).json()
    with pytest.raises(json.JSONDecodeError):
        json.loads(sse_events(chat(fake, stream=True).text)[0])


def test_hang_outlasts_a_short_client_timeout(fake: FakeLLM) -> None:
    fake.script(Hang(2.0))
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(f"{fake.url}/chat/completions", json={"messages": []}, timeout=0.2)


def test_requests_are_recorded_and_reset(fake: FakeLLM) -> None:
    chat(fake, "first")
    chat(fake, "second")
    assert [r["messages"][-1]["content"] for r in fake.requests] == ["first", "second"]
    fake.reset()
    assert fake.requests == []


def test_openai_client_streams_text(fake: FakeLLM, sdk: openai.OpenAI) -> None:
    fake.script(Reply("streamed words here", chunk_size=5))
    stream = sdk.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}], stream=True)
    pieces = [chunk.choices[0].delta.content for chunk in stream if chunk.choices and chunk.choices[0].delta.content]
    assert len(pieces) == 4 and "".join(pieces) == "streamed words here"


def test_openai_client_reads_tool_calls(fake: FakeLLM, sdk: openai.OpenAI) -> None:
    fake.script(ToolCalls([("recall", {"query": "cats"}), ("memorize", "{broken")], text="on it"))
    message = sdk.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}]).choices[0].message
    assert message.content == "on it"
    assert [(c.id, c.function.name, c.function.arguments) for c in message.tool_calls] == [
        ("call_0", "recall", '{"query": "cats"}'), ("call_1", "memorize", "{broken")]


def test_openai_client_reassembles_streamed_tool_call_deltas(fake: FakeLLM, sdk: openai.OpenAI) -> None:
    fake.script(ToolCalls([("recall", {"query": "a long query to split in pieces"}), ("list", {})]))
    calls: dict[int, dict[str, str]] = {}
    finish = None
    for chunk in sdk.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}], stream=True):
        for delta in chunk.choices[0].delta.tool_calls or []:
            call = calls.setdefault(delta.index, {"name": "", "arguments": ""})
            call["name"] += delta.function.name or ""
            call["arguments"] += delta.function.arguments or ""
        finish = chunk.choices[0].finish_reason or finish
    assert finish == "tool_calls"
    assert calls[0]["name"] == "recall"
    assert json.loads(calls[0]["arguments"]) == {"query": "a long query to split in pieces"}
    assert calls[1] == {"name": "list", "arguments": "{}"}


def test_steps_round_trip_through_their_json_form() -> None:
    steps = [Reply("x", chunk_size=2, usage=False), ToolCalls([("a", {"b": 1})]), Error(500), Garbage(), Hang(1.5),
             Json([1, 2])]
    assert [step_from_dict(json.loads(json.dumps(step_to_dict(step)))) for step in steps] == steps


def test_remote_client_scripts_over_the_control_endpoints(fake: FakeLLM) -> None:
    remote = RemoteFakeLLM(fake.url.removesuffix("/v1"))
    remote.script(Reply("remote one"))
    remote.route("ROUTED", Json({"ok": True}))
    assert chat(fake, "ROUTED please").json()["choices"][0]["message"]["content"] == '{"ok": true}'
    assert chat(fake).json()["choices"][0]["message"]["content"] == "remote one"
    assert len(remote.requests) == 2
    remote.reset()
    assert remote.requests == []


def test_runs_as_a_separate_process() -> None:
    process = subprocess.Popen([sys.executable, "-m", "tests.fake_llm", "--port", "0"], cwd=ROOT,
                               stdout=subprocess.PIPE, text=True)
    try:
        port = int(process.stdout.readline())
        remote = RemoteFakeLLM(f"http://127.0.0.1:{port}")
        remote.script(Reply("from the process"))
        with openai.OpenAI(base_url=remote.url, api_key="x", max_retries=0, timeout=5) as client:
            answer = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
        assert answer.choices[0].message.content == "from the process"
        assert remote.requests[0]["messages"] == [{"role": "user", "content": "hi"}]
    finally:
        process.terminate()
        assert process.wait(timeout=10) == 0
        process.stdout.close()


def test_a_client_hanging_up_prints_nothing_but_other_server_errors_still_show(capsys):
    from tests.fake_llm import _Server

    server = _Server(("127.0.0.1", 0))
    try:
        for error in (ConnectionResetError(104, "reset by peer"), BrokenPipeError(32, "broken pipe"),
                      ValueError("a handler bug")):
            try:
                raise error
            except Exception:  # noqa: BLE001 — handle_error reads the exception being handled
                server.handle_error(None, ("127.0.0.1", 1))
    finally:
        server.server_close()
    printed = capsys.readouterr().err
    assert "ValueError: a handler bug" in printed
    assert "ConnectionResetError" not in printed and "BrokenPipeError" not in printed
