"""A thousand people on one database: recall's speed, its vector arm's quality and its privacy at a million exchanges.

    python -m bench.tenants [--users 1000] [--exchanges 1000000] [--pgdata DIR] [--reuse] [--isolation 10000]

Builds (``bench/tenants_build.py``: who, what text, which vectors) or, with ``--reuse``, reopens a database of many
people in ``--pgdata`` (default ``$ENGRAM_DATA_DIR/tenants-pg``), then reports, for light (≤ 500 exchanges), medium
(≤ 10,000) and heavy people apart:
  * recall p50 / p95 with the query embedding (recall embeds the query itself), over sampled people;
  * the vector arm's recall@10 against an exact search of the person's own rows: the share of their true 10 nearest
    exchanges the arm's statement returns at LIMIT 10 and at its real depth (``candidates``), and its time beside the
    exact search's; the people whose vectors are the real model's apart;
  * rows of another person in any result of ``--isolation`` recalls of random people (must be 0);
  * build time, import rate, database and index sizes, ANALYZE and VACUUM (ANALYZE) times;
  * one new person of 10,000 exchanges imported into the loaded database: stored per second, found by their words
    at once, then the vector backfill (real model) and their words' vectors, per second.
Every line with the load average: latencies on a shared box are pessimistic when it is busy.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
from sqlalchemy import text

from bench.chatgen import TOPICS, ChatGen
from bench.recall import load_average
from bench.tenants_build import BankEmbedder, Tenant, build, check_bank, maintenance, population, sizes, tenant_records
from bench.tenants_build import save as save_json
from services.db import make_engine, make_sessionmaker
from services.embedded.lifecycle import free_port
from services.embedded.postgres import EmbeddedPostgres
from services.embeddings import for_requests, load_embedder
from services.memory import person_index, search, vectors, vocabulary
from services.memory.config import MemoryConfig
from services.memory.forget import forget_user
from services.memory.importer import store_records
from services.memory.recall import recall
from services.migrate import upgrade_head
from services.settings import Settings

GROUPS = ("light", "medium", "heavy")
NEW_USER = Tenant("new-10k", 10_000, 777_777)
EXACT_SQL = ("SELECT t.id FROM exchanges t WHERE t.user_id = :user ORDER BY (t.embedding <=> :qvec) + 0 "
             "LIMIT :limit")


def say(line: str) -> None:
    print(line, flush=True)


def queries_for(tenant: Tenant, count: int) -> list[str]:
    """Chat-like sentences on random topics, from a generator of the person's own kind (not their text)."""
    rng, gen = random.Random(tenant.seed), ChatGen(seed=tenant.seed + 500_000)
    return [gen.sentence(rng.choice(list(TOPICS))) for _ in range(count)]


def sampled(tenants: list[Tenant], per_group: int, real: bool | None = None) -> dict[str, list[Tenant]]:
    rng = random.Random(9)
    chosen = {}
    for group in GROUPS:
        members = [t for t in tenants if t.group == group and (real is None or t.real == real)]
        chosen[group] = rng.sample(members, min(per_group, len(members)))
    return chosen


def server_cpu(postmaster: int | None) -> float:
    """CPU seconds (user + system) of the postmaster's children so far, from /proc: the backends' work, which a
    busy box does not inflate as it does wall time."""
    total = 0
    for entry in Path("/proc").iterdir() if postmaster else ():
        try:
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(stat[1]) == postmaster:
            total += int(stat[11]) + int(stat[12])
    return total / os.sysconf("SC_CLK_TCK")


