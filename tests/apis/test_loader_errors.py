"""A bad catalog file fails at load time with the file, the API and the field named."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from toolbed.apis import load_app, load_catalog
from toolbed.errors import CatalogError, UnknownApiError

GOOD = {
    "app": "notes",
    "name": "Notes",
    "domain": "notes",
    "tier": "hosted",
    "base_url": "https://notes.example/api",
    "docs": "https://notes.example/docs",
    "apis": [
        {
            "name": "create_note",
            "description": "Create a note with a title; returns the note and its id.",
            "effect": "write",
            "http": {"method": "POST", "path": "/notes"},
            "args": {"title": {"type": "string", "in": "body", "description": "Title"}},
            "required": ["title"],
            "undo": {"api": "delete_note", "bind": {"note_id": "response.body.id"}},
            "examples": [{"args": {"title": "Milk"}, "request": {
                "method": "POST", "url": "https://notes.example/api/notes",
                "json": {"title": "Milk"}}}],
        },
        {
            "name": "delete_note",
            "description": "Delete a note by id; deleted notes cannot be recovered.",
            "effect": "write",
            "http": {"method": "DELETE", "path": "/notes/{note_id}"},
            "args": {"note_id": {"type": "string", "in": "path", "description": "Note id"}},
            "required": ["note_id"],
            "irreversible": "the service has no trash",
            "examples": [{"args": {"note_id": "n1"}, "request": {
                "method": "DELETE", "url": "https://notes.example/api/notes/n1"}}],
        },
    ],
}


def write(tmp_path: Path, data: object, name: str = "notes.yaml") -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else yaml.safe_dump(data))
    return path


def edited(change) -> dict:
    data = yaml.safe_load(yaml.safe_dump(GOOD))
    change(data)
    return data


def test_a_good_file_loads(tmp_path):
    app = load_app(write(tmp_path, GOOD))
    assert [api.id for api in app.apis] == ["notes.create_note", "notes.delete_note"]


def test_malformed_yaml_names_file_and_line(tmp_path):
    path = write(tmp_path, "app: notes\napis: [\n  - {name: x\n")
    with pytest.raises(CatalogError) as err:
        load_app(path)
    message = str(err.value)
    assert str(path) in message and "malformed YAML at line" in message


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda d: d["apis"][0]["http"].update(method="PUTT"),
         "API 'create_note', field http.method: Value error, unknown HTTP method 'PUTT'"),
        (lambda d: d["apis"][0]["undo"].update(api="remove_note"),
         "undo names unknown API 'remove_note'"),
        (lambda d: d["apis"][1]["http"].update(path="/notes/{id}"),
         "API 'delete_note'"),
        (lambda d: d["apis"][0].pop("undo"),
         "a write API needs 'undo'"),
        (lambda d: d["apis"][0]["args"]["title"].pop("description"),
         "API 'create_note', field args.title.schema"),
        (lambda d: d["apis"][0]["undo"]["bind"].update(note_id="response.[["),
         "is not a JMESPath expression"),
        (lambda d: d["apis"][0]["undo"].update(
            instead=[{"when": "before.status == `200`", "api": "restore_note"}]),
         "undo.instead[0] names unknown API 'restore_note'"),
        (lambda d: d.update(base_url="http://notes.example"),
         "must use https://"),
        (lambda d: d["apis"][1].pop("examples"),
         "a hosted API needs examples"),
        (lambda d: d["apis"][0]["examples"][0]["args"].update(title=5),
         "examples[0].args break the schema: 5 is not of type 'string'"),
    ],
)
def test_inconsistent_entries_name_the_api_and_field(tmp_path, change, expected):
    path = write(tmp_path, edited(change))
    with pytest.raises(CatalogError) as err:
        load_app(path)
    message = str(err.value)
    assert message.startswith(str(path)), message
    assert expected.replace("Value error, ", "") in message, message


def test_a_description_cut_at_a_comma_in_a_flow_map_is_caught_with_its_stray_key(tmp_path):
    text = yaml.safe_dump(GOOD).replace(
        "    title:\n      description: Title\n      in: body\n      type: string\n",
        "    title: {type: string, in: body, description: Title (at most 200, plain text)}\n")
    assert "plain text)}" in text
    path = write(tmp_path, text)
    with pytest.raises(CatalogError) as err:
        load_app(path)
    assert str(err.value) == (
        f"{path}: API 'create_note', field args.title.schema: unknown key 'plain text)': not a "
        "JSON Schema keyword toolbed supports; if it is the end of a description cut at a "
        "comma, quote the description")


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"type": "integer", "minimun": 1}, "unknown key 'minimun'"),
        ({"type": "object", "properties": {"n": {"type": "string", "maxlength": 3}}},
         "properties.n.unknown key 'maxlength'"),
        ({"type": "string", "default": None}, "'default' has no value"),
        ({"type": "string", "description": "Results (default 20"}, "has unbalanced brackets"),
    ],
)
def test_a_schema_key_that_is_no_keyword_or_has_no_value_is_named(tmp_path, schema, expected):
    def change(data: dict) -> None:
        data["apis"][0]["args"]["title"].update({"description": "Title", **schema})

    with pytest.raises(CatalogError, match=re.escape(expected)):
        load_app(write(tmp_path, edited(change)))


def test_file_name_must_match_app_id(tmp_path):
    with pytest.raises(CatalogError, match="must match the file name"):
        load_app(write(tmp_path, GOOD, name="other.yaml"))


def test_missing_folder(tmp_path):
    with pytest.raises(CatalogError, match="no such catalog file or folder"):
        load_catalog(tmp_path / "nope")


def test_unknown_api_id_suggests_close_ones(catalog):
    with pytest.raises(UnknownApiError) as err:
        catalog.api("kinto.create_recrod")
    assert "kinto.create_record" in str(err.value)
    assert "toolbed apis list" in str(err.value)


def test_a_file_that_is_not_utf8_is_one_clear_error(tmp_path):
    path = tmp_path / "notes.yaml"
    path.write_bytes(yaml.safe_dump(GOOD).encode("utf-8") + b"# caf\xe9\n")
    with pytest.raises(CatalogError, match=r"not UTF-8 text \(byte \d+\); save the file as UTF-8"):
        load_app(path)
