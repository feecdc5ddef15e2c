"""The local model's install check: parts found without importing them, assembled, and refused unless pinned."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from services.llm.model_files import (
    MODELS,
    LocalModel,
    ModelFileError,
    ModelPart,
    assemble,
    installed,
    verified_model,
)
from services.settings import LOCAL_MODELS, Settings, SettingsError

PIECES = (b"GGUF first piece of the model " * 40, b"second piece " * 50, b"the tail")


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def fake_parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[LocalModel, Path]:
    """A three-part model whose parts are 'installed' packages on sys.path, like pip puts them."""
    site = tmp_path / "site"
    parts = []
    for number, piece in enumerate(PIECES, start=1):
        package = site / f"fakemodel_part{number}"
        (package / "data").mkdir(parents=True)
        # Importing a part would run this: the check must find the bytes without it.
        (package / "__init__.py").write_text("raise RuntimeError('a model part was imported')\n")
        (package / "data" / f"part{number:02d}.bin").write_bytes(piece)
        parts.append(ModelPart(f"fakemodel_part{number}", f"data/part{number:02d}.bin",
                               f"fakemodel-part{number}==1.0", len(piece), _sha(piece)))
    monkeypatch.syspath_prepend(str(site))
    whole = b"".join(PIECES)
    model = LocalModel(name="fake", label="Fake model", file_name="fake.gguf", size=len(whole), sha256=_sha(whole),
                       parts=tuple(parts), n_threads=1, n_ctx=512)
    return model, site


def test_the_parts_are_assembled_into_the_pinned_file(fake_parts: tuple[LocalModel, Path], tmp_path: Path) -> None:
    model, _ = fake_parts
    files = tmp_path / "models"
    lines: list[str] = []
    path = verified_model(model, files, say=lines.append)
    assert path == files / "fake.gguf"
    assert path.read_bytes() == b"".join(PIECES)
    assert any("assembling Fake model from 3 parts" in line for line in lines)
    assert [p.name for p in files.iterdir() if p.name.endswith(".partial")] == []


def test_a_missing_part_is_named(fake_parts: tuple[LocalModel, Path], tmp_path: Path) -> None:
    model, site = fake_parts
    (site / "fakemodel_part2" / "data" / "part02.bin").unlink()
    assert not installed(model, tmp_path / "models")
    with pytest.raises(ModelFileError, match=r"part 2 of 3 is missing \(package fakemodel-part2==1.0"):
        verified_model(model, tmp_path / "models")
    assert not (tmp_path / "models" / "fake.gguf").exists()


def test_a_part_of_the_wrong_size_is_named(fake_parts: tuple[LocalModel, Path], tmp_path: Path) -> None:
    model, site = fake_parts
    (site / "fakemodel_part3" / "data" / "part03.bin").write_bytes(b"the tail, longer")
    with pytest.raises(ModelFileError, match=r"part 3 of 3 .* is 16 bytes, expected 8"):
        verified_model(model, tmp_path / "models")


def test_a_part_with_other_bytes_is_refused_and_nothing_is_left(fake_parts: tuple[LocalModel, Path],
                                                                tmp_path: Path) -> None:
    model, site = fake_parts
    (site / "fakemodel_part1" / "data" / "part01.bin").write_bytes(PIECES[0].replace(b"GGUF", b"EVIL"))
    with pytest.raises(ModelFileError, match=r"part 1 of 3 .* does not hold the pinned bytes"):
        assemble(model, tmp_path / "models")
    assert list((tmp_path / "models").iterdir()) == []  # no half-written or wrong model under any name


def test_a_model_file_with_the_wrong_hash_is_refused(fake_parts: tuple[LocalModel, Path], tmp_path: Path) -> None:
    model, _ = fake_parts
    files = tmp_path / "models"
    path = verified_model(model, files)
    data = bytearray(path.read_bytes())
    data[5] ^= 1  # same size, one bit changed
    path.write_bytes(bytes(data))
    with pytest.raises(ModelFileError, match=rf"refusing {path}: its sha256 is {_sha(bytes(data))}, not the pinned"):
        verified_model(model, files)


def test_a_truncated_model_file_is_refused_by_its_size(fake_parts: tuple[LocalModel, Path], tmp_path: Path) -> None:
    model, _ = fake_parts
    path = verified_model(model, tmp_path / "models")
    path.write_bytes(path.read_bytes()[:100])
    with pytest.raises(ModelFileError, match=r"100 bytes, but Fake model is"):
        verified_model(model, tmp_path / "models")


def test_a_verified_file_is_not_hashed_again_until_it_changes(fake_parts: tuple[LocalModel, Path], tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    model, _ = fake_parts
    files = tmp_path / "models"
    path = verified_model(model, files)
    hashed: list[Path] = []
    import services.llm.model_files as model_files

    real = model_files._sha256
    monkeypatch.setattr(model_files, "_sha256", lambda p: hashed.append(p) or real(p))
    verified_model(model, files)
    assert hashed == []  # size and mtime match the record: trusted without reading 491 MB
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 1_000_000_000))
    verified_model(model, files)
    assert hashed == [path]


def test_engram_run_refuses_a_model_file_that_is_not_the_pinned_one(tmp_path: Path) -> None:
    """The real entry point: exit 2 and a message naming the file and the pinned hash, nothing started."""
    files = tmp_path / "models"
    files.mkdir()
    model = MODELS["qwen2.5-0.5b"]
    with (files / model.file_name).open("wb") as handle:  # the right size, other bytes (sparse: no 491 MB written)
        handle.truncate(model.size)
    env = {**os.environ, "ENGRAM_MODEL_FILES_DIR": str(files), "ENGRAM_DATA_DIR": str(tmp_path / "data"),
           "ENGRAM_LOCAL_MODEL": "qwen2.5-0.5b"}
    env.pop("OPENAI_BASE_URL", None)
    done = subprocess.run([sys.executable, "consumer.py", "run"], env=env, capture_output=True, text=True,
                          timeout=120, check=False)
    if "no LLM available" in done.stderr:
        pytest.skip("llama-cpp-python is not installed")
    assert done.returncode == 2, done.stderr
    assert f"refusing {files / model.file_name}: its sha256 is" in done.stderr
    assert model.sha256 in done.stderr
    assert not (tmp_path / "data" / "pg").exists()  # refused before any server started


def test_the_local_model_setting_is_checked() -> None:
    assert set(LOCAL_MODELS) == set(MODELS)
    assert Settings.from_env({}).local_model == "qwen2.5-1.5b"
    assert Settings.from_env({"ENGRAM_LOCAL_MODEL": "SmolLM2"}).local_model == "smollm2"
    assert Settings.from_env({"ENGRAM_LOCAL_MODEL": "qwen2.5-1.5b"}).local_model == "qwen2.5-1.5b"
    with pytest.raises(SettingsError, match="ENGRAM_LOCAL_MODEL must be one of qwen2.5-1.5b, qwen2.5-0.5b, smollm2"):
        Settings.from_env({"ENGRAM_LOCAL_MODEL": "gpt-5"})


def test_model_files_live_in_one_folder_shared_by_every_data_dir(tmp_path: Path) -> None:
    assert Settings.from_env({"XDG_CACHE_HOME": str(tmp_path)}).model_files_dir == tmp_path / "engram" / "models"
    chosen = Settings.from_env({"ENGRAM_MODEL_FILES_DIR": str(tmp_path / "m"), "ENGRAM_DATA_DIR": str(tmp_path / "d")})
    assert chosen.model_files_dir == tmp_path / "m"


@pytest.mark.slow
@pytest.mark.skipif(not installed(MODELS[LOCAL_MODELS[0]], Settings.from_env().model_files_dir),
                    reason="the default model's packages are not installed (make install-local)")
def test_the_installed_default_model_is_the_pinned_file() -> None:
    model = MODELS[LOCAL_MODELS[0]]
    path = verified_model(model, Settings.from_env().model_files_dir)
    assert path.stat().st_size == model.size == 1_117_320_768
    with path.open("rb") as handle:
        assert handle.read(4) == b"GGUF"
