"""LLMClient against the scripted fake server, role configuration and prompt rendering."""

from __future__ import annotations

import os
import socket
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from services.errors import LLMError, LLMMalformedOutput, LLMTimeout, LLMUnavailable
from services.llm.client import JSON_RETRY_NOTE, LLMClient
from services.llm.completion import Completion
from services.llm.fallback import FALLBACK_REPLY, generate_with_fallback
from services.llm.output import parse_json_object
from services.llm.roles import ROLES, RoleConfig, load_role_configs
from services.prompts import MissingPlaceholder, PromptLibrary, UnknownPrompt
from services.settings import SettingsError
from tests.fake_llm import FakeLLM
from tests.llm_steps import Error, Garbage, Hang, Json, Reply, ToolCalls
from tests.openai_wire import MODEL_ID

ROOT = Path(__file__).resolve().parents[1]
SHORT = 0.5  # seconds; the Hang steps sleep longer than this
USER = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Tell me about cats"}]
TEST_ROLES = {
    "default": RoleConfig(timeout_s=SHORT),
    "respond": RoleConfig(stream=True, timeout_s=SHORT),
    "acknowledge": RoleConfig(stream=False, timeout_s=SHORT),
    "memory_chunker": RoleConfig(model="chunker-model", json_output=True, timeout_s=SHORT),
}


@pytest.fixture
def fake(fake_llm: FakeLLM) -> FakeLLM:
    """The session's scripted server (conftest), reset for this test."""
    return fake_llm


@pytest.fixture
def make_client(fake: FakeLLM) -> Iterator[Callable[..., LLMClient]]:
    clients: list[LLMClient] = []

    def build(**kwargs: object) -> LLMClient:
        options = {"base_url": fake.url, "api_key": None, "roles": TEST_ROLES} | kwargs
        clients.append(LLMClient(**options))  # type: ignore[arg-type]
        return clients[-1]

    yield build
    for client in clients:
        client.close()


@pytest.fixture
def client(make_client: Callable[..., LLMClient]) -> LLMClient:
    return make_client()


# --- streaming and plain completions ---------------------------------------------------------

def test_stream_delivers_each_chunk_and_server_usage(fake: FakeLLM, make_client: Callable[..., LLMClient]) -> None:
    seen: list[tuple[str, Completion]] = []
    client = make_client(observer=lambda role, completion: seen.append((role, completion)))
    fake.script(Reply("Cats are small carnivores.", chunk_size=5))
    deltas: list[str] = []
    completion = client.stream("respond", USER, deltas.append)
    assert len(deltas) == 6 and "".join(deltas) == completion.text == "Cats are small carnivores."
    assert completion.completion_tokens == 6 and not completion.usage_estimated
    assert completion.total_tokens == completion.prompt_tokens + 6
    assert completion.first_token_s is not None and completion.attempts == 1
    assert completion.model == MODEL_ID  # "default" resolved through GET /v1/models
    assert fake.requests[0]["stream_options"] == {"include_usage": True}
    assert seen == [("respond", completion)]


def test_one_kept_alive_connection_serves_every_call_of_a_client(fake: FakeLLM, client: LLMClient) -> None:
    """A digest worker's client streams every turn on its pooled connection (no TCP handshake per turn)."""
    fake.script(Reply("first reply", chunk_size=3), Reply("plain"), Reply("second reply", chunk_size=3))
    opened = fake.connections_opened
    first = client.stream("respond", USER, lambda _: None)
    plain = client.complete("acknowledge", USER)
    second = client.stream("respond", USER, lambda _: None)
    assert (first.text, plain.text, second.text) == ("first reply", "plain", "second reply")
    assert fake.connections_opened - opened == 1, "model discovery and three calls share one connection"


def test_stream_and_complete_send_the_api_key(fake: FakeLLM, make_client: Callable[..., LLMClient]) -> None:
    client = make_client(api_key="sk-engram-test")
    fake.script(Reply("streamed"), Reply("plain"))
    assert client.stream("respond", USER, lambda _: None).text == "streamed"
    assert client.complete("acknowledge", USER).text == "plain"
    assert fake.authorizations == ["Bearer sk-engram-test"] * 2
    assert fake.requests[0]["messages"] == USER and fake.requests[0]["stream"] is True


