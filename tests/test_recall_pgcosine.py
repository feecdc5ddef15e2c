"""pgvector's cosine distance reproduced in the process (services/memory/pgcosine.py): the very doubles the server
computes, for ordinary vectors and for the rare sums that a rounding through float64 would get wrong."""

from __future__ import annotations

import numpy as np
import pytest
from sqlalchemy import text
from sqlalchemy.orm import Session

from services.memory import pgcosine
from services.memory.speakers import vector_literal

pytestmark = pytest.mark.integration

ONE_ULP = 2.0**-23  # float32's spacing just above 1


def _exact_literal(vector: np.ndarray) -> str:
    """A float32 vector's text form that reads back as the same floats."""
    return "[" + ",".join(f"{value:.9g}" for value in np.asarray(vector, dtype=np.float32).tolist()) + "]"


def _server_distances(session: Session, rows: np.ndarray, query: str) -> np.ndarray:
    return np.array(session.scalars(text(
        "SELECT CAST(r AS vector) <=> CAST(:query AS vector) FROM unnest(CAST(:rows AS text[])) WITH ORDINALITY "
        "AS t(r, i) ORDER BY i"), {"rows": [_exact_literal(row) for row in rows], "query": query}).all())


def _halfway_row_and_query() -> tuple[np.ndarray, np.ndarray]:
    """A row and a query whose dot product's lane 0 takes a fused multiply-add that float64 rounds onto a point
    halfway between two float32s: 1 + 2^-23 plus 2^-24·(1 − 2^-46) is 1 + 3·2^-24 in float64, which rounds to even
    (1 + 2^-22) where the exact sum, just below it, rounds to 1 + 2^-23."""
    row, query = np.zeros(384, dtype=np.float32), np.zeros(384, dtype=np.float32)
    row[0], query[0] = 1 + ONE_ULP, 1.0
    row[pgcosine.LANES] = 2.0**-12 * (1 + ONE_ULP)  # the lane's next element
    query[pgcosine.LANES] = 2.0**-12 * (1 - ONE_ULP)
    query[1:pgcosine.LANES] = 0.5  # other lanes of the query only: the dot product is lane 0's sum
    return row, query


def test_the_cosines_are_the_servers_to_the_last_bit(db_engine):
    rng = np.random.default_rng(3)
    rows = rng.normal(size=(300, 384)).astype(np.float32)
    rows[:100] /= np.linalg.norm(rows[:100], axis=1, keepdims=True)  # unit vectors, as the model's
    rows[100:110, :50] = 0.0
    rows[110:120] *= np.float32(1e-18)  # tiny values: products far below float32's normal range
    halfway_row, halfway_query = _halfway_row_and_query()
    queries = [rng.normal(size=384).astype(np.float32) for _ in range(4)] + [halfway_query]
    with Session(db_engine) as session:
        for query in queries:
            for literal in (vector_literal(query), _exact_literal(query)):  # as recall sends it, and exactly
                parsed = pgcosine.parsed(literal)
                assert parsed is not None
                together = np.vstack([rows, halfway_row])
                assert np.array_equal(pgcosine.distances(together, parsed), _server_distances(session, together,
                                                                                              literal))


def test_a_sum_rounded_onto_a_halfway_point_is_rounded_as_once():
    left, right = np.array([[1 + ONE_ULP]]), np.array([[2.0**-24 * (1 - 2.0**-46)]])
    assert (left + right).astype(np.float32)[0, 0] == np.float32(1 + 2 * ONE_ULP)  # twice rounded: the case at hand
    assert pgcosine._sum32(left, right)[0, 0] == 1 + ONE_ULP


def test_the_text_form_is_read_as_the_server_reads_it(db_engine):
    # The decimal just above 1 + 2^-24 (halfway between two float32s) reads as 1 + 2^-24 in float64, which rounds to
    # even (1); strtof, rounding the decimal once, gives 1 + 2^-23.
    values = ["1.0000000596046448", "0.5", "-0.0123456", "3.4e-5"] * 96
    literal = "[" + ",".join(values) + "]"
    with Session(db_engine) as session:
        server = session.scalar(text("SELECT CAST(CAST(:v AS vector) AS real[])"), {"v": literal})
    parsed = pgcosine.parsed(literal)
    assert parsed is not None and parsed[0] == np.float32(1 + ONE_ULP)
    assert np.array_equal(parsed, np.array(server, dtype=np.float32))
