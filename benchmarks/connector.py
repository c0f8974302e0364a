"""A connector call against a raw httpx call to the same loopback app, in the same run.

    python -m benchmarks.connector [--calls 300]

Starts a fresh Kinto on 127.0.0.1. Raw: what a user would write with httpx alone, a
GET of the same URL with the same credentials and the JSON answer parsed. Connector:
``Runtime.call`` (arguments checked against the schema, the request built with its
auth, sent, the answer parsed, observed and redacted). Alternating call by call;
median milliseconds.
"""

from __future__ import annotations

import argparse
import time

import httpx

from toolbed.apis import CATALOG_DIR, load_catalog
from toolbed.connectors import Runtime
from toolbed.launchers import launch

from ._table import Row, median


def bench(quick: bool = False, calls: int | None = None) -> list[Row]:
    n = calls or (100 if quick else 300)
    catalog = load_catalog(CATALOG_DIR / "selfhosted")
    api = catalog.api("kinto.list_buckets")
    raw, ours = [], []
    with launch("kinto", catalog) as kinto, Runtime(catalog, apps={"kinto": kinto}) as rt, \
            httpx.Client() as client:
        request = rt.prepare(api, {})
        url, headers = str(request.url), dict(request.headers)
        for _ in range(n):
            start = time.perf_counter()
            client.get(url, headers=headers).json()
            raw.append(time.perf_counter() - start)
            start = time.perf_counter()
            rt.call(api.id, {})
            ours.append(time.perf_counter() - start)
    return [Row("connector call (kinto.list_buckets, loopback)", "ms", median(ours) * 1000,
                "raw httpx", median(raw) * 1000, "<= 1.05x", median(ours) <= 1.05 * median(raw))]


def main() -> None:
    from ._table import markdown

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    print(markdown(bench(calls=parser.parse_args().calls)))


if __name__ == "__main__":
    main()
