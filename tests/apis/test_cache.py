"""The catalog cache: an unchanged catalog loads from it, anything else is parsed again."""

from __future__ import annotations

import pickle
import shutil

import pytest

from toolbed.apis import CATALOG_DIR, load_app, load_catalog
from toolbed.apis._cache import cache_path, cached_apps


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("TOOLBED_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


@pytest.fixture
def files(tmp_path):
    folder = tmp_path / "catalog"
    folder.mkdir()
    for name in ("kinto", "buku"):
        shutil.copy(CATALOG_DIR / "selfhosted" / f"{name}.yaml", folder)
    return sorted(folder.glob("*.yaml"))


class Parser:
    """``load_app`` over each file, counting the parses."""

    def __init__(self):
        self.parses = 0

    def __call__(self, files):
        self.parses += 1
        return [load_app(f) for f in files]


def test_an_unchanged_catalog_is_parsed_once(home, files):
    parse = Parser()
    first, second = cached_apps(files, parse), cached_apps(files, parse)
    assert parse.parses == 1 and first == second
    assert cache_path().is_file() and cache_path().is_relative_to(home)


def test_an_edited_file_is_parsed_again(home, files):
    parse = Parser()
    cached_apps(files, parse)
    kinto = next(f for f in files if f.stem == "kinto")
    kinto.write_text(kinto.read_text().replace("\nname: Kinto\n", "\nname: Kinto (edited)\n"))
    apps = cached_apps(files, parse)
    assert parse.parses == 2
    assert apps == [load_app(f) for f in files]
    assert "Kinto (edited)" in [a.name for a in apps]


@pytest.mark.parametrize("damage", [
    b"", b"not a pickle", b"\x80\x05\x95",                         # empty, foreign, cut short
    pickle.dumps(("a key from another catalog", [])),               # stale
    pickle.dumps(("", "not a list of apps")),                       # wrong shape
])
def test_a_missing_stale_or_corrupt_cache_is_parsed_and_rewritten(home, files, damage):
    path = cache_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(damage)
    parse = Parser()
    assert cached_apps(files, parse) == [load_app(f) for f in files]
    assert parse.parses == 1 and path.read_bytes() != damage
    assert cached_apps(files, parse) and parse.parses == 1       # rewritten: a hit now


def test_a_home_that_cannot_be_written_still_loads(tmp_path, monkeypatch, files):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("TOOLBED_HOME", str(blocker / "home"))      # cannot be created
    parse = Parser()
    assert cached_apps(files, parse) == cached_apps(files, parse) and parse.parses == 2


def test_the_shipped_catalog_from_the_cache_equals_a_fresh_parse(home):
    cold, warm = load_catalog(), load_catalog()        # the first writes, the second reads
    fresh = load_catalog(CATALOG_DIR)                  # a folder given: never cached
    assert cache_path().is_file()
    assert list(warm.apps.values()) == list(fresh.apps.values()) == list(cold.apps.values())
    assert list(warm.apis) == list(fresh.apis)
