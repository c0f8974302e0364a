"""The parsed catalog, kept between commands and keyed by what it was parsed from.

Parsing and validating the catalog's YAML takes most of a second, on every command;
unpickling the validated apps takes a tenth of that. The cache holds one entry,
``$TOOLBED_HOME/cache/catalog.pickle``: the key and the apps. The key is a SHA-256
over every catalog file's name and bytes, the source of the modules that decide what
a file parses to (``_schema.py``, ``_loader.py``, this one), and the Python and
pydantic versions, so any edit to a file or to the schema misses the cache. A cache
that is missing, stale, unreadable or corrupt is simply parsed again and rewritten;
it can make a load faster, never different.

The file is a pickle: it lives in the user's own toolbed folder, which only the user
writes, like the apps and journals beside it.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import pydantic

from toolbed.paths import home_dir

from ._schema import App

__all__ = ["cache_path", "cached_apps", "catalog_key"]

_SOURCES = ("_schema.py", "_loader.py", "_cache.py")
"""The modules whose code decides what a catalog file parses to."""


def cache_path() -> Path:
    return home_dir() / "cache" / "catalog.pickle"


def catalog_key(files: Sequence[Path]) -> str:
    """The SHA-256 that names one parse of ``files`` by this code."""
    digest = hashlib.sha256(f"{sys.version}|pydantic {pydantic.VERSION}".encode())
    here = Path(__file__).resolve().parent
    for path in [*(here / name for name in _SOURCES), *files]:
        data = path.read_bytes()
        digest.update(f"\0{path.name}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()


def cached_apps(files: Sequence[Path], parse: Callable[[Sequence[Path]], list[App]]
                ) -> list[App]:
    """The apps of ``files``: from the cache when it holds this exact parse, else
    ``parse(files)``, which is then cached (when the folder can be written)."""
    try:
        key, path = catalog_key(files), cache_path()
    except OSError:
        return parse(files)           # an unreadable file (parse() names it), no home
    try:
        with open(path, "rb") as fh:
            stored_key, apps = pickle.load(fh)
        if stored_key == key and isinstance(apps, list) and all(
                isinstance(a, App) for a in apps):
            return apps
    except Exception:                  # missing, truncated, foreign: parse again
        pass
    apps = parse(files)
    _write(path, (key, apps))
    return apps


def _write(path: Path, value: object) -> None:
    """Write atomically: a reader sees the old file or the new one, never half of one."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".catalog-")
        try:
            with os.fdopen(fd, "wb") as fh:
                pickle.dump(value, fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        pass                           # a read-only home: no cache, same catalog
