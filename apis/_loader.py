"""Load the catalog: every ``*.yaml`` under apis/ becomes an App, every API gets its id.

Errors name the file, the API and the field, e.g.::

    apis/selfhosted/kinto.yaml: API 'create_record', field http.method:
    unknown HTTP method 'PUTT'; use one of [...]
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from toolbed.errors import CatalogError, UnknownApiError

from ._cache import cached_apps
from ._schema import Api, App

__all__ = ["CATALOG_DIR", "Catalog", "load_app", "load_catalog"]

CATALOG_DIR = Path(__file__).resolve().parent
"""Where the shipped catalog lives: ``hosted/<domain>/<app>.yaml``, ``selfhosted/<app>.yaml``
and ``mcp/<app>.yaml``."""

# libyaml's parser when PyYAML was built with it: the catalog loads several times faster
_SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class Catalog:
    """All apps and APIs, looked up by id (``kinto.create_record``) or filtered."""

    def __init__(self, apps: Iterable[App]):
        self.apps: dict[str, App] = {}
        self.apis: dict[str, Api] = {}
        for app in apps:
            if app.app in self.apps:
                raise CatalogError(f"app id {app.app!r} is defined twice; app ids must be unique")
            self.apps[app.app] = app
            for api in app.apis:
                self.apis[api.id] = api

    def __len__(self) -> int:
        return len(self.apis)

    def __iter__(self) -> Iterator[Api]:
        return iter(self.apis.values())

    def api(self, api_id: str) -> Api:
        """The API with this id, or an error that suggests the closest ids."""
        try:
            return self.apis[api_id]
        except KeyError:
            close = difflib.get_close_matches(api_id, self.apis, n=3, cutoff=0.5)
            hint = f" Did you mean {', '.join(close)}?" if close else ""
            raise UnknownApiError(
                f"unknown API {api_id!r}.{hint} `toolbed apis list` shows every API id."
            ) from None

    def app(self, name: str) -> App:
        """The app with this id, or an error listing the valid ones."""
        try:
            return self.apps[name]
        except KeyError:
            raise UnknownApiError(
                f"unknown app {name!r}; the catalog has: {', '.join(sorted(self.apps))}"
            ) from None

    def app_of(self, api: Api) -> App:
        return self.apps[api.app]

    def filter(
        self, app: str | None = None, domain: str | None = None, tier: str | None = None
    ) -> list[Api]:
        """APIs matching every given filter, in catalog order."""
        out = []
        for api in self.apis.values():
            owner = self.apps[api.app]
            if app and owner.app != app:
                continue
            if domain and owner.domain != domain:
                continue
            if tier and owner.tier != tier:
                continue
            out.append(api)
        return out


def load_app(path: str | Path) -> App:
    """Parse and validate one catalog file."""
    path = Path(path)
    shown = _shown(path)
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_SafeLoader)
    except OSError as exc:
        raise CatalogError(f"{shown}: cannot read catalog file ({exc.strerror})") from None
    except UnicodeDecodeError as exc:
        raise CatalogError(f"{shown}: not UTF-8 text (byte {exc.start}); save the file as "
                           "UTF-8") from None
    except yaml.YAMLError as exc:
        where = ""
        mark = getattr(exc, "problem_mark", None)
        if mark is not None:
            where = f" at line {mark.line + 1}, column {mark.column + 1}"
        problem = getattr(exc, "problem", None) or str(exc)
        raise CatalogError(f"{shown}: malformed YAML{where}: {problem}") from None
    if not isinstance(data, dict):
        raise CatalogError(f"{shown}: expected a mapping with app, name, ..., apis at the top")
    try:
        app = App.model_validate(data)
    except ValidationError as exc:
        raise CatalogError(_describe(shown, data, exc)) from None
    expected = path.stem
    if app.app != expected:
        raise CatalogError(f"{shown}: app id {app.app!r} must match the file name ({expected!r})")
    return app


def load_catalog(*roots: str | Path) -> Catalog:
    """Load every ``*.yaml`` under the given folders (default: the shipped catalog,
    through the cache of its last parse: ``_cache.py``)."""
    if not roots:
        return Catalog(cached_apps(sorted(CATALOG_DIR.rglob("*.yaml")), _parse))
    folders = [Path(r) for r in roots]
    files: list[Path] = []
    for folder in folders:
        if folder.is_file():
            files.append(folder)
        elif folder.is_dir():
            files.extend(sorted(folder.rglob("*.yaml")))
        else:
            raise CatalogError(f"{folder}: no such catalog file or folder")
    return Catalog(_parse(files))


def _parse(files: Sequence[Path]) -> list[App]:
    return [load_app(f) for f in files]


def _shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(CATALOG_DIR.parent))
    except ValueError:
        return str(path)


def _describe(shown: str, data: dict[str, Any], exc: ValidationError) -> str:
    lines = []
    for err in exc.errors():
        loc = list(err["loc"])
        where = ""
        if len(loc) >= 2 and loc[0] == "apis" and isinstance(loc[1], int):
            apis = data.get("apis") or []
            name = apis[loc[1]].get("name") if loc[1] < len(apis) and isinstance(
                apis[loc[1]], dict) else None
            where = f"API {name!r}" if name else f"apis[{loc[1]}]"
            loc = loc[2:]
        # pydantic adds the union member's tag to the path ("basic", "function-after"...)
        field = ".".join(str(p) for p in loc if not str(p).startswith(("function-", "tagged-")))
        field = field.replace("schema_", "schema")
        parts = [p for p in (where, f"field {field}" if field else "") if p]
        msg = err["msg"].removeprefix("Value error, ")
        lines.append(f"{shown}: {', '.join(parts) or 'app'}: {msg}")
    return "\n".join(lines)
