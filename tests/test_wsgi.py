"""The web role's process set-up (api/wsgi.make_app, what gunicorn's gevent worker calls)."""

from __future__ import annotations

import gc

import pytest

from api.wsgi import make_app

pytestmark = pytest.mark.integration


def test_the_web_process_freezes_what_it_built_so_collections_do_not_pause_its_streams(
        monkeypatch, database_url, redis_server, tmp_path):  # type: ignore[no-untyped-def]
    # A full collection walks every tracked object; in one gevent process that pause holds every open
    # stream. What make_app built lives as long as the process, so it must be out of the collector's way.
    for name in ("ENGRAM_API_TOKENS", "ENGRAM_HOST"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DATABASE_URL", database_url)
    monkeypatch.setenv("REDIS_URL", redis_server.url)
    monkeypatch.setenv("ENGRAM_DATA_DIR", str(tmp_path / "data"))
    gc.unfreeze()
    app = make_app()
    try:
        frozen = gc.get_freeze_count()
        assert frozen > 10_000, f"only {frozen} objects frozen"
        # The app's own objects are among them: a collection no longer tracks them as young or old.
        assert not any(app is obj for obj in gc.get_objects())
    finally:
        app.extensions["engram"].fanout.stop()
        gc.unfreeze()
