"""Every connection ``make_engine`` opens has the session time zone UTC, whatever the server's (or the URL's) zone:
the driver then hands timestamptz values back with ``timezone.utc`` (not a ``zoneinfo`` zone, each value of which
cost the driver ~0.3 µs more to load and every subtraction from an ``dt.UTC`` time more), the same instants."""

from __future__ import annotations

import datetime as dt
from urllib.parse import quote

import pytest
from sqlalchemy import text

from services.db import BINARY_RESULTS, make_engine

pytestmark = pytest.mark.integration

BERLIN = "?options=" + quote("-c TimeZone=Europe/Berlin")
MOMENT = dt.datetime(2026, 7, 1, 12, 30, tzinfo=dt.UTC)


@pytest.mark.parametrize("binary", [False, True])
def test_sessions_are_utc_even_when_the_connection_asks_for_another_zone(database_url: str, binary: bool) -> None:
    engine = make_engine(database_url + BERLIN)
    try:
        with engine.connect() as connection:
            zone = connection.execute(text("SELECT current_setting('TimeZone')")).scalar()
            moment = connection.execute(text("SELECT CAST(:at AS timestamptz)").execution_options(
                **{BINARY_RESULTS: binary}), {"at": MOMENT}).scalar()
            connection.rollback()  # a later transaction keeps the zone: it is the session's, not the first one's
            again = connection.execute(text("SELECT current_setting('TimeZone')")).scalar()
    finally:
        engine.dispose()
    assert zone == again == "UTC"
    assert moment == MOMENT and moment.tzinfo is dt.UTC