def test_malformed_stream_events_are_malformed_output(fake: FakeLLM, client: LLMClient) -> None:
    for event in ('["not", "an", "object"]', '{"choices": [{"delta": "text"}]}', '{"choices": ["text"]}'):
        fake.script(Garbage(event))
        with pytest.raises(LLMMalformedOutput):
            client.stream("respond", USER, lambda _: None)


def test_stream_estimates_usage_when_server_sends_none(fake: FakeLLM, client: LLMClient) -> None:
    fake.script(Reply("x" * 40, usage=False))
    completion = client.stream("respond", USER, lambda _: None)
    assert completion.usage_estimated
    assert completion.completion_tokens == 10 and completion.prompt_tokens > 0


def test_empty_stream_is_malformed(fake: FakeLLM, client: LLMClient) -> None:
    fake.script(Reply(""))
    with pytest.raises(LLMMalformedOutput):
        client.stream("respond", USER, lambda _: None)


def test_complete_sends_role_settings(fake: FakeLLM, client: LLMClient) -> None:
    fake.script(Reply("Noted."))
    completion = client.complete("acknowledge", USER)
    assert completion.text == "Noted." and completion.finish_reason == "stop"
    request = fake.requests[0]
    assert request["max_tokens"] == 512 and "stream" not in request and request["messages"] == USER


def test_unknown_role_uses_default(client: LLMClient) -> None:
    assert client.role("no-such-role") == TEST_ROLES["default"]


def test_observer_failure_does_not_break_the_call(fake: FakeLLM, make_client: Callable[..., LLMClient]) -> None:
    def broken(role: str, completion: Completion) -> None:
        raise RuntimeError("metrics down")

    assert make_client(observer=broken).complete("acknowledge", USER).text.startswith("Echo:")


# --- JSON ------------------------------------------------------------------------------------

def test_complete_json_sends_schema_inside_json_object_format(fake: FakeLLM, client: LLMClient) -> None:
    fake.script(Json({"gists": ["cats"]}))
    schema = {"type": "object", "properties": {"gists": {"type": "array"}}}
    data, completion = client.complete_json("memory_chunker", USER, schema=schema)
    assert data == {"gists": ["cats"]} and completion.attempts == 1
    assert fake.requests[0]["response_format"] == {"type": "json_object", "schema": schema}
    assert fake.requests[0]["model"] == "chunker-model"


def test_complete_json_tolerates_fences(fake: FakeLLM, client: LLMClient) -> None:
    fake.script(Reply('Here you go:\n```json\n{"a": {"b": 1}}\n```\nDone.'))
    assert client.complete_json("memory_chunker", USER)[0] == {"a": {"b": 1}}


def test_complete_json_retries_once_with_a_note(fake: FakeLLM, client: LLMClient) -> None:
    fake.script(Reply("not json at all"), Json({"ok": True}))
    data, completion = client.complete_json("memory_chunker", USER)
    assert data == {"ok": True} and completion.attempts == 2
    assert fake.requests[1]["messages"][-1]["content"].endswith(JSON_RETRY_NOTE)
    assert fake.requests[0]["messages"] == USER


def test_complete_json_gives_up_after_the_retry(fake: FakeLLM, client: LLMClient) -> None:
    fake.script(Reply("{broken"), Json([1, 2]))
    with pytest.raises(LLMMalformedOutput):
        client.complete_json("memory_chunker", USER)
    assert len(fake.requests) == 2


def test_json_output_role_asks_for_json_object_on_plain_calls(fake: FakeLLM, client: LLMClient) -> None:
    assert client.complete("memory_chunker", USER).text == "{}"
    assert fake.requests[0]["response_format"] == {"type": "json_object"}


@pytest.mark.parametrize("text", ["[1, 2]", "", "just words", '{"a": '])
def test_parse_json_object_rejects_non_objects(text: str) -> None:
    with pytest.raises(LLMMalformedOutput):
        parse_json_object(text)


# --- tool steps ------------------------------------------------------------------------------

TOOLS = [{"type": "function", "function": {"name": "recall", "parameters": {"type": "object"}}}]


