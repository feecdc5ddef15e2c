"""How long "forget everything" takes while the vector backfill has a batch in the model (forget29).

A person's imported turns wait for their vectors; the backfill's first batch (the oldest ``BATCH`` exchanges: theirs)
is in the real model when they ask to forget everything (``forget_user``, what ``DELETE /memory`` runs). Another
person's turns wait behind. Prints, per run, the purge's time and the backfill's whole time, in a throwaway embedded
PostgreSQL:

    PYTHONPATH=. nice -n 10 python -m bench.forget_backfill [--runs 3]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import threading
import time
from typing import Any

from sqlalchemy import text
from sqlalchemy.orm import Session, sessionmaker

from bench.recall import database
from services.memory.forget import forget_user
from services.memory.importer import pair_exchanges, parse_lines, store_records
from services.memory.vectors import BATCH, fill_all, pending_count

START = dt.datetime(2025, 5, 1, 9, 0, tzinfo=dt.UTC)
# A turn of ordinary length (~250 characters), numbered so that no two are one text.
SAID = ("we walked along the river after lunch and talked about the garden, the boats moored by the old mill, the cost "
        "of the repairs to the roof and whether the apple tree should come down before the winter storms.")


def _turns(count: int) -> list[Any]:
    lines, bad, _ = parse_lines([json.dumps({"session": f"s{n // 6}", "speaker": ("user", "assistant")[n % 2],
                                             "text": f"Turn {n}: {SAID}",
                                             "timestamp": (START + dt.timedelta(minutes=n)).isoformat()})
                                 for n in range(count)])
    assert not bad
    return lines


def one_run(sessions: sessionmaker[Session], embedder: Any) -> tuple[float, float]:
    """(seconds the purge took, seconds the backfill took) for one person forgotten while their batch embeds."""
    with sessions.begin() as session:
        session.execute(text("TRUNCATE users, exchanges RESTART IDENTITY CASCADE"))
    store_records(sessions, embedder, "forget-me", pair_exchanges(_turns(2 * BATCH)), embed=False)
    store_records(sessions, embedder, "keeper", pair_exchanges(_turns(2 * BATCH)), embed=False)
    inside, embed_many = threading.Event(), embedder.embed_many

    def signalling(texts: list[str], **kwargs: Any) -> Any:
        inside.set()
        return embed_many(texts, **kwargs)

    embedder.embed_many = signalling
    started = time.monotonic()
    backfill = threading.Thread(target=fill_all, args=(sessions, embedder))
    backfill.start()
    try:
        inside.wait(300)
        time.sleep(0.5)  # well inside the batch
        at = time.monotonic()
        forget_user(sessions, None, "forget-me")
        purge_s = time.monotonic() - at
        backfill.join()
    finally:
        embedder.embed_many = embed_many
    with sessions() as session:
        assert pending_count(session) == 0, "the keeper's turns were left without vectors"
    return purge_s, time.monotonic() - started


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    from services.embeddings import load_embedder

    embedder = load_embedder("auto", cache_size=0)
    embedder.embed("warm the graph up")
    with database(None) as (_, sessions):
        for run in range(args.runs):
            purge_s, backfill_s = one_run(sessions, embedder)
            print(f"run {run + 1}: forget everything {purge_s:.2f} s during a batch of {BATCH}; "
                  f"backfill of both people {backfill_s:.1f} s", flush=True)


if __name__ == "__main__":
    main()
