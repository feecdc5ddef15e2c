"""The database of bench/tenants.py: many people's synthetic chat imported through the real path, and its costs.

Who: ``population`` draws the people's sizes (a few heavy users, most with 100–3,000 exchanges, log-uniform),
scaled so their sum is the exchanges asked for. What: each person's own ``bench/chatgen.py`` history (seeded by
their index), parsed, paired and stored by ``services.memory.importer.store_records`` with ``embed=True`` (as
``engram import --embed-now``), then the vocabulary job's ``vocabulary.fill_all``. For the load the exchanges' HNSW
index is dropped and built once afterwards (``build``): an operator's bulk load, not a live import's path.

Vectors: the MiniLM model embeds ~90–200 texts a second here, a million exchanges would take hours, so most people's
vectors come from ``BankEmbedder``: the mean of *real* MiniLM vectors of the text's words (every word chatgen
uses, embedded once; a coined name takes one of 1,024 real vectors of coined names by its hash), plus Gaussian noise
of norm ``NOISE`` (relative to the unit mean), normalised. Topic words pull a turn's vector towards its topic as the
model's would; the noise keeps near-identical turns apart. The first ``real_users`` light people are imported
first with the real model (their words too), so their vectors and the real model's query vectors are the real
thing: the quality check reads them apart.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import random
import re
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from sqlalchemy import Engine, text
from sqlalchemy.orm import Session, sessionmaker

from bench import chatgen
from bench.chatgen import chat_lines
from services.db import make_engine, make_sessionmaker
from services.embeddings import Embedder, normalise
from services.memory import vocabulary
from services.memory.importer import pair_exchanges, parse_lines, store_records

NOISE = 0.3  # norm of the Gaussian noise added to a text's unit centred mean word vector
# Measured on 1,200 turns (bench/tenants.py --check-bank): the model's vectors have mean pairwise cosine 0.20, a turn's
# nearest other 0.62, its 10th 0.50; these 0.26, 0.61, 0.52; a turn's bank vector to its real one: cosine ~0.46.
RARE_BUCKETS = 1024  # real vectors of coined names, shared by hash among every person's coined names
LIGHT_MAX, MEDIUM_MAX = 500, 10_000  # a person's class by exchanges: light ≤ 500 < medium ≤ 10,000 < heavy
WORD = re.compile(r"[a-z']+")  # of the lower-cased text
STOP = frozenset("i the a an and to of is was we you my it in on for at about with from that be have been or do how "
                 "did can could would should what this there by so me your yes not".split())


@dataclass(frozen=True)
class Tenant:
    user_id: str
    size: int  # exchanges asked for (the generator may give a few more: a session is not cut short)
    seed: int
    real: bool = False  # vectors from the real model

    @property
    def group(self) -> str:
        return "light" if self.size <= LIGHT_MAX else "medium" if self.size <= MEDIUM_MAX else "heavy"


def population(users: int, exchanges: int, real_users: int) -> list[Tenant]:
    """``users`` people whose sizes sum to about ``exchanges``: 0.3 % (at least one) heavy of 50–100k, the rest
    log-uniform in 100–3,000, all scaled by one factor to the total; the first ``real_users`` light ones and the
    smallest medium one real."""
    rng = random.Random(5)
    heavy = max(1, round(users * 0.003))
    sizes = [rng.uniform(50_000, 100_000) for _ in range(heavy)]
    sizes += [float(np.exp(rng.uniform(np.log(100), np.log(3000)))) for _ in range(users - heavy)]
    scale = exchanges / sum(sizes)
    rng.shuffle(sizes)
    tenants, real = [], 0
    counts = [max(20, round(size * scale)) for size in sizes]
    medium = [n for n in counts if LIGHT_MAX < n <= MEDIUM_MAX]
    for index, n in enumerate(counts):
        # The real model's vectors for the first light ones and the smallest medium one (embedding is slow here).
        is_real = (real < real_users and n <= LIGHT_MAX) or (bool(medium) and n == min(medium))
        real += is_real and n <= LIGHT_MAX
        tenants.append(Tenant(f"t{index:04d}", n, 1000 + index, is_real))
    # The real ones first: the vocabulary job fills by turn id, so it embeds their words before anyone else's.
    return sorted(tenants, key=lambda t: not t.real)


class BankEmbedder:
    """Vectors from real MiniLM word vectors plus noise (the module's docstring); ``embed_many`` as a model's."""

    def __init__(self, words: dict[str, np.ndarray], rare: np.ndarray, model_id: str, seed: int = 11) -> None:
        self.words, self.rare, self.model_id, self.dim = words, rare, model_id, rare.shape[1]
        self.rng = np.random.default_rng(seed)
        # Without the words' common direction a mean of many word vectors is near every other (pairwise cosine ~0.84
        # where the model's own vectors of the same turns are ~0.20 apart): centred, with the noise, ~0.26.
        self.centre = np.mean(list(words.values()), axis=0).astype(np.float32)

    @classmethod
    def cached(cls, cache: Path, model_id: str, seed: int = 11) -> BankEmbedder:
        """The bank ``load`` kept in ``cache`` (a worker process of the bulk build, without the model)."""
        data = np.load(cache)
        return cls(dict(zip(data["names"].tolist(), data["vectors"], strict=True)), data["rare"], model_id, seed)

    @classmethod
    def load(cls, real: Embedder, cache: Path) -> BankEmbedder:
        """Embed the generator's words with ``real`` once; kept in ``cache`` (an .npz) for the next run."""
        if cache.is_file():
            data = np.load(cache)
            return cls(dict(zip(data["names"].tolist(), data["vectors"], strict=True)), data["rare"], real.model_id)
        names = sorted({w.lower() for group in _word_lists() for w in group})
        rng = random.Random(3)
        coined = ["".join(rng.choice(chatgen.SYLLABLES) for _ in range(rng.randint(2, 3))).title()
                  for _ in range(RARE_BUCKETS)]
        vectors = np.asarray(real.embed_many(names), dtype=np.float32)
        rare = np.asarray(real.embed_many(coined), dtype=np.float32)
        np.savez(cache, names=np.array(names), vectors=vectors, rare=rare)
        return cls(dict(zip(names, vectors, strict=True)), rare, real.model_id)

    def _vector(self, text_: str) -> np.ndarray:
        found = [self._word(w) for w in WORD.findall(text_.lower()) if w not in STOP]
        mean = np.mean(found, axis=0) - self.centre if found else np.zeros(self.dim, np.float32)
        noise = self.rng.standard_normal(self.dim).astype(np.float32)
        mean /= np.linalg.norm(mean) or 1.0
        return normalise((mean + NOISE * noise / np.linalg.norm(noise))[None, :])[0]

    def _word(self, word: str) -> np.ndarray:
        row = self.words.get(word)
        return self._rare(word) if row is None else row

    def _rare(self, word: str) -> np.ndarray:
        return self.rare[int(hashlib.blake2b(word.lower().encode(), digest_size=4).hexdigest(), 16) % len(self.rare)]

    def embed(self, text_: str) -> np.ndarray:
        return self._vector(text_)

    def embed_many(self, texts: list[str], batch_size: int = 64) -> np.ndarray:
        return np.stack([self._vector(t) for t in texts]) if texts else np.zeros((0, self.dim), np.float32)


def _word_lists() -> list[list[str]]:
    lists = [words.split() for words in chatgen.TOPICS.values()]
    lists += [chatgen.ADVERBS, chatgen.ADJECTIVES, chatgen.GENERAL_NOUNS, chatgen.NAMES, chatgen.PLACES, chatgen.DAYS,
              chatgen.MONTHS, chatgen.VERBS, chatgen.VERBS2, chatgen.VERBING]
    lists.append([w for shape in chatgen.SHAPES for w in WORD.findall(re.sub(r"\{[^}]+\}", " ", shape).lower())])
    lists.append("today tomorrow next week this weekend on after work in the morning soon dollars".split())
    return lists


def tenant_records(tenant: Tenant) -> list:  # type: ignore[type-arg]
    """The person's history as the importer's records."""
    lines, _, _ = parse_lines(chat_lines(tenant.size, seed=tenant.seed))
    return pair_exchanges(lines)


def import_tenant(sessions: sessionmaker[Session], embedder: Embedder, tenant: Tenant) -> tuple[int, float]:
    """Store one person's history with its vectors (``--embed-now``); (exchanges stored, seconds storing)."""
    records = tenant_records(tenant)
    started = time.monotonic()
    report = store_records(sessions, embedder, tenant.user_id, records, batch_size=256, embed=True,
                           embed_threads=1)
    return report.stored, time.monotonic() - started


VECTOR_INDEX = "ix_exchanges_embedding"
_WORKER: dict[str, object] = {}  # a bulk build's worker process: its sessionmaker and bank


def _worker_start(url: str, cache: str, model_id: str) -> None:
    _WORKER["sessions"] = make_sessionmaker(make_engine(url, pool_size=1))
    _WORKER["bank"] = BankEmbedder.cached(Path(cache), model_id, seed=os.getpid())


def _worker_import(tenant: Tenant) -> tuple[int, float]:
    return import_tenant(_WORKER["sessions"], _WORKER["bank"], tenant)  # type: ignore[arg-type]


def build(engine: Engine, sessions: sessionmaker[Session], url: str, real: Embedder, cache: Path,
               tenants: list[Tenant], jobs: int, log: callable) -> dict[str, float]:  # type: ignore[valid-type]
    """Import every person through ``store_records`` (vectors inline, ``--embed-now``) but with the exchanges'
    HNSW index dropped for the load and built once after it (inserting into the graph row by row was most of
    the inline import's time: 90 exchanges/s at 150k), ``jobs`` worker processes (not threads: chatgen and the
    bank's vectors are Python), then the vocabulary job in batches of 20,000 turns."""
    started = time.monotonic()
    with engine.begin() as connection:
        index_sql = connection.scalar(text("SELECT indexdef FROM pg_indexes WHERE indexname = :n"),
                                      {"n": VECTOR_INDEX})
        connection.execute(text(f"DROP INDEX IF EXISTS {VECTOR_INDEX}"))
    if index_sql is None:  # a resumed build: dropped before, never rebuilt
        index_sql = f"CREATE INDEX {VECTOR_INDEX} ON exchanges USING hnsw (embedding vector_cosine_ops)"
    stored = store_s = 0.0
    reals = [t for t in tenants if t.real]
    for tenant in reals:
        n, s = import_tenant(sessions, real, tenant)
        stored, store_s = stored + n, store_s + s
    real_exchanges, real_s = stored, time.monotonic() - started
    log(f"  real model: {len(reals)} people, {stored:.0f} exchanges in {real_s:.0f} s")
    words_started, words = time.monotonic(), 0
    with sessions() as session:
        resumed = session.scalar(text("SELECT EXISTS (SELECT 1 FROM exchanges WHERE NOT user_id = ANY(:reals))"),
                                 {"reals": [t.user_id for t in reals]})
    # A resumed build: the real people's words went in the first time, and the model would now embed the words of
    # every person stored since (hours); theirs come from the bank after the index, as in a first build.
    if not resumed:
        words = vocabulary.fill_all(sessions, real)
    words_s = time.monotonic() - words_started
    rest = [t for t in tenants if not t.real]
    done = 0
    # Heavy people last: a build cut short (a busy box) still holds a fair spread of light and medium people.
    rest.sort(key=lambda t: t.group == "heavy")
    with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn"),
                             initializer=_worker_start, initargs=(url, str(cache), real.model_id)) as pool:
        for n, s in pool.map(_worker_import, rest):
            stored, store_s, done = stored + n, store_s + s, done + 1
            if done % max(1, len(rest) // 40) == 0:
                elapsed = time.monotonic() - started
                log(f"  {done}/{len(rest)} people, {stored:.0f} exchanges, {elapsed:.0f} s, "
                    f"{stored / elapsed:.0f} exchanges/s overall")
    import_s = time.monotonic() - started - words_s
    index_started = time.monotonic()
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        # One parallel worker beside the leader (2 cores); the graph of a million 384-d vectors (~2 GB) in memory.
        connection.execute(text("SET maintenance_work_mem = '2500MB'"))
        connection.execute(text("SET max_parallel_maintenance_workers = 1"))
        connection.execute(text(index_sql))
    index_s = time.monotonic() - index_started
    log(f"  {VECTOR_INDEX} built in {index_s:.0f} s")
    words_started = time.monotonic()
    words += vocabulary.fill_all(sessions, BankEmbedder.cached(cache, real.model_id), lines=20_000)
    words_s += time.monotonic() - words_started
    log(f"  words {words} in {words_s:.0f} s")
    return {"exchanges": stored, "import_s": import_s, "real_exchanges": real_exchanges, "real_s": real_s,
            "store_thread_s": store_s, "jobs": jobs, "words": words, "index_s": index_s,
            "words_s": words_s, "build_s": time.monotonic() - started}


def maintenance(engine: Engine) -> dict[str, float]:
    """Seconds of ``ANALYZE`` and of ``VACUUM (ANALYZE)`` over the whole database, as an operator runs them."""
    costs = {}
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        for name, sql in (("analyze_s", "ANALYZE"), ("vacuum_analyze_s", "VACUUM (ANALYZE)")):
            started = time.monotonic()
            connection.execute(text(sql))
            costs[name] = time.monotonic() - started
    return costs


SIZED = ("exchanges", "exchange_lines", "vocabulary", "ix_exchanges_embedding", "ix_exchange_lines_search",
         "ix_vocabulary_embedding", "ix_exchanges_user_id", "ix_exchange_lines_thread_time", "vocabulary_pkey")


def sizes(session: Session) -> dict[str, int]:
    """Bytes of the database and of the tables and indexes recall reads (a table's with its TOAST)."""
    found = {"database": int(session.scalar(text("SELECT pg_database_size(current_database())")))}
    for name in SIZED:
        size = session.scalar(text("SELECT CASE WHEN to_regclass(:n) IS NULL THEN NULL ELSE "
                                   "pg_table_size(CAST(:n AS regclass)) END"), {"n": name})
        if size is not None:
            found[name] = int(size)
    return found


def check_bank(real: Embedder, bank: BankEmbedder, count: int = 1200) -> str:
    """How the bank's vectors of ``count`` turns compare with the real model's of the same turns."""
    records = tenant_records(Tenant("check", count, 4242))[:count]
    texts = [f"{r.user_text}\n{r.reply}".strip() for r in records]
    real_v, bank_v = np.asarray(real.embed_many(texts)), bank.embed_many(texts)

    def spread(m: np.ndarray) -> str:
        sims = m @ m.T
        np.fill_diagonal(sims, -1.0)
        top = np.sort(sims, axis=1)[:, ::-1]
        return (f"mean pairwise cosine {sims[sims > -1].mean():.3f}, nearest other {top[:, 0].mean():.3f}, "
                f"10th {top[:, 9].mean():.3f}")
    return (f"{len(texts)} turns: real model {spread(real_v)}; bank {spread(bank_v)}; a turn's bank vector to its real "
            f"one {np.mean(np.sum(real_v * bank_v, axis=1)):.3f}")


def save(path: Path, data: dict) -> None:  # type: ignore[type-arg]
    path.write_text(json.dumps(data, indent=1, default=str))