def test_tool_step_reads_native_calls_and_flags_bad_arguments(fake: FakeLLM, client: LLMClient) -> None:
    fake.script(ToolCalls([("recall", {"query": "cats"}), ("memorize", "{not json")], text="Looking."))
    step = client.tool_step("act", USER, TOOLS)
    assert step.text == "Looking." and step.data is None
    assert [(c.id, c.name, c.arguments, c.arguments_error) for c in step.calls[:1]] == [
        ("call_0", "recall", {"query": "cats"}, None)]
    assert step.calls[1].name == "memorize" and step.calls[1].arguments == {}
    assert "not valid JSON" in (step.calls[1].arguments_error or "")
    assert fake.requests[0]["tools"] == TOOLS


def test_tool_step_falls_back_to_actions_json_in_text(fake: FakeLLM, client: LLMClient) -> None:
    fake.script(Json({"thought": "need memory", "actions": [
        {"name": "recall", "arguments": {"query": "cats"}}, {"name": "list", "arguments": "[1]"}, {"arguments": {}}]}))
    step = client.tool_step("act", USER, TOOLS)
    assert step.data is not None and step.data["thought"] == "need memory"
    recall, listing, nameless = step.calls
    assert (recall.name, recall.arguments, recall.arguments_error) == ("recall", {"query": "cats"}, None)
    assert listing.name == "list" and "JSON object" in (listing.arguments_error or "")
    assert nameless.name == "" and nameless.arguments_error


def test_tool_step_with_plain_text_has_no_calls(fake: FakeLLM, client: LLMClient) -> None:
    fake.script(Reply("All done, nothing to do."))
    step = client.tool_step("act", USER, TOOLS)
    assert step.calls == [] and step.text == "All done, nothing to do."


# --- failures --------------------------------------------------------------------------------

@pytest.mark.parametrize(("step", "error"), [
    (Hang(3.0), LLMTimeout),
    (Error(429), LLMUnavailable),
    (Error(500), LLMUnavailable),
    (Error(503, body="<html>bad gateway</html>"), LLMUnavailable),
    (Garbage(), LLMMalformedOutput),
])
@pytest.mark.parametrize("role", ["respond", "acknowledge"])
def test_endpoint_failures_map_to_llm_errors(fake: FakeLLM, client: LLMClient, role: str, step: object,
                                             error: type[Exception]) -> None:
    fake.script(step)  # type: ignore[arg-type]
    with pytest.raises(error):
        if client.role(role).stream:
            client.stream(role, USER, lambda _: None)
        else:
            client.complete(role, USER)


def test_client_errors_are_not_unavailability(fake: FakeLLM, client: LLMClient) -> None:
    fake.script(Error(400))
    with pytest.raises(LLMError) as caught:
        client.complete("acknowledge", USER)
    assert not isinstance(caught.value, LLMUnavailable | LLMTimeout | LLMMalformedOutput)


def test_unreachable_endpoint_is_unavailable() -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    client = LLMClient(base_url=f"http://127.0.0.1:{port}/v1", api_key="k", roles=TEST_ROLES)
    with pytest.raises(LLMUnavailable):
        client.complete("acknowledge", USER)
    client.close()


# --- generate_with_fallback ------------------------------------------------------------------

def test_fallback_retries_once_and_tells_the_caller(fake: FakeLLM, client: LLMClient) -> None:
    fake.script(Hang(3.0), Reply("Here I am."))
    retries: list[bool] = []
    deltas: list[str] = []
    completion, fallback = generate_with_fallback(client, "respond", USER, deltas.append, lambda: retries.append(True))
    assert not fallback and completion.text == "Here I am." == "".join(deltas)
    assert retries == [True] and completion.attempts == 2


def test_fallback_reply_after_two_failures(fake: FakeLLM, client: LLMClient) -> None:
    fake.script(Hang(3.0), Garbage())
    retries: list[bool] = []
    deltas: list[str] = []
    completion, fallback = generate_with_fallback(client, "respond", USER, deltas.append, lambda: retries.append(True))
    assert fallback and completion.text == FALLBACK_REPLY
    assert retries == [True] and deltas == [] and completion.attempts == 2


def test_fallback_does_not_retry_client_errors(fake: FakeLLM, client: LLMClient) -> None:
    fake.script(Error(401), Reply("never asked"))
    completion, fallback = generate_with_fallback(client, "respond", USER, lambda _: None)
    assert fallback and completion.text == FALLBACK_REPLY and len(fake.requests) == 1


