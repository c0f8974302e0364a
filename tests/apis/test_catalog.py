"""The shipped catalog loads, and each entry keeps the catalog's rules."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from toolbed.apis import Catalog


def test_catalog_loads_both_selfhosted_apps(catalog: Catalog):
    assert {"kinto", "radicale"} <= set(catalog.apps)
    for name in ("kinto", "radicale"):
        assert len(catalog.filter(app=name)) >= 15


def test_api_ids_are_app_dot_name(catalog: Catalog):
    for api_id, api in catalog.apis.items():
        assert api_id == f"{api.app}.{api.name}"
        assert catalog.api(api_id) is api


def test_every_api_has_docs_and_a_json_schema(catalog: Catalog):
    for api in catalog:
        owner = catalog.app_of(api)
        assert (api.docs or owner.docs).startswith("https://")
        schema = api.parameters
        assert schema["type"] == "object" and schema["additionalProperties"] is False
        assert set(schema["required"]) <= set(schema["properties"])


def test_every_api_has_example_requests_in_plain_words(catalog: Catalog):
    """The retriever indexes them (document expansion): a few per API in English and a few
    in Chinese, each its own, none naming an API the way code does."""
    for app in catalog.apps.values():
        names = {api.name for api in app.apis}
        seen: dict[str, str] = {}
        for api in app.apis:
            assert len(api.queries) >= 3, f"{api.id}: write at least 3 example requests"
            assert len(api.queries_zh) >= 3, f"{api.id}: write at least 3 requests in Chinese"
            assert all(re.search(r"[\u4e00-\u9fff]", q) for q in api.queries_zh), api.id
            for query in [*api.queries, *api.queries_zh]:
                words = set(re.findall(r"[a-z0-9_]+", query.lower()))
                assert not {n for n in names if "_" in n} & words, f"{api.id}: {query!r}"
                assert seen.setdefault(query.lower(), api.id) == api.id, \
                    f"{query!r} is an example of both {seen[query.lower()]} and {api.id}"


def test_every_catalog_and_task_file_reads_the_same_under_both_yaml_parsers():
    """libyaml (what toolbed loads with) and the pure-Python parser (what other YAML tools
    use) must agree: a plain scalar that one of them cuts or refuses is a bug."""
    root = Path(__file__).resolve().parents[2]
    files = sorted([*(root / "apis").rglob("*.yaml"), *(root / "tasks").rglob("*.yaml")])
    assert len(files) > 100
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert yaml.load(text, Loader=yaml.SafeLoader) == \
            yaml.load(text, Loader=yaml.CSafeLoader), path


def test_every_write_declares_its_undo_or_why_not(catalog: Catalog):
    writes = [api for api in catalog if api.effect == "write"]
    assert writes
    for api in writes:
        assert api.undo or api.irreversible, api.id
        if api.undo:
            target = catalog.api(f"{api.app}.{api.undo.api}")
            assert set(target.required) <= set(api.undo.bind), api.id


def test_every_local_api_is_in_its_apps_exercise(catalog: Catalog):
    for app in catalog.apps.values():
        if not app.local:
            continue
        exercised = {step.api for step in app.exercise}
        missing = {api.name for api in app.apis} - exercised
        assert not missing, f"{app.app}: not exercised: {sorted(missing)}"


def test_every_local_app_with_writes_has_a_state_probe(catalog: Catalog):
    for app in catalog.apps.values():
        if app.local and any(api.effect == "write" for api in app.apis):
            assert app.state_probe, f"{app.app}: rollback cannot verify an app with no probe"


def test_a_local_write_lost_in_a_crash_can_be_settled(catalog: Catalog):
    """Recovery must tell whether a write whose answer was never journalled took effect.

    An undo that needs the answer (a server-made id, an etag), or that deletes (and so
    must not delete what existed before), declares a lookup for recovery to ask with.
    """
    for api in catalog:
        undo = api.undo
        if undo is None or not catalog.app_of(api).local:
            continue
        deletes = catalog.api(f"{api.app}.{undo.api}").http.method == "DELETE"
        if undo.needs_response or deletes:
            assert undo.lookup is not None, f"{api.id}: its undo needs a lookup"


def test_filters(catalog: Catalog):
    kinto = catalog.filter(app="kinto")
    assert kinto and all(api.app == "kinto" for api in kinto)
    assert catalog.filter(tier="selfhosted") == [
        api for api in catalog if catalog.app_of(api).tier == "selfhosted"
    ]
    assert catalog.filter(domain="no such domain") == []


def test_no_task_query_is_cut_short_by_a_hash_read_as_a_comment():
    """In a plain YAML scalar ` #` starts a comment: `query: Post it in #general` loads as
    "Post it in" (both parsers agree, so the test above cannot see it)."""
    root = Path(__file__).resolve().parents[2]
    cut = [f"{path.relative_to(root)}:{number}"
           for path in sorted((root / "tasks").rglob("*.yaml"))
           for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
           if re.match(r"\s*(- )?query: [^\s\"'>|]", line) and " #" in line]
    assert cut == [], "quote these queries: " + ", ".join(cut)