def latency(sessions, embedder, people: dict[str, list[Tenant]], per_user: int,  # type: ignore[no-untyped-def]
            postmaster: int | None = None) -> dict[str, dict[str, tuple]]:
    """p50 / p95 ms of recall with the embedding, by group, with the configured vector arm and with the HNSW index
    for everyone (``exact_lines`` 0), both on each query so both meet the same load; and CPU ms per recall of this
    process (the query's embedding included) and of the server's backends."""
    configured = MemoryConfig()
    configs = {"configured": configured, "HNSW for everyone": replace(
        configured, recall=replace(configured.recall, exact_lines=0))}
    found: dict[str, dict[str, tuple]] = {name: {} for name in configs}
    with sessions() as session:
        for group, members in people.items():
            times: dict[str, list[float]] = {name: [] for name in configs}
            cpu = {name: [0.0, 0.0] for name in configs}
            for tenant in members:
                # Untimed, once per person: their first recall in a process loads what later ones keep (vocabmatrix,
                # termcounts), as an active person's worker has.
                recall(session, embedder, tenant.user_id, "hello there", k=10, config=configured, reinforce=False)
                for index, query in enumerate(queries_for(tenant, per_user)):
                    # Each side goes first for half the queries: a query's first recall counts its new words for
                    # the person (termcounts keeps them), which the second recall of the same query reads kept.
                    for name, config in list(configs.items())[:: 1 if index % 2 == 0 else -1]:
                        client, server, started = time.process_time(), server_cpu(postmaster), time.perf_counter()
                        recall(session, embedder, tenant.user_id, query, k=10, config=config, reinforce=False)
                        times[name].append((time.perf_counter() - started) * 1000)
                        cpu[name][0] += time.process_time() - client
                        cpu[name][1] += server_cpu(postmaster) - server
                session.rollback()
            for name, values in times.items():
                if values:
                    found[name][group] = (len(values), *np.percentile(values, [50, 95]),
                                          *(1000 * c / len(values) for c in cpu[name]))
    return found


def vector_quality(sessions, embedder, bank, people: dict[str, list[Tenant]], per_user: int,  # type: ignore[no-untyped-def]
                   exact_lines: int) -> dict[str, dict]:
    """The vector arm against an exact per-person search: recall@10 at LIMIT 10 and at LIMIT candidates, and ms.
    Queries are embedded in the person's vectors' own space: the real model's, or the bank's. ``exact_lines``: the
    arm's threshold (0: the HNSW index for everyone)."""
    cfg = MemoryConfig().recall
    arm = search.statement(search.vector_sql("exchange", exact_lines=exact_lines), True)
    exact = search.statement(EXACT_SQL, True)
    found = {}
    with sessions() as session:
        for group, members in people.items():
            at10 = at_depth = 0.0
            arm_ms, exact_ms, n, by_index, by_own = [], [], 0, 0, 0
            for tenant in members:
                used = _index_used(session, arm, tenant, cfg)
                by_index, by_own = by_index + (used is not None), by_own + (used == "own")
                for query in queries_for(tenant, per_user):
                    qvec = (for_requests(embedder) if tenant.real else bank).embed(query)
                    search.prepare_vector_search(session, cfg)
                    params = {"user": tenant.user_id, "qvec": qvec}
                    started = time.perf_counter()
                    deep = list(session.scalars(arm, {**params, "limit": cfg.candidates}))
                    arm_ms.append((time.perf_counter() - started) * 1000)
                    top = list(session.scalars(arm, {**params, "limit": 10}))
                    started = time.perf_counter()
                    truth = list(session.scalars(exact, {**params, "limit": 10}))
                    exact_ms.append((time.perf_counter() - started) * 1000)
                    session.rollback()
                    if truth:
                        at10 += len(set(top) & set(truth)) / len(truth)
                        at_depth += len(set(deep) & set(truth)) / len(truth)
                        n += 1
            if n:
                found[group] = {"queries": n, "by_index": f"{by_index}/{len(members)} ({by_own} by their own)",
                                 "at10": at10 / n,
                                "at_depth": at_depth / n,
                                "arm_p50": np.median(arm_ms), "arm_p95": np.percentile(arm_ms, 95),
                                "exact_p50": np.median(exact_ms)}
    return found