def test_fallback_sends_non_streamed_text_as_one_delta(fake: FakeLLM, client: LLMClient) -> None:
    fake.script(Reply("Got it."))
    deltas: list[str] = []
    completion, fallback = generate_with_fallback(client, "acknowledge", USER, deltas.append)
    assert not fallback and deltas == ["Got it."] and completion.text == "Got it."


# --- role configuration ----------------------------------------------------------------------

def test_shipped_agents_toml_covers_every_role() -> None:
    roles = load_role_configs(ROOT / "configs")
    assert set(ROLES) <= set(roles)
    assert roles["tiebreaker"].timeout_s <= 3 and roles["tiebreaker"].max_tokens <= 5
    assert roles["acknowledge"].max_tokens < roles["respond"].max_tokens
    assert all(roles[name].json_output for name in ("memory_chunker", "episodic_memory"))
    assert roles["respond"].stream and not roles["memory_chunker"].stream


def test_default_table_is_inherited(tmp_path: Path) -> None:
    (tmp_path / "agents.toml").write_text(
        '[default]\nmodel = "default"\ntimeout_s = 9\n[respond]\nstream = true\n[act]\nmodel = "big"\n'
        "[drift]\nmax_tokens = 99\n")
    roles = load_role_configs(tmp_path)
    assert roles["respond"] == RoleConfig(model="default", timeout_s=9, stream=True)
    assert roles["act"].model == "big" and roles["clarify"].timeout_s == 9
    assert roles["drift"].max_tokens == 99


@pytest.mark.parametrize("body", ['[respond]\nstreem = true\n', '[respond]\nstream = 1\n',
                                  '[respond]\nmax_tokens = "5"\n', '[default]\ncontext_window = 10\n',
                                  '[respond\nstream = true\n'])
def test_bad_agents_toml_is_refused(tmp_path: Path, body: str) -> None:
    (tmp_path / "agents.toml").write_text(body)
    with pytest.raises(SettingsError):
        load_role_configs(tmp_path)


def test_missing_agents_toml_gives_defaults(tmp_path: Path) -> None:
    assert load_role_configs(tmp_path)["respond"] == RoleConfig()


# --- prompts ---------------------------------------------------------------------------------

@pytest.fixture
def library(tmp_path: Path) -> PromptLibrary:
    (tmp_path / "respond.md").write_text('Today is {{today}} ({{ weekday }}). Answer as {"reply": "..."}.\n{{context}}')
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory" / "chunk.md").write_text("Now: {{now}}. Facts: {{facts}}")
    return PromptLibrary(tmp_path)


def test_render_fills_values_and_keeps_json_braces(library: PromptLibrary) -> None:
    text = library.render("respond", context="{{today}} stays literal", now=datetime(2024, 3, 1, 12, tzinfo=UTC))
    assert text == 'Today is 2024-03-01 (Friday). Answer as {"reply": "..."}.\n{{today}} stays literal'


def test_dates_are_computed_at_render_time_in_the_given_zone(library: PromptLibrary) -> None:
    before = datetime.now(UTC).date()
    text = library.render("respond", context="")
    assert any(str(day) in text for day in (before, before + timedelta(days=1)))
    late = datetime(2024, 1, 1, 23, 30, tzinfo=UTC)
    assert "2024-01-02 (Tuesday)" in library.render("respond", context="", now=late, tz="Asia/Tokyo")
    assert library.render("memory/chunk", facts=["a"], now=late).startswith("Now: 2024-01-01T23:30:00+00:00.")


def test_missing_placeholder_is_named(library: PromptLibrary) -> None:
    with pytest.raises(KeyError) as caught:
        library.render("respond")
    assert isinstance(caught.value, MissingPlaceholder) and "{{context}}" in str(caught.value)


def test_unknown_and_invalid_prompts_are_refused(library: PromptLibrary) -> None:
    for name in ("nope", "../secrets", "/etc/passwd"):
        with pytest.raises(UnknownPrompt):
            library.template(name)


def test_edited_prompt_is_picked_up(library: PromptLibrary, tmp_path: Path) -> None:
    assert library.render("memory/chunk", facts="x", now="2024-05-05T10:00:00+00:00").endswith("Facts: x")
    path = tmp_path / "memory" / "chunk.md"
    path.write_text("Changed {{facts}}")
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))  # mtime granularity on some disks
    assert library.render("memory/chunk", facts="x") == "Changed x"
