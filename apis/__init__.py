"""The catalog: one YAML file per app, loaded into typed App and Api models.

    >>> from toolbed.apis import load_catalog
    >>> catalog = load_catalog()
    >>> catalog.api("kinto.create_record").effect
    'write'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolbed._lazy import attach as _attach

if TYPE_CHECKING:
    from ._conformance import Conformance, catalog_conformance, conformance
    from ._import import IMPORTED_WRITE, import_openapi, to_yaml
    from ._loader import CATALOG_DIR, Catalog, load_app, load_catalog
    from ._openapi import OpenApiSpec, Operation, load_openapi
    from ._schema import (
        Api,
        ApiKeyAuth,
        App,
        Arg,
        Auth,
        BasicAuth,
        BearerAuth,
        Body,
        Example,
        ExpectedRequest,
        Http,
        Lookup,
        McpServer,
        NoAuth,
        OpenApiRef,
        ProbeStep,
        Step,
        Undo,
    )
    from ._specs import install_specs, spec_file
    from ._table import catalog_table, replace_table

__getattr__, __dir__ = _attach(__name__, __file__)

__all__ = [
    "CATALOG_DIR",
    "IMPORTED_WRITE",
    "Api",
    "ApiKeyAuth",
    "App",
    "Arg",
    "Auth",
    "BasicAuth",
    "BearerAuth",
    "Body",
    "Catalog",
    "Conformance",
    "Example",
    "ExpectedRequest",
    "Http",
    "Lookup",
    "McpServer",
    "NoAuth",
    "OpenApiRef",
    "OpenApiSpec",
    "Operation",
    "ProbeStep",
    "Step",
    "Undo",
    "catalog_conformance",
    "catalog_table",
    "conformance",
    "import_openapi",
    "install_specs",
    "load_app",
    "load_catalog",
    "load_openapi",
    "replace_table",
    "spec_file",
    "to_yaml",
]
