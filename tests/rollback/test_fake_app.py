"""The rollback logic in-process, over a fake app: fast, offline, no app to start.

The scope, the undo binding and recovery are tested end to end on real apps in the
other files of this package. Here the app is a notes service of a few lines, held in
memory behind an ``httpx.MockTransport`` and described by a catalog written for it, so
each rule (undo newest first, a restore from the ``before`` read, a lost response
settled by the lookup, a failed undo retried and then recovered, a bad argument never
journalled nor sent, replay journals that change nothing) runs in milliseconds and a
failure points at the rule, not at an app.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from toolbed.apis import Catalog, load_catalog
from toolbed.connectors import RetryPolicy, RunningApp, Runtime
from toolbed.errors import ArgumentError, IrreversibleWriteError, TransportError
from toolbed.rollback import Journal, RollbackScope, Status, UndoPolicy, recover

CATALOG = """
app: notes
name: Notes
domain: productivity
tier: selfhosted
docs: https://example.org/notes
auth: {scheme: none}
state_probe:
  - api: list_notes
apis:
  - name: list_notes
    description: Every note with its id, title and text.
    effect: read
    http: {method: GET, path: /notes}
  - name: get_note
    description: One note by id, or 404 when there is none.
    effect: read
    http: {method: GET, path: "/notes/{id}"}
    args:
      id: {type: integer, in: path, description: The note's id}
    required: [id]
  - name: find_note
    description: The notes whose title is exactly the one given.
    effect: read
    http: {method: GET, path: /notes}
    args:
      title: {type: string, in: query, description: The title to match}
    required: [title]
  - name: create_note
    description: Add a note; the server picks its id and returns it.
    effect: write
    http: {method: POST, path: /notes, body: {encoding: json}}
    args:
      title: {type: string, in: body, description: Its title}
      text: {type: string, in: body, description: Its text}
    required: [title]
    undo:
      api: delete_note
      bind: {id: response.body.id}
      lookup:
        api: find_note
        bind: {title: args.title}
        response: "{body: lookup.body[0]}"
  - name: edit_note
    description: Replace a note's title and text; the old ones are gone.
    effect: write
    http: {method: PUT, path: "/notes/{id}", body: {encoding: json}}
    args:
      id: {type: integer, in: path, description: The note's id}
      title: {type: string, in: body, description: The new title}
      text: {type: string, in: body, description: The new text}
    required: [id, title]
    undo:
      api: edit_note
      bind: {id: args.id, title: before.body.title, text: before.body.text}
      before: {api: get_note, bind: {id: args.id}}
  - name: delete_note
    description: Delete a note by id (404 when there is none).
    effect: write
    http: {method: DELETE, path: "/notes/{id}"}
    args:
      id: {type: integer, in: path, description: The note's id}
    required: [id]
    undo:
      api: restore_note
      bind: {id: args.id, title: before.body.title, text: before.body.text}
      before: {api: get_note, bind: {id: args.id}}
  - name: restore_note
    description: Put a deleted note back under its old id.
    effect: write
    http: {method: PUT, path: "/notes/{id}/restore", body: {encoding: json}}
    args:
      id: {type: integer, in: path, description: The note's id}
      title: {type: string, in: body, description: Its title}
      text: {type: string, in: body, description: Its text}
    required: [id, title]
    undo:
      api: delete_note
      bind: {id: args.id}
  - name: wipe
    description: Delete every note at once, with no way back.
    effect: write
    irreversible: nothing keeps the notes it deletes
    http: {method: DELETE, path: /notes}
"""


class NotesApp:
    """The fake app: notes in a dict, every request it received in ``requests``.

    ``fail`` maps "METHOD path" to how many times that request answers 503 before it
    works again; ``lose`` lists requests that take effect but whose response is lost
    (the connection drops after the server acted), as a killed process would see it."""

    def __init__(self) -> None:
        self.notes: dict[int, dict[str, Any]] = {
            1: {"id": 1, "title": "groceries", "text": "milk, eggs"}}
        self.next_id = 2
        self.requests: list[str] = []
        self.fail: dict[str, int] = {}
        self.lose: set[str] = set()

    def handle(self, request: httpx.Request) -> httpx.Response:
        key = f"{request.method} {request.url.path}"
        self.requests.append(key)
        if self.fail.get(key, 0) > 0:
            self.fail[key] -= 1
            return httpx.Response(503, json={"error": "busy"})
        response = self._act(request)
        if key in self.lose:
            self.lose.discard(key)
            raise httpx.ReadError("connection dropped", request=request)
        return response

    def _act(self, request: httpx.Request) -> httpx.Response:
        parts = request.url.path.strip("/").split("/")
        body = json.loads(request.content) if request.content else {}
        note = self.notes.get(int(parts[1])) if len(parts) > 1 else None
        match request.method, parts:
            case "GET", ["notes"]:
                title = request.url.params.get("title")
                return httpx.Response(200, json=[n for n in self.notes.values()
                                                 if title is None or n["title"] == title])
            case "GET", ["notes", _]:
                return httpx.Response(200, json=note) if note else httpx.Response(404)
            case "POST", ["notes"]:
                note = {"id": self.next_id, "title": body["title"], "text": body.get("text")}
                self.notes[self.next_id], self.next_id = note, self.next_id + 1
                return httpx.Response(201, json=note)
            case "PUT", ["notes", _] if note:
                note.update(title=body["title"], text=body.get("text"))
                return httpx.Response(200, json=note)
            case "PUT", ["notes", n, "restore"]:
                self.notes[int(n)] = {"id": int(n), "title": body["title"],
                                      "text": body.get("text")}
                return httpx.Response(201, json=self.notes[int(n)])
            case "DELETE", ["notes", n] if note:
                del self.notes[int(n)]
                return httpx.Response(204)
            case "DELETE", ["notes"]:
                self.notes.clear()
                return httpx.Response(204)
        return httpx.Response(404)


@pytest.fixture
def catalog(tmp_path: Path) -> Catalog:
    (tmp_path / "notes.yaml").write_text(CATALOG, encoding="utf-8")
    return load_catalog(tmp_path)


@pytest.fixture
def app() -> NotesApp:
    return NotesApp()


def runtime(catalog: Catalog, app: NotesApp, data_dir: str = "/tmp/notes-1") -> Runtime:
    running = RunningApp("notes", "http://127.0.0.1:9", 0, "1", data_dir, "")
    return Runtime(catalog, apps={"notes": running}, env={}, retry=RetryPolicy(attempts=1),
                   transport=httpx.MockTransport(app.handle))


FAST = UndoPolicy(attempts=2, initial_wait=0.0, max_wait=0.0)


def test_every_write_is_undone_newest_first_and_the_state_is_verified(catalog, app):
    first = {k: dict(v) for k, v in app.notes.items()}
    with runtime(catalog, app) as rt, RollbackScope(rt, Journal(":memory:"),
                                                    verify=["notes"], policy=FAST) as scope:
        new = scope.call("notes.create_note", {"title": "trip", "text": "tickets"}).body["id"]
        scope.call("notes.edit_note", {"id": 1, "title": "shopping", "text": "bread"})
        scope.call("notes.delete_note", {"id": new})
        assert set(app.notes) == {1} and app.notes[1]["title"] == "shopping"
    assert app.notes == first
    assert scope.report is not None and scope.report.clean
    undos = [r for r in app.requests if r.startswith(("PUT", "DELETE", "POST"))][3:]
    assert undos == [f"PUT /notes/{new}/restore", "PUT /notes/1", f"DELETE /notes/{new}"]


def test_a_bad_argument_is_refused_before_it_is_journalled_or_sent(catalog, app):
    journal = Journal(":memory:")
    with runtime(catalog, app) as rt, RollbackScope(rt, journal) as scope, \
            pytest.raises(ArgumentError, match="id"):
        scope.call("notes.edit_note", {"id": "one", "title": "x"})
    assert journal.entries() == [] and app.requests == []


def test_an_irreversible_write_is_refused_unless_allowed_then_listed(catalog, app):
    with runtime(catalog, app) as rt:
        with RollbackScope(rt, Journal(":memory:")) as scope, \
                pytest.raises(IrreversibleWriteError, match="allow-irreversible"):
            scope.call("notes.wipe")
        assert app.notes and "DELETE /notes" not in app.requests
        with RollbackScope(rt, Journal(":memory:"), allow_irreversible=True) as scope:
            scope.call("notes.wipe")
    assert not app.notes
    assert scope.report is not None and len(scope.report.irreversible) == 1


def test_a_failed_undo_is_retried_reported_then_recovered(catalog, app, tmp_path):
    journal = Journal(tmp_path / "journal.db")
    with runtime(catalog, app) as rt:
        with RollbackScope(rt, journal, policy=FAST) as scope:
            new = scope.call("notes.create_note", {"title": "trip"}).body["id"]
            app.fail[f"DELETE /notes/{new}"] = 5          # more than the policy retries
        assert scope.report is not None and not scope.report.clean
        assert app.requests.count(f"DELETE /notes/{new}") == FAST.attempts
        assert new in app.notes
        [entry] = recover(rt, journal, include_live=True, policy=FAST)
    # still busy for recovery's two tries (3 of the 5 failures are spent), then it works
    assert entry.status is Status.FAILED and new in app.notes
    with runtime(catalog, app) as rt:
        [entry] = recover(rt, journal, include_live=True, policy=FAST)
    assert entry.status is Status.COMPENSATED and new not in app.notes


def test_a_lost_response_is_settled_by_the_lookup(catalog, app, tmp_path):
    journal = Journal(tmp_path / "journal.db")
    app.lose.add("POST /notes")
    with runtime(catalog, app) as rt, RollbackScope(rt, journal, policy=FAST) as scope:
        with pytest.raises(TransportError):
            scope.call("notes.create_note", {"title": "trip"})
        [pending] = journal.entries()
        assert pending.status is Status.PENDING and pending.response is None
    assert [n["title"] for n in app.notes.values()] == ["groceries"]
    assert scope.report is not None and scope.report.clean


def test_a_write_journalled_in_replay_is_closed_as_noop_by_a_live_recovery(catalog, app,
                                                                         tmp_path):
    journal = Journal(tmp_path / "journal.db")
    journal.begin(run_id="r1", task_id="t1", app="notes", api="notes.delete_note",
                  mode="replay", args={"id": 1}, status=Status.APPLIED,
                  compensation={"api": "notes.restore_note",
                                "args": {"id": 1, "title": "groceries"}})
    with runtime(catalog, app) as rt:
        [entry] = recover(rt, journal, include_live=True)
    assert entry.status is Status.NOOP and "replay" in (entry.error or "")
    assert app.requests == []


def test_a_write_to_an_instance_that_is_gone_is_closed_without_a_call(catalog, app, tmp_path):
    journal = Journal(tmp_path / "journal.db")
    gone = tmp_path / "old-instance"
    with runtime(catalog, app, str(gone)) as rt:
        with RollbackScope(rt, journal, policy=FAST) as scope:
            scope.call("notes.create_note", {"title": "trip"})
            app.fail["DELETE /notes/2"] = 9
        assert scope.report is not None and not scope.report.clean
    sent = len(app.requests)
    with runtime(catalog, app, str(tmp_path / "new-instance")) as rt:
        [entry] = recover(rt, journal, include_live=True, policy=FAST)
    assert entry.status is Status.NOOP and "gone" in (entry.error or "")
    assert len(app.requests) == sent


async def test_the_async_path_journals_and_undoes_the_same(catalog, app):
    first = {k: dict(v) for k, v in app.notes.items()}
    rt = runtime(catalog, app)
    async with rt, RollbackScope(rt, Journal(":memory:"), verify=["notes"]) as scope:
        obs = await scope.acall("notes.create_note", {"title": "trip"})
        assert obs.status == 201 and len(app.notes) == 2
        bad = await scope.aobserve("notes.get_note", {"id": "two"})
        assert bad.error is not None and bad.error.type == "ArgumentError"
    assert app.notes == first and scope.report is not None and scope.report.clean


def test_a_scoped_write_is_validated_and_built_once(catalog, app, monkeypatch):
    built: list[str] = []
    prepare = Runtime.prepare

    def counting(self, api, args):
        built.append(api.id)
        return prepare(self, api, args)

    monkeypatch.setattr(Runtime, "prepare", counting)
    with runtime(catalog, app) as rt, RollbackScope(rt, Journal(":memory:")) as scope:
        scope.call("notes.edit_note", {"id": 1, "title": "shopping"})
        # the write once, and the read of what it replaces (for its undo); not the write again
        assert sorted(built) == ["notes.edit_note", "notes.get_note"]