def _index_used(session, arm, tenant: Tenant, cfg) -> str | None:  # type: ignore[no-untyped-def]
    """Which HNSW index the arm's plan for this person runs: "own" (``person_index``), "shared", or None (the
    planner preferred their own rows, sorted)."""
    search.prepare_vector_search(session, cfg)
    explain = search.statement("EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) " + str(arm.text), True)
    plan = session.scalars(explain, {"user": tenant.user_id, "qvec": np.ones(384, np.float32), "limit": 10}).all()
    session.rollback()
    ran = [line for line in plan if "never executed" not in line]
    if any(person_index.index_name(tenant.user_id) in line for line in ran):
        return "own"
    return "shared" if any("ix_exchanges_embedding" in line for line in ran) else None


def own_indexes(engine, sessions, how: str) -> None:  # type: ignore[no-untyped-def]
    """``--own-indexes``: build the wanted people's own indexes (as the backfill job does) or drop them all;
    then their sizes."""
    cfg = MemoryConfig().recall
    if how == "build":
        say(f"\nown indexes (services/memory/person_index.py), built (load {load_average()}):")
        for built in person_index.build_wanted(engine, cfg):
            say(f"  {built.user_id} ({built.vectors:,} vectors): {built.kind} index in {built.seconds:.1f} s, "
                f"{mib(built.size_bytes)}")
        say(f"  (load at the end {load_average()})")
    elif how == "drop":
        with engine.connect() as connection:
            dropped = person_index.drop_orphans(connection.execution_options(isolation_level="AUTOCOMMIT"),
                                                replace(cfg, own_index_vectors=0))
        say(f"\nown indexes dropped: {len(dropped)}")
    with sessions() as session:
        held = person_index.held(session)
    for kind in person_index.KINDS:
        sizes_ = [size for name, size in held.items() if name.startswith(kind.prefix)]
        say(f"own {kind.name} indexes: {len(sizes_)}, {mib(sum(sizes_))} in all")


def isolation(sessions, embedder, tenants: list[Tenant], count: int) -> tuple[int, int, int]:  # type: ignore[no-untyped-def]
    """(recalls, rows returned, rows of another person) over ``count`` recalls of random people."""
    rng, asked = random.Random(13), for_requests(embedder)
    pool = [q for t in rng.sample(tenants, min(60, len(tenants))) for q in queries_for(t, 5)]
    vectors_ = asked.embed_many(pool)
    config, returned, foreign = MemoryConfig(), 0, 0
    with sessions() as session:
        for index in range(count):
            tenant = rng.choice(tenants)
            q = rng.randrange(len(pool))
            hits = recall(session, embedder, tenant.user_id, pool[q], k=10, config=config, reinforce=False,
                          query_embedding=vectors_[q])
            ids = {i for hit in hits for i in hit.exchange_ids}
            ids |= {line["exchange_id"] for hit in hits for line in hit.lines if "exchange_id" in line}
            returned += len(ids)
            if ids:
                foreign += session.scalar(text("SELECT count(*) FROM exchanges WHERE id = ANY(:ids) "
                                               "AND user_id <> :user"), {"ids": list(ids), "user": tenant.user_id})
            session.rollback()
            if (index + 1) % 2000 == 0:
                say(f"  isolation: {index + 1}/{count} recalls, {foreign} foreign rows so far")
    return count, returned, foreign


