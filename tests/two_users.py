"""Two users with their own bearer tokens, and a test client of an app that knows both."""

from __future__ import annotations

from dataclasses import replace

import pytest

ALICE, BOB = "alice-token-123", "bob-token-4567"


@pytest.fixture
def secured(settings, db_engine, real_redis):  # type: ignore[no-untyped-def]
    from api import WebDeps, create_app

    secure = replace(settings, api_tokens={ALICE: "alice", BOB: "bob"})
    deps = WebDeps.build(secure)
    app = create_app(secure, deps)
    yield app.test_client()
    deps.fanout.stop()
    deps.engine.dispose()
