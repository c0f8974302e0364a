"""Where toolbed keeps what it builds: installed apps, run state, caches.

Everything lives under one folder, ``$TOOLBED_HOME`` (default
``$XDG_CACHE_HOME/toolbed``, else ``~/.cache/toolbed``), so that deleting it resets
toolbed and nothing it builds ever lands in the repository.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["home_dir"]


def home_dir() -> Path:
    """The root of everything toolbed builds (created on first use)."""
    explicit = os.environ.get("TOOLBED_HOME")
    if explicit:
        root = Path(explicit)
    else:
        cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        root = Path(cache) / "toolbed"
    root.mkdir(parents=True, exist_ok=True)
    return root