def new_person(sessions, embedder) -> dict[str, float]:  # type: ignore[no-untyped-def]
    """Import a 10k-exchange person into the loaded database (``--no-enrich``, no vectors yet), search their words
    at once, then run the vector backfill and the vocabulary job with the real model, as the job runs them."""
    forget_user(sessions, None, NEW_USER.user_id)
    records = tenant_records(NEW_USER)
    started = time.monotonic()
    report = store_records(sessions, embedder, NEW_USER.user_id, records, batch_size=256, embed=False)
    stored_s = time.monotonic() - started
    word = max(re.findall(r"[A-Za-z]+", records[len(records) // 2].user_text), key=len)  # its longest word
    with sessions() as session:
        hits = recall(session, None, NEW_USER.user_id, word, k=10, reinforce=False)
        searchable = bool(hits)
    started = time.monotonic()
    filled = vectors.fill_all(sessions, embedder, loops=2)
    vectors_s = time.monotonic() - started
    started = time.monotonic()
    words = vocabulary.fill_all(sessions, embedder)
    return {"stored": report.stored, "stored_s": stored_s, "searchable": searchable, "word": word,
            "vectors": filled, "vectors_s": vectors_s, "words": words, "words_s": time.monotonic() - started}


def mib(value: float) -> str:
    return f"{value / 2**20:,.0f} MiB"


def print_build(stats: dict, reused: bool) -> None:  # type: ignore[type-arg]
    how = " (reused: figures from when it was built)" if reused else ""
    rest = stats["exchanges"] - stats["real_exchanges"]
    say(f"\nbuild{how}: {stats['people']} people, {stats['exchanges']:,.0f} exchanges in {stats['build_s']:.0f} s "
        f"(load at start {stats['load']}); import {stats['exchanges'] / stats['import_s']:.0f} exchanges/s "
        f"({stats['jobs']} people at once, vectors inline, the HNSW index built after in "
        f"{stats.get('index_s', 0):.0f} s; {stats['real_exchanges']:,.0f} embedded by the model "
        f"in {stats['real_s']:.0f} s, the rest {rest / (stats['import_s'] - stats['real_s']):.0f}/s); "
        f"their words {stats['words']:,.0f} in "
        f"{stats['words_s']:.0f} s; ANALYZE {stats['analyze_s']:.1f} s, VACUUM (ANALYZE) "
        f"{stats['vacuum_analyze_s']:.1f} s")
    say("sizes: " + ", ".join(f"{name} {mib(size)}" for name, size in stats["sizes"].items()))


def print_groups(tenants: list[Tenant]) -> None:
    for group in GROUPS:
        sizes_ = [t.size for t in tenants if t.group == group]
        if sizes_:
            say(f"  {group:<6} {len(sizes_):>5} people, {sum(sizes_):>9,} exchanges "
                f"({min(sizes_):,}–{max(sizes_):,} each)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=1000)
    parser.add_argument("--exchanges", type=int, default=1_000_000)
    parser.add_argument("--real-users", type=int, default=8, help="light people whose vectors are the real model's")
    parser.add_argument("--pgdata", help="the database's folder (default $ENGRAM_DATA_DIR/tenants-pg)")
    parser.add_argument("--reuse", action="store_true", help="measure the database --pgdata holds; build nothing")
    parser.add_argument("--jobs", type=int, default=2, help="people imported at once")
    parser.add_argument("--people", type=int, default=12, help="people sampled per group")
    parser.add_argument("--queries", type=int, default=15, help="queries per sampled person")
    parser.add_argument("--isolation", type=int, default=10_000, help="random recalls checked for foreign rows")
    parser.add_argument("--check-bank", action="store_true", help="compare the bank's vectors with the model's")
    parser.add_argument("--own-indexes", choices=("build", "drop"), help="before measuring: build the large people's "
                        "own indexes (as the backfill job does), or drop them all")
    parser.add_argument("--skip", default="", help="comma list of parts to skip: latency,quality,isolation,new")
    args = parser.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    folder = Path(args.pgdata or Settings.from_env().data_dir / "tenants-pg")
    built = folder / "bench-tenants.json"
    if args.reuse and not built.is_file():
        parser.error(f"--reuse: {folder} holds no database bench/tenants.py built")
    embedder = load_embedder("auto", cache_size=0)
    folder.mkdir(parents=True, exist_ok=True)
    server = EmbeddedPostgres(folder, port=free_port())
    server.start()
    try:
        engine = make_engine(server.url, pool_size=4)
        upgrade_head(engine)
        sessions = make_sessionmaker(engine)
        tenants = population(args.users, args.exchanges, args.real_users)
        bank = BankEmbedder.load(embedder, folder.parent / "tenants-bank.npz")
        if args.check_bank:
            say(check_bank(embedder, bank))
        if args.reuse:
            stats = json.loads(built.read_text())
            tenants = [Tenant(**t) for t in stats["tenants"]]
        else:
            say(f"building {args.users} people, ~{args.exchanges:,} exchanges in {folder} (load {load_average()})")
            stats = {"load": load_average(), "people": len(tenants)}
            bank_cache = folder.parent / "tenants-bank.npz"
            stats |= build(engine, sessions, server.url, embedder, bank_cache, tenants, args.jobs, say)
            stats |= maintenance(engine)
            with sessions() as session:
                stats["sizes"] = sizes(session)
            stats["tenants"] = [t.__dict__ for t in tenants]
            save_json(built, stats)
        print_build(stats, args.reuse)
        if args.reuse:
            with sessions() as session:
                say("sizes now: " + ", ".join(f"{name} {mib(size)}" for name, size in sizes(session).items()))
        print_groups(tenants)
        own_indexes(engine, sessions, args.own_indexes)
        measure(sessions, embedder, bank, tenants, args, skip, server)
        engine.dispose()
    finally:
        server.stop()


def measure(sessions, embedder, bank, tenants: list[Tenant], args: argparse.Namespace, skip: set[str],  # type: ignore[no-untyped-def]
            server: EmbeddedPostgres) -> None:
    people = sampled(tenants, args.people)
    if "latency" not in skip:
        say(f"\nrecall with the query embedding, k=10 (load {load_average()}):")
        for name, groups in latency(sessions, embedder, people, args.queries, server.pid).items():
            for group, (n, p50, p95, client, server) in groups.items():
                say(f"  {group:<6} {n:>4} recalls  p50 {p50:6.1f} ms  p95 {p95:6.1f} ms  CPU per recall client "
                    f"{client:5.1f} ms server {server:5.1f} ms  ({name} vector arm)")
        say(f"  (load at the end {load_average()})")
    if "quality" not in skip:
        real = {g: m for g, m in sampled(tenants, args.people, real=True).items() if m}
        configured = MemoryConfig().recall.exact_lines
        for exact_lines in (0, configured):
            how = f"exact up to {exact_lines:,} turns, else HNSW" if exact_lines else "HNSW for everyone"
            say(f"\nvector arm ({how}) vs exact per-person search (load {load_average()}):")
            for label, chosen in (("", people), (" real vectors", real)):
                for group, q in vector_quality(sessions, embedder, bank, chosen, args.queries, exact_lines).items():
                    say(f"  {group + label:<19} {q['queries']:>4} queries, {q['by_index']} people by HNSW, "
                        f"recall@10 {q['at10']:.3f} (LIMIT 10), "
                        f"{q['at_depth']:.3f} (LIMIT candidates)  arm p50 {q['arm_p50']:.1f} ms "
                        f"p95 {q['arm_p95']:.1f} ms  exact p50 {q['exact_p50']:.1f} ms")
    if "isolation" not in skip:
        say(f"\nisolation (load {load_average()}):")
        count, returned, foreign = isolation(sessions, embedder, tenants, args.isolation)
        say(f"  {count} recalls of random people: {returned:,} exchanges returned, {foreign} of another person")
    if "new" not in skip:
        say(f"\na new person of {NEW_USER.size:,} exchanges into the loaded database (load {load_average()}):")
        n = new_person(sessions, embedder)
        say(f"  stored {n['stored']:,} in {n['stored_s']:.1f} s = {n['stored'] / n['stored_s']:.0f} exchanges/s; "
            f"found by a word ({n['word']!r}) at once: {n['searchable']}; vectors {n['vectors']:,} in "
            f"{n['vectors_s']:.0f} s = {n['vectors'] / max(n['vectors_s'], 1e-9):.0f}/s; words {n['words']:,} in "
            f"{n['words_s']:.0f} s (load {load_average()})")


if __name__ == "__main__":
    main()
