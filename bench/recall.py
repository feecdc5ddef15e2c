"""Recall bench at scale: import throughput, recall quality by fusion method, recall latency and its profile.

Run from the repository root:
    python -m bench.recall [--n 100000] [--queries 200] [--pgdata DIR] [--profile] [--explain]

Starts a throwaway PostgreSQL (pgvector) under a temp dir (or ``--pgdata DIR``, kept between runs)
and imports N exchanges of synthetic chat (``bench/chatgen.py``: sessions on drifting topics,
varied turn lengths, Zipfian vocabulary, named speakers in a third of the sessions) plus the
conversation set of tests/data/memory_set.jsonl through the real import path (parse_lines →
pair_exchanges → store_records: batched real embeddings, --no-enrich), then:
  * quality: recall@5 / recall@10 of the set's questions (tests/data/memory_questions.jsonl)
    among the N distractors, for vector-only, full-text-only, RRF, min-max and absolute fusion,
    with and without neighbouring turns;
  * latency: p50 / p95 of recall() with the query embedding (recall embeds the query itself, as a
    caller without a vector does, the embedder caching nothing; its CPU and its backend's) and
    without it (then the same recall given the vector);
  * ``--profile``: the median and p95 of each part of the recall given the vector (each SQL
    statement by the function that sent it, the rest = Python; the embedding alone beside it),
    and statements per recall;
    ``--explain``: EXPLAIN (ANALYZE, BUFFERS) of every statement of one recall.
With ``--pgdata`` a database already holding the N exchanges is reused: the import line then
says so and repeats the rate measured when it was built (kept in DIR/bench-import.json);
``--no-import`` measures recall over whatever DIR holds, and says how many exchanges that is.

Rounds one to three (branches recalls, rspeed, rfast; 100k, A/B on the same database): with the embedding
p50 131–157 → 70–75 ms; CPU per recall, backend 32.5–41.7 → 22.2–23.6 ms, this process 35.2 → 24.3 ms;
statements 11.6 → 3.0. Changed: a trigger-kept turn count (migration 0010); a plan per statement
(``plan_cache_mode``: psycopg prepares on the fifth run and a generic BM25 plan cost 17–25 ms); turns around
the seeds by an id array; a time window's vector arm by exact distance (HNSW filtered by time took 30–220
ms); BM25 unnesting only a turn's query lexemes, scoring at most ``match_cap`` matches searched by the
rarest words; shared_buffers sized for the machine and ``synchronize_seqscans`` off (line_terms samples
"the first 2,000 turns"; a synchronised scan made the ranking drift); one opening statement, every arm
inside window_rows' statement, an exchange's texts sent once. Lost: two ONNX threads; pruning BM25 by a
per-turn bound. LoCoMo identical after each change.

Round four (branch rlat; paired at load 7–10: median −5 to −9 ms a query): GIN pending lists flushed (migration 0012:
gin_pending_list_limit 256 kB; unsorted turns made a lexeme's bitmap scan 10 ms), vectors ``STORAGE MAIN`` (a month's
window arm 11.7 → 4.5 ms; ``--rewrite`` moves rows stored before), the query embedded on a worker thread while _open
and line_terms run, rows from the driver's tuples. Not causes: JIT (none in the embedded server), work_mem. Idle (lead,
round five's merged tree): with the embedding and the expansion p50 56.1 / p95 80.6 ms. Hits identical throughout.

Round six (branch rlat3): line_terms in two steps while the model embeds (``asked_terms`` right after _open,
``expanded_terms`` = the vocabulary kNN once the vector is there), the asked words' sample counts materialised,
every statement's clause built once per distinct SQL (``search.statement``). Lead's idle runs of the merged tree
(282b226), load 0.2–1.1: with the embedding p50 57.1 / 58.4, p95 87.2 / 92.7 ms (without it p50 51 / 50, p95 73 /
71; window_rows p50 22–24 ms, Python 18). Checked, no gain: a visibility map (plain VACUUM), plain maps in gather.

rlat4 (issue 9; 282b226, load 2–4). window_rows ~21 ms wall (17–19 backend CPU), Python ~17. Changed: gather and
score_candidates over arrays (tests/test_recall_arrays.py): Python 17 → 9–12 ms; the exchange arms on a second pooled
connection (``sidearms.py``): backend 17–19 → 9–12 ms + ~4 on the other. Paired median −5.2 to −8.4 ms (embedding),
−4.5 to −12.4 (given); hits and LoCoMo identical. Lead's idle runs: p50 39.1 / 38.3, p95 66.4 / 61.3 ms (was 57 / 90).

rlat6 (issue 9; base e9b9a07; load 1.4–2.9). What makes the p95: the 75 of 200 queries of common words only (each
asked word in ≥ 1,000 turns: BM25 scored 1,000 matches of the rarest) 21.8–22.2 ms backend CPU against 15.9; a month's
window (11 queries) adds the window arm's exact distances. Not causes: GC (workers gc.freeze()), the embedding thread.
Changed (services/memory/lineterms.py, termcounts.py): the terms' sample read once per statement; the terms' counts
kept per person between recalls while their turns stay the same (versioned by their ``exchange_line_counts`` row's
lines and ``xmin``, checked in the statement's own snapshot; ≤ 60 s, 2,000 lexemes, 256 people a process;
tests/test_recall_termcounts.py); a candidate reads its exchange's columns once; ``common_match_cap`` (at 300,
paired: median −3.5 ms with the embedding, −1.9 given; 16 of 200 hit lists changed, top-10 overlap 0.982; rlat7).
Paired at 100k (``python -m bench.recall_pair``: both trees' processes on one PostgreSQL taking turns query by query,
200 pairs, gc-frozen; CPU a recall: that process / its backend):
  run                                   base p50 / p95     rlat6 p50 / p95    per query     CPU base → rlat6
  paired, with the embedding (load 1.7) 41.0 / 77.0        38.2 / 66.9        median −1.7   22.1 / 27.2 → 21.7 / 23.9
  paired, given the vector (load 1.7)   29.6 / 50.8        26.6 / 49.8        median −3.0   10.0 / 21.1 → 10.1 / 18.5
  again, with the embedding (0.7–1.4)   41.9 / 68.0        39.5 / 69.5        median −3.9   17.0 / 21.1 → 16.9 / 18.2
  again, given the vector (1.4–1.8)     39.5 / 71.8        32.4 / 61.8        median −5.1   13.1 / 25.9 → 12.0 / 20.4
  One run after the other moves more than the change (the paired medians and backend CPU are the figure); near idle
  (load 0.8, rlat6 alone, with the embedding): p50 32.1, p95 53.2 ms. Profile p50 (server CPU): the terms' statement
  7.3 → 4.2 ms (6.4 → 3.5), window_rows 12.1 → 9.5 (11.6 → 10.8). Hits of the 200 queries identical at 100k and 10k
  (a fixed clock); LoCoMo figure for figure (0.762 / 0.850 / 0.902). Checked, left: the BM25 arm never apart (load
  3.8: median −1.0 / −0.9 ms; the overlap needs a free core).

rlat7 (issue 9; the lead's 100k build copied; base 38d118c; load 2–5, others' benches). The common-word queries'
subset made a principled one (turns.py ``_matches_sql``, LineTerms.pair): the lines holding the query's two rarest
asked words first (a GIN AND, cheap), then the rest of the rarest word's matches, in all ``common_match_cap`` = 300
(was 1,000, the first stored: the oldest). Per common query, the BM25 arm's top ten against the uncapped arm's
(all of the rarest word's 1,000–5,000 matches scored, 57 common queries, arm alone):
  subset scored                      top-10 overlap  top-60 overlap  arm ms p50 / p95
  first 1,000 stored (base)          0.500           0.496           6.5–6.8 / 10–12
  first 300 stored (rlat6's cap)     0.177           0.163           2.7–3.0 / 5–6
  pair first, 300 (rlat7)            0.542           0.457           3.1–3.2 / 5.7–6.4
  pair first, 500 / 1,000            0.632 / 0.796   0.563 / 0.720   4.2–4.6 / 7.5–7.7; 7.4–7.5 / 11–15
  (lost, at 300: all asked words first 0.421; all, the pair, the rest 0.593 for +1 ms; any two first 0.137.)
End to end (200 queries, k 10, given the vector, a fixed clock): 24 of 200 hit lists change against base (first hit
in 3, top-10 overlap 0.979); against uncapped scoring base keeps 169 lists identical (overlap 0.977, first hit
differs in 2), rlat7 168 (0.975, 1); the set's recall@5/@10 identical for every method; LoCoMo: no word of a
conversation (≤ 680 turns) reaches df_cap, never common: identical figure for figure (0.762 / 0.850 / 0.902, each
category and conversation).
Then window_rows probes no lines before a seed that lies among another seed's lines after (they are that seed's, by
induction; 132 backward probes of 221 on a month's query): every hit of the 200 queries identical; LoCoMo too (final).
Paired (200 pairs; CPU a recall: process / backend): base → pair, with the embedding (load 2.4–3.4) median −1.6 / −2.0
ms, backend 23.3 → 20.6 / 25.2 → 22.9; given (2.5–2.9) −1.4 (23.8 → 22.6); pair → +probes, given (0.8–1.0) −1.8 (26.6
→ 24.5); base → both, with the embedding (1.0) −1.5 (p50 38.1 → 37.0, p95 68.7 → 69.7; 23.9 → 22.9), given (1.0–1.1)
−2.3 (35.2 → 33.1, 68.6 → 61.7; 25.1 → 22.5). One run each, alternating (load 0.9–1.3, with the embedding p50 / p95):
base 42.0 / 71.0 and 42.2 / 73.6, rlat7 31.4 / 56.9 and 38.2 / 69.2: p95 ≤ 50 not shown.
Per query (rlat7, best of 3, load 3–5): the 75 common-word queries' backend CPU 20.5 ms, the 15 with a time window 25.8
(their ~40 more exchanges' lines: ~980 rows in window_rows against ~650), the rest 17.2.
Checked, no gain: a month's window arm reads ~4,260 vectors (distances ~0.7 of its 2.6–5 ms); a time index INCLUDE
(embedding, id) made it index-only, no faster (1,073 buffers against 1,167): a stored bit(384) prefilter would be next.
The vocabulary kNN (3,583 words) was exact (1.7–3 ms) only as ef_search 100 priced HNSW above the scan; HNSW misses
real words ("landlord" 0.576, "map" 0.507): 15 of 200 expansions differ at ef 40, 9 at 100, 2 at 200 (pinned: rlat8).
Lead, after rlat7: the window arm's own limit at 20 instead of ``candidates`` (40): LoCoMo identical figure for figure;
paired at 100k (load 1.2) B − A median −2.1 ms, backend CPU 28.9 → 27.1 ms, p95 within the noise: not adopted (a
time-named question's candidates halved for ~2 ms). Idle runs of the merged tree (4497ee4, load ~1): with the
embedding p50 33.7 / 35.0 / 37.3, p95 56.9 / 60.0 / 65.7 ms; given the vector p50 25.6 / 26.9 / 30.4, p95 49.0 / 50.6 /
52.8 ms; the tree before this session (e9b9a07) that day: p95 64.4 / 76.2 ms with the embedding.

rlat8 (issue 9, PostgreSQL's side; base f51470b; the lead's 100k build copied, migrated to 0016, vacuumed; load 2–3).
window_rows' backend CPU (~11 ms a statement: its 200 captured statements re-run with a part removed, alternated):
lines around the seeds ~2.5 (~370 index probes for ~230 seeds, then ~1,000 lines by id), BM25 ~2.2 (per-line subquery
1.5–1.9, @@ 0.3), texts ~1.2, similarity ~0.9, joins ~0.8, sort ~0.6; planning 0.8–1.0 (all statements ~2 ms).
Changed (the 200 queries' hits identical after each, every field, fixed clock; LoCoMo 0.762 / 0.850 / 0.902, each row):
  * a line's position in its thread (migration 0016 ``thread_pos``: rank by (occurred_at, id), dense, kept by
    triggers on every store path, a thread's writers serialised by an advisory lock; tests/test_recall_positions.py):
    the seeds' ± reach ranges merged into spans, one index range read each, rows and all: window_rows 11.1 → 10.1 ms
    a statement (same rows). Cost: ~12 µs PostgreSQL CPU per stored line (3,000 lines by INSERT 140 → 177 ms against
    a trivial trigger); store_records of 3,000 exchanges 3.81 → 4.16 s (+9%, noisy); the upgrade ~17 s at 100k.
  * no exchange texts in window_rows (~550 exchanges' user_text and reply, TOASTed beside the vector): one statement
    fills the hits' (``turns.fill_exchange_texts``, a call-site line in recall): −1.3 ms a statement; paired against
    the tree before, backend CPU −1.1 to −2.5 ms a recall, median −0.7 to −2.0 ms. An exchange's own columns on its
    first line by lag() over the statement's own sort instead of a min(id) joined back: −0.35 ms.
  * the vocabulary kNN pinned exact (no index can order a subquery's distance): at 3,583 words HNSW at ef_search 100
    changed 14 of the 200 queries' nearest ten, at 200–800 none, at about the exact scan's cost; exact 2.59 → 2.44 ms.
  * JIT off in the search settings (on, no provider here; LLVM compiles over cost 100,000: the terms' 37,100 grows).
Paired, base → rlat8 (200 pairs; CPU a recall: process / backend):
  run                     A p50 / p95    B p50 / p95    B − A median, mean   CPU A → B
  embed (load 1.8–2.2)    41.0 / 80.1    38.0 / 61.6    −3.0, −5.2 ms        18.3 / 21.6 → 18.0 / 17.2
  given (2.2–2.4)         33.5 / 72.4    31.6 / 60.4    −3.2, −3.9           12.0 / 21.2 → 12.0 / 17.9
  embed (2.4–2.7)         43.8 / 77.5    38.8 / 69.7    −3.5, −4.8           19.8 / 22.9 → 20.0 / 18.8
  given (2.4–2.6)         36.2 / 65.3    31.7 / 58.2    −3.2, −4.7           12.9 / 22.6 → 12.5 / 18.5
rlat8 alone (load 1.3–1.9): with the embedding p50 33.5, p95 61.3 ms; given 24.9 / 46.6; backend CPU 18.1 ms a recall;
window_rows' 8.0 (base's profile that morning 12.1), fill_exchange_texts 0.3, 6.9 statements.
A chunked history (a memory_chunks row per exchange, 1 in 7 accessed; the bench has none): base's window_rows joins
lines to exchanges by a nested loop with a join filter (owners estimated at 10 rows; ~235,000 comparisons) in all 200
statements, 28–34 ms; rlat8's (lines estimated from the spans) hashes, 12–15 ms: by estimate, a plan to watch.
Checked, not adopted: BM25's join as an array lookup (−0.26 ms; sums an ulp apart: the reference adds in the order of
the planner's hash side, as do generic plans: −0.9 ms without the BM25 arm inside, rows an ulp apart in 12 of 119);
salience/access per exchange, ordering by position (no gain); inner product for a month's window arm or the vocabulary
(−0.2 ms). Not reached: p95 ≤ 50 ms with the embedding. Left: planning, BM25 per line (~2 ms each), a month's exact
distances (~4,200 vectors, 15 of 200 queries), the importer numbering its own lines.

Import at 100k (``--no-enrich``, realistic chat: median 34 words per exchange). The import no
longer embeds: ``store_records`` writes each batch of 256 exchanges with their turns, threads,
sessions and full-text data in one transaction without vectors (searchable by their words at
once), and the vector backfill (``services/memory/vectors.py``, run by the memory-chunker
workers; here ``fill_all`` to completion, a claim-embed-store loop per core, as the job runs it)
computes the same vectors afterwards. The import line prints the two rates apart. ``--embed-now``
imports as ``engram import --embed-now`` (inline, as before).

Measured (issue 9 import round, branch imp; 3,000 more exchanges per run into a copy of the 100k database,
old inline-embedding import and new back to back, load 9–14): stored 12–19/s old against 349–454/s new
(client CPU 23–25 ms against 0.6–0.8 ms per exchange), then the backfill's vectors at 14–15/s (~24 ms of model
CPU per exchange, as inline): issue 9's ≥ 300 exchanges/s with --no-enrich is met even at load 9–11; the time
until recall has every vector signal is about unchanged, but the import no longer waits for it and recall
works meanwhile (a row without a vector has no vector signal: BM25 and the other signals rank it).

rlat9 (issue 9, the process side; base f51470b, the lead's 100k build copied; load 1.1–2.5, others' benches). Where
the process's time went (py-spy, GIL held, with the embedding): window_rows' rows ~2.5 ms (230 kB of ~600–1,000 rows:
libpq and the driver's text parsing), score_candidates ~2.6 (a Python call per item and per candidate), the query
vector's text 0.5 (+0.25 the vocabulary's), SQLAlchemy ~0.15 a statement. Main-thread CPU per category: common-word
queries 11.0 ms, month windows 12.8, named speakers 12.6 (their two texts embedded as a batch: process CPU 25 against
18 for the rest), others 8.9: rows and candidates (485 → 722–910 rows). The recall waits ~4 ms for the embedding.
Changed (hits of the 200 queries identical, given the vector and not; LoCoMo identical):
  * scoring in services/memory/scoring.py over arrays per item (captured inputs: 1.79 → 1.09 ms a recall);
  * the query vector sent as 9-digit float32 text in one format (0.54 → 0.08 ms; same floats, a test), the
    stored vectors' 7-digit text likewise (0.25 → 0.05 ms, the same string);
  * window_rows' rows in binary (``services.db.BINARY_RESULTS``; fetch 2.1 → 1.45 ms) and without the exchanges'
    texts, thread and session (94 of 230 kB; replayed: client −0.3–0.6, backend −1–2 ms), read for the returned
    hits in one statement more (statements 6.0 → 6.7).
  bench.recall_pair turned who goes first at every query, and the queries alternate in kind (chat sentences, the
  set's questions): the side going second found the heavier ones cached. An A/A run of one tree: B − A median −1.5,
  mean −4.1 ms; turning every second query: +0.4 / −0.3. Final tree against base, both orders (load 1.8–2.7; CPU a
  recall: process / backend):
  run                 base p50 / p95   rlat9 p50 / p95   rlat9 − base median   CPU base → rlat9
  embed, A base       40.5 / 66.0      36.4 / 67.8       −2.4                  18.9 / 19.9 → 17.6 / 19.4
  embed, A rlat9      41.4 / 74.3      40.0 / 70.6       −1.6                  20.0 / 21.0 → 18.8 / 19.3
  given, A base       31.4 / 63.4      29.3 / 62.9       −2.2                  11.6 / 20.0 → 10.1 / 18.7
  given, A rlat9      36.7 / 73.2      34.2 / 66.5       −2.4                  13.5 / 22.5 → 11.8 / 21.1
  ``--profile``, one run each back to back (load ~2.3): with the embedding p50 / p95 47.2 / 85.1 → 37.4 / 64.1 ms,
  "python (rest)" 10.3 / 21.6 → 7.8 / 14.6, statements 6.0 → 6.7. p95 ≤ 50 ms with the embedding: not shown here.
Lost: ONNX on 2 intra-op threads without spinning (1 thread spins nothing): both orders −0.65 ms (embedding alone
p50 6.9 → 6.1 at load 2.5, none at 3.6; batch embedding −15%, or +105 MB RSS for a second session); with spinning
(ORT's default beyond one thread) process CPU 18 → 48 ms a recall. A named query's two texts on two threads (same
vectors): no gain on the 14 named queries at load 2. Exchange columns converted once per exchange: neutral.
rcold (issue 9: "with the embedding" p95 ~24 ms above "given"). Unlike figures: the first is each query's first run
after this bench started its server (~265 blocks a recall read from the kernel), unfrozen (a full GC ~70 ms about once
in 400 recalls), new words' counts to take (+2 ms backend CPU); "given" repeats it hot. Both hot: p50 +4–5, p95 +1.5–5
ms. A person's counts expired (60 s: a real user's next query) cost +6 ms backend CPU (terms 1.3 → 4.3, the expansion's
after the vector 2.6 → 5.4: it reads the sample again). Changed: the embedded server preloads pg_prewarm (its cached
blocks back ~1 s after a restart); this bench gc-frozen as workers. One run each, alternating (load 1.3–2.6), base →
rcold: p50 30.7/30.9/29.2/34.4 → 27.1/35.1/32.3/30.9, p95 58.9/56.3/51.4/61.3 → 43.3/59.9/52.2/48.0 ms; recall_pair
embed (one server) −0.1 ms median. Left: keep every count of the sample once read.
rdepth (issue 9; candidates / line_ / speaker_candidates / context_window; LoCoMo @5/@10/@20 mh tmp od sh adv; 100k:
the set's absolute recall@5/@10 at neighbours 0 | 1, rows / candidates a recall, paired B − A median ms embed | given):
  40 / 60 / 40 / 2 (base)  .762/.850/.902 .695 .933 .659 .956 .958  .393/.429 | .464/.536  601 / 293
  candidates 30 | 25 | 20  same | same | .849 @10, sh .955, conv-30 −.005 (lost); speaker_cand. 20 | 10 | 0: same
  line_cand. 50 | 40 | 30  @10 .849, mh .691 | .691 | .693 (lost); context_window 1: .747/.840/.890 (lost)
  30 / 60 / 20 / 2         same figure for figure  .429/.500 | .500/.536  521 / 251  −1.3 −1.8 −1.7 | −0.9
  25 / 60 / 10 / 2 (kept)  same figure for figure  .429/.500 | .500/.536  480 / 229  −3.2 −2.8 | −2.9 −3.0; backend
  CPU −1.6 to −2.6 ms, process −0.9 to −2.0; 114 of 200 hit lists move (first hit: 3). Caps: LoCoMo never reaches them.
rvocab (issue 9; base dae1063, rlat8's 100k copied; load 1.4–3.9). The expansion's exact kNN over 3,583 words (~3 ms
backend CPU) → a float32 product over the person's vectors kept in the process (``vocabmatrix.py``, by the word count
``_open`` reads; ≤ 16 people, 20,000 words each, 60,000 in all) picks the words within 1e-4 of the tenth; pgvector's
cosines for those by key. Hits and terms of the 200 queries identical; LoCoMo .762/.850/.902. Paired B − A median embed
−1.3/−1.5/−0.9 ms (backend CPU −2.6 to −2.7, process 0 to +1.6), given −1.0. Lost: ``@`` (OpenBLAS threads: +28 ms).
rpy (issue 9, the process; base 399ac7e; load 2.5–4.5, others' benches). Thread CPU a recall (embed): main 8.1–8.7 (the
vocabulary product 0.8, score_candidates 1.1, line_candidates 0.65, _select 0.8, _open 0.5, the rest the statements'
driver), the model's thread 6.3–6.8 (session.run 6.0 at p50; 4.0 in a loop: its int8 weights are folded to ~42 MB of
float32 at load and streamed per query; after 30 ms asleep 8.6, after reading 64 MB 6.8), the side arms' ~1.2. Changed
(hits of the 200 queries identical after each; LoCoMo .762/.850/.902, each category): sessions in UTC (timestamptz
loaded with timezone.utc, not zoneinfo's Etc/UTC: 1,000 values 0.46 → 0.17 ms, an age's subtraction 1.3 → 0.08 µs); the
side arms' ids handed over before their rollback (main's wait for them mean 3.3 → 1.2 ms, p95 13.5 → 6.7); a person's
kept vectors read in binary, decoded at once, brought up to date by their new words only, while the model embeds (every
recall right after 10 new words, 200 queries, load 2.5–3.9: p50 78.4/74.0 → 31.2/28.5, p95 138.9/117.9 → 53.1/53.7 ms,
process CPU 57.0/55.5 → 21.0/19.5; read afresh every time: p50 89.5/82.1 → 58.7/55.6). Paired (embed), base → rpy: load
3.4–3.9 median −0.4, mean −0.8, p95 61.2 → 57.0, process CPU 19.3 → 18.3 ms; rpy → base +0.5, +1.7, p95 56.7 → 67.3;
load ~2: −0.1, +0.1, p95 52.4 → 49.5; given (load ~1.9): −1.2, −1.4, CPU 10.1 → 9.3. Not taken: a raw cursor for the
statements (0.10 against 0.16 ms CPU each: ~0.4 a recall, the profile and tests watch SQLAlchemy's events), id lists as
text (a 60-id list 0.09 → 0.005 ms; ~10 arrays a recall, rsql's statements). Lost: the matrix touched while the model
embeds (product 0.83 → 0.79), float16 vectors (numpy's product 2–3 ms), pipelined BEGIN + settings (a loopback round
trip ~0.1 ms), 2 ONNX threads (same vectors, no gain at load 3), huge pages for ORT's buffers. GC (frozen): 0.04–0.09 ms
a recall. No bit-identical way found to stream fewer weight bytes: the embedding stays ~6 ms a query. One run each,
alternating (load 1.4–2.9, with the embedding p50 / p95): base 34.8 / 60.1 and 36.9 / 59.0, rpy 37.2 / 66.1 and 35.1 /
61.6 ms: with the vocabulary unchanged the bench's path moves within the noise; p95 ≤ 50 not shown on this box.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import json
import os
import random
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
from sqlalchemy import text

from bench.chatgen import TOPICS, ChatGen, chat_lines
from bench.recall_import import USER, fill_vocabulary, import_records, out_of_line, print_import, rewrite_vectors
from bench.recall_profile import OVERLAPPED, StatementTimer, explain, print_profile
from services.db import make_engine, make_sessionmaker
from services.embedded.lifecycle import free_port
from services.embedded.postgres import EmbeddedPostgres
from services.embeddings import load_embedder
from services.memory.config import MemoryConfig, RecallConfig
from services.memory.importer import pair_exchanges, parse_lines
from services.memory.recall import recall
from services.migrate import upgrade_head

DATA = Path(__file__).resolve().parents[1] / "tests" / "data"


METHODS = {
    "vector only": dict(fusion="absolute", lexical_weight=0.0, recency_weight=0, salience_weight=0,
                        time_match_weight=0, window_relevance=0),
    "full-text only (IDF)": dict(fusion="absolute", vector_weight=0.0, recency_weight=0, salience_weight=0,
                                 time_match_weight=0, window_relevance=0),
    "rrf": dict(fusion="rrf"),
    "minmax": dict(fusion="minmax"),
    "absolute (default)": dict(fusion="absolute"),
}


def quality(sessions, embedder, base: RecallConfig) -> None:  # type: ignore[no-untyped-def]
    questions = [json.loads(line) for line in (DATA / "memory_questions.jsonl").read_text().splitlines() if line]
    print(f"\nquality: {len(questions)} questions (tests/data/memory_questions.jsonl)")
    print(f"{'method':<24} {'neighbours':>10} {'recall@5':>9} {'recall@10':>10}")
    vectors = {q["question"]: embedder.embed(q["question"]) for q in questions}
    for name, changes in METHODS.items():
        for width in (0, 1):
            config = MemoryConfig(recall=replace(base, **changes, neighbours=width))
            scores = {5: 0, 10: 0}
            with sessions() as session:
                for item in questions:
                    now = dt.datetime.fromisoformat(item["now"].replace("Z", "+00:00"))
                    hits = recall(session, embedder, USER, item["question"], k=10, config=config, now=now,
                                  reinforce=False, kinds=("exchange",), query_embedding=vectors[item["question"]])
                    for k in scores:
                        if set(item["gold"]) & {e for hit in hits[:k] for e in hit.external_ids}:
                            scores[k] += 1
            print(f"{name:<24} {width:>10} {scores[5] / len(questions):>9.3f} {scores[10] / len(questions):>10.3f}")


def latency_queries(count: int) -> list[str]:
    """Half the set's questions, half chat-like sentences and questions on the distractors' topics."""
    questions = [json.loads(line)["question"] for line in (DATA / "memory_questions.jsonl").read_text().splitlines()
                 if line]
    rng, gen = random.Random(1), ChatGen(seed=7)
    return [rng.choice(questions) if i % 2 else gen.sentence(rng.choice(list(TOPICS))) for i in range(count)]


def latency(sessions, embedder, count: int, timer: StatementTimer | None, show_plans: bool) -> None:  # type: ignore[no-untyped-def]
    """Each query recalled twice: as a caller without a vector does (recall embeds it, overlapped with its
    first statements; the embedder caches nothing), timed with its CPU; then given its vector (profiled)."""
    queries = latency_queries(count)
    config = MemoryConfig()
    total_ms, recall_ms, embed_ms, parts = [], [], [], []
    client_cpu = server_cpu = 0.0
    with sessions() as session:
        for query in queries[:10]:  # warm-up
            recall(session, embedder, USER, query, config=config, reinforce=False)
        # Frozen as a worker freezes what it loaded (workers/startup.py): unfrozen, a full collection of the model's
        # objects (~70 ms) fell inside some recall, about once in 400 (rcold).
        gc.collect()
        gc.freeze()
        backend = session.scalar(text("SELECT pg_backend_pid()"))
        for query in queries:
            cpu_started = (time.process_time(), backend_cpu_s(backend))
            started = time.perf_counter()
            recall(session, embedder, USER, query, k=10, config=config, reinforce=False)
            total_ms.append((time.perf_counter() - started) * 1000)
            client_cpu += time.process_time() - cpu_started[0]
            server_cpu += backend_cpu_s(backend) - cpu_started[1]
            started = time.perf_counter()
            vector = embedder.embed(query)
            embedded = time.perf_counter()
            embed_ms.append((embedded - started) * 1000)
            if timer is not None:
                with timer.recording():
                    recall(session, embedder, USER, query, k=10, config=config, reinforce=False,
                           query_embedding=vector)
            else:
                recall(session, embedder, USER, query, k=10, config=config, reinforce=False, query_embedding=vector)
            recall_ms.append((time.perf_counter() - embedded) * 1000)
            if timer is not None:
                sql = dict(timer.current)
                inline = sum(ms for label, ms in sql.items() if not label.startswith(OVERLAPPED))
                parts.append({"embedding (query, alone)": embed_ms[-1], **sql,
                              "python (rest of recall)": recall_ms[-1] - inline})
        if show_plans and timer is not None:
            explain(session, timer.captured)
    p50, p95, p99 = np.percentile(total_ms, [50, 95, 99])
    r50, r95 = np.percentile(recall_ms, [50, 95])
    print(f"\nlatency over {count} queries, k=10, all kinds: with the query embedding p50 {p50:.1f} ms  "
          f"p95 {p95:.1f} ms  p99 {p99:.1f} ms; without it p50 {r50:.1f} ms  p95 {r95:.1f} ms  "
          f"(embedding alone p50 {np.median(embed_ms):.1f} ms)")
    # CPU time does not grow with the other processes' load the way wall time does: the A/B figure on a busy box.
    print(f"CPU per recall with the embedding: this process {client_cpu / count * 1000:.1f} ms (embedding, Python, "
          f"driver), its PostgreSQL backend {server_cpu / count * 1000:.1f} ms")
    if timer is not None:
        print_profile(parts, dict(timer.counts), count, dict(timer.server_cpu))


def backend_cpu_s(pid: int) -> float:
    """CPU seconds (user + system) a PostgreSQL backend on this machine has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000, help="synthetic exchanges to import")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--embedder", default="auto", choices=["auto", "sentence-transformers", "onnx"])
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--embed-now", action="store_true", help="import as `engram import --embed-now`")
    parser.add_argument("--pgdata", help="keep the database here between runs (a full one is reused as is)")
    parser.add_argument("--no-import", action="store_true", help="with --pgdata: recall over what it holds as is")
    parser.add_argument("--no-quality", action="store_true", help="skip the fusion-method comparison")
    parser.add_argument("--profile", action="store_true", help="time each part of a recall")
    parser.add_argument("--explain", action="store_true", help="EXPLAIN ANALYZE the statements of one recall")
    parser.add_argument("--rewrite", action="store_true",
                        help="VACUUM FULL exchanges and turns first (vectors stored before migration 0012 move in)")
    args = parser.parse_args()
    embedder = load_embedder(args.embedder, cache_size=0)
    with tempfile.TemporaryDirectory(prefix="engram-bench-") as tmp:
        folder = Path(args.pgdata or tmp)
        server = EmbeddedPostgres(folder, port=free_port())
        server.start()
        try:
            engine = make_engine(server.url, pool_size=2)
            upgrade_head(engine)
            sessions = make_sessionmaker(engine)
            lines, _, _ = parse_lines(chat_lines(args.n) + (DATA / "memory_set.jsonl").read_text().splitlines())
            records = pair_exchanges(lines)
            built = folder / "bench-import.json"
            with sessions() as session:
                have = session.scalar(text("SELECT count(*) FROM exchanges WHERE user_id = :u"), {"u": USER}) or 0
            if args.pgdata and args.no_import:
                print(f"import: skipped (--no-import); {folder} holds {have} exchanges of {USER}")
                fill_vocabulary(sessions, embedder)
            elif args.pgdata and have >= len(records) and built.is_file():
                print_import(json.loads(built.read_text()), embedder, args.batch_size,
                             reused=f" (reused {folder}, built earlier)")
            else:
                load = load_average()
                stats = {**import_records(sessions, embedder, records, args.batch_size, args.embed_now), "load": load}
                print_import(stats, embedder, args.batch_size)
                if args.pgdata:
                    built.write_text(json.dumps(stats))
                with sessions.begin() as session:
                    session.execute(text("ANALYZE"))
            if args.rewrite:
                rewrite_vectors(engine)
            out_of_line(sessions)
            print(f"load average before the recall runs: {load_average()}")
            if not args.no_quality:
                quality(sessions, embedder, RecallConfig())
            timer = StatementTimer(engine) if args.profile or args.explain else None
            latency(sessions, embedder, args.queries, timer, args.explain)
            print(f"load average at the end: {load_average()}")
            engine.dispose()
        finally:
            server.stop()


if __name__ == "__main__":
    main()
