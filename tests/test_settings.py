from pathlib import Path

import pytest

from services.settings import Settings, SettingsError, parse_tokens


def test_defaults_bind_loopback_without_tokens():
    settings = Settings.from_env({})
    assert settings.host == "127.0.0.1"
    assert settings.port == 8080
    assert settings.uses_embedded
    assert not settings.auth_required


def test_tokens_parse_to_users():
    assert parse_tokens("abcdefgh1:alice, zyxwvuts2:bob") == {"abcdefgh1": "alice", "zyxwvuts2": "bob"}


@pytest.mark.parametrize("raw", ["nocolon", ":alice", "token:", "abc:"])
def test_malformed_tokens_are_refused(raw):
    with pytest.raises(SettingsError):
        parse_tokens(raw)


def test_placeholder_token_is_refused():
    with pytest.raises(SettingsError, match="placeholder"):
        Settings.from_env({"ENGRAM_API_TOKENS": "changeme:alice"})


def test_public_bind_without_tokens_is_refused():
    with pytest.raises(SettingsError, match="without authentication"):
        Settings.from_env({"ENGRAM_HOST": "0.0.0.0"})


def test_public_bind_with_tokens_is_allowed():
    settings = Settings.from_env({"ENGRAM_HOST": "0.0.0.0", "ENGRAM_API_TOKENS": "s3cret-token:alice"})
    assert settings.api_tokens == {"s3cret-token": "alice"}


def test_operators_are_named_users_of_the_tokens():
    settings = Settings.from_env({"ENGRAM_API_TOKENS": "s3cret-token:alice,0ther-token:bob",
                                  "ENGRAM_OPERATORS": "alice"})
    assert settings.is_operator("alice") and not settings.is_operator("bob")
    assert Settings.from_env({}).is_operator("local"), "without tokens the single local user operates"
    with pytest.raises(SettingsError, match="ENGRAM_OPERATORS.*carol"):
        Settings.from_env({"ENGRAM_API_TOKENS": "s3cret-token:alice", "ENGRAM_OPERATORS": "alice, carol"})


@pytest.mark.parametrize(("name", "value"), [("ENGRAM_PORT", "eighty"), ("ENGRAM_PORT", "70000"),
                                             ("ENGRAM_LOCAL_LLM", "maybe"), ("ENGRAM_SSE_CAP_S", "x"),
                                             ("ENGRAM_DATABASE_WAIT_S", "-1"), ("ENGRAM_DATABASE_WAIT_S", "soon"),
                                             ("ENGRAM_LOCAL_MODEL", "gpt-5")])
def test_bad_values_name_the_variable(name, value):
    with pytest.raises(SettingsError, match=name):
        Settings.from_env({name: value})


def test_urls_switch_off_embedded(tmp_path: Path):
    settings = Settings.from_env({"REDIS_URL": "redis://x:1/0", "DATABASE_URL": "postgresql://x/y",
                                  "ENGRAM_DATA_DIR": str(tmp_path)})
    assert not settings.uses_embedded
    assert settings.data_dir == tmp_path.resolve()


def test_the_schedules_file_can_be_pointed_elsewhere(tmp_path):
    from services.periodic.schedules import schedules_path

    assert schedules_path(Settings.from_env({})) == Settings().configs_dir / "schedules.toml"
    fast = Settings.from_env({"ENGRAM_SCHEDULES_FILE": str(tmp_path / "fast.toml")})
    assert schedules_path(fast) == tmp_path / "fast.toml"


def test_housekeeping_niceness_defaults_to_the_lowest_priority_and_is_checked() -> None:
    assert Settings.from_env({}).housekeeping_nice == 19
    assert Settings.from_env({"ENGRAM_HOUSEKEEPING_NICE": "0"}).housekeeping_nice == 0
    for wrong in ("-5", "20", "low"):
        with pytest.raises(SettingsError, match="ENGRAM_HOUSEKEEPING_NICE"):
            Settings.from_env({"ENGRAM_HOUSEKEEPING_NICE": wrong})


def test_an_unknown_embedder_is_refused_before_anything_starts():
    with pytest.raises(SettingsError, match="ENGRAM_EMBEDDER must be one of auto, onnx, onnx-int8, got 'onnx-int9'"):
        Settings.from_env({"ENGRAM_EMBEDDER": "onnx-int9"})
    assert Settings.from_env({"ENGRAM_EMBEDDER": "onnx"}).embedder == "onnx"


def test_every_embedder_the_settings_accept_is_a_backend():
    from services.embeddings import BACKEND_NAMES, BACKENDS

    assert set(BACKEND_NAMES) == {"auto", *BACKENDS}


def test_how_long_a_request_log_is_kept_can_be_set_and_is_checked() -> None:
    assert Settings.from_env({}).events_ttl_s == 3600
    assert Settings.from_env({"ENGRAM_EVENTS_TTL_S": "7200"}).events_ttl_s == 7200
    for wrong in ("60", "an hour"):  # shorter than a stream is followed; not a number
        with pytest.raises(SettingsError, match="ENGRAM_EVENTS_TTL_S"):
            Settings.from_env({"ENGRAM_EVENTS_TTL_S": wrong})
