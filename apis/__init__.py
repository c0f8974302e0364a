"""The catalog: one YAML file per app, loaded into typed App and Api models.

    >>> from toolbed.apis import load_catalog
    >>> catalog = load_catalog()
    >>> catalog.api("kinto.create_record").effect
    'write'
"""

from ._loader import CATALOG_DIR, Catalog, load_app, load_catalog
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
    NoAuth,
    ProbeStep,
    Step,
    Undo,
)
from ._table import catalog_table, replace_table

__all__ = [
    "CATALOG_DIR",
    "Api",
    "ApiKeyAuth",
    "App",
    "Arg",
    "Auth",
    "BasicAuth",
    "BearerAuth",
    "Body",
    "Catalog",
    "Example",
    "ExpectedRequest",
    "Http",
    "Lookup",
    "NoAuth",
    "ProbeStep",
    "Step",
    "Undo",
    "catalog_table",
    "load_app",
    "load_catalog",
    "replace_table",
]
