"""`toolbed cassettes drift` on a live Kinto: a fresh recording is still valid, and a
recording whose answers differ from the app's in shape or status says so."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from toolbed.apis import Catalog
from toolbed.connectors import Mode, RunningApp, Runtime
from toolbed.harness import drift_report, drift_task, run_oracle
from toolbed.tasks import load_tasks


def test_drift_of_a_kinto_task_before_and_after_its_recording_is_tampered_with(
    tmp_path: Path, kinto: RunningApp, catalog: Catalog,
) -> None:
    task = load_tasks().task("kinto-packing-left")
    cassette = tmp_path / "kinto-packing-left.yaml"
    with Runtime(catalog, mode=Mode.RECORD, cassette=cassette, apps={"kinto": kinto}) as rt:
        assert run_oracle(rt, task).ok

    fresh = drift_task(catalog, task, cassette, {"kinto": kinto})
    assert fresh.verdict == "still valid"
    assert {d.change.label for _, d in fresh.requests} <= {"unchanged", "values changed"}

    recorded = yaml.safe_load(cassette.read_text())
    reads = [i for i in recorded["interactions"] if "/records" in i["request"]["uri"]]
    body = json.loads(reads[0]["response"]["body"]["string"])
    body["data"] = [{("label" if k == "item" else k): v for k, v in r.items()}
                    for r in body["data"]]                   # the app renamed a field
    reads[0]["response"]["body"]["string"] = json.dumps(body)
    cassette.write_text(yaml.safe_dump(recorded))
    report = drift_report([drift_task(catalog, task, cassette, {"kinto": kinto})])
    assert report["apis"]["kinto.list_records"]["change"] == "shape changed"
    assert "item is new" in report["apis"]["kinto.list_records"]["detail"] or \
        "label is gone" in report["apis"]["kinto.list_records"]["detail"]
    assert report["summary"]["apis"]["shape changed"] == 1

    writes = load_tasks().task("kinto-add-sunscreen-record-id")
    assert drift_task(catalog, writes, cassette, {"kinto": kinto}).verdict == "skipped"
