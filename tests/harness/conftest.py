"""Fresh instances of the self-hosted apps for task validation (see tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack

import pytest

from toolbed.apis import Catalog

from ..conftest import AppPool


@pytest.fixture(scope="package")
def pool(catalog: Catalog) -> Iterator[AppPool]:
    with ExitStack() as stack:
        yield AppPool(catalog, stack)
