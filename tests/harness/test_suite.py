"""The shipped task suite: its size and mix, its splits, and no paraphrases across splits.

The oracle's live and replayed runs of every task are in test_oracle_runs.py.
"""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from toolbed.apis import Catalog
from toolbed.cli import app as cli
from toolbed.tasks import (
    TASK_CASSETTES,
    TaskSuite,
    api_coverage,
    assign_splits,
    examples_near_tasks,
    load_tasks,
    near_duplicates,
    task_cassette,
)


@pytest.fixture(scope="module")
def suite(catalog: Catalog) -> TaskSuite:
    return load_tasks(catalog=catalog)


def test_at_least_600_self_hosted_tasks_in_the_asked_mix(suite: TaskSuite) -> None:
    tasks = [t for t in suite if suite.tier(t) == "selfhosted"]
    total = len(tasks)
    assert total >= 600
    scenarios = Counter(t.scenario for t in tasks)
    assert scenarios["single"] >= 0.40 * total and scenarios["multi"] >= 0.30 * total
    types = Counter(t.type for t in tasks)
    assert all(types[kind] >= 0.10 * total for kind in ("fixed", "open", "operational",
                                                        "realtime")), types
    assert all(2 <= len(t.chain) <= 9 for t in tasks if t.scenario == "multi")
    assert any(len(t.apps) > 1 for t in tasks), "some multi-call tasks span apps"


def test_every_self_hosted_app_and_api_is_used(suite: TaskSuite, catalog: Catalog) -> None:
    selfhosted = {a.app for a in catalog.apps.values() if a.tier == "selfhosted"}
    assert selfhosted <= {app for t in suite for app in t.apps}
    assert api_coverage(suite, catalog, "selfhosted")["unused"] == []


def test_at_least_150_mcp_tasks_cover_every_mcp_app_and_api(
    suite: TaskSuite, catalog: Catalog
) -> None:
    tasks = [t for t in suite if suite.tier(t) == "mcp"]
    assert len(tasks) >= 150
    assert {a.app for a in catalog.apps.values() if a.tier == "mcp"} <= \
        {app for t in tasks for app in t.apps}
    assert api_coverage(suite, catalog, "mcp")["unused"] == []
    types = Counter(t.type for t in tasks)
    assert set(types) == {"fixed", "open", "operational", "realtime"}, types
    assert Counter(t.scenario for t in tasks)["multi"] >= 0.30 * len(tasks)


def test_every_hosted_api_has_two_tasks_waiting_for_a_live_run(
    suite: TaskSuite, catalog: Catalog
) -> None:
    hosted = suite.filter(tier="hosted")
    uses = Counter(api for t in hosted for api in {s.api for s in t.chain})
    ids = [api.id for api in catalog if catalog.app_of(api).tier == "hosted"]
    assert [i for i in ids if uses[i] < 2] == []
    # written offline, `verified: false` until `toolbed tasks record --live --tier hosted`
    # has run them (then their cassettes are checked like the self-hosted ones)


def test_splits_follow_the_rule_and_test_holds_apis_train_never_shows(suite: TaskSuite) -> None:
    expected = assign_splits(list(suite))
    assert {t.id: t.split for t in suite} == expected, "run `toolbed tasks split --write`"
    shares = Counter(expected.values())
    assert shares["train"] > shares["test"] > shares["dev"] > 0
    in_train = {s.api for t in suite if t.split == "train" for s in t.chain}
    unseen = [t for t in suite if t.split == "test" and any(s.api not in in_train for s in t.chain)]
    assert len(unseen) >= 10


def test_no_query_paraphrases_one_in_another_split(suite: TaskSuite) -> None:
    pairs = near_duplicates(list(suite))
    assert pairs == [], [(p.first, p.second, p.similarity) for p in pairs[:10]]


def test_no_catalog_example_request_paraphrases_a_query_the_retriever_is_scored_on(
    suite: TaskSuite, catalog: Catalog
) -> None:
    """The example requests are indexed with their API: one that paraphrases a dev or
    test query would hand the retriever the answer."""
    pairs = examples_near_tasks(list(suite), catalog)
    assert pairs == [], [(p.first, p.second, p.similarity) for p in pairs[:10]]


def test_no_task_carries_a_moment_that_will_pass(suite: TaskSuite) -> None:
    """A time in seconds since the epoch that lies ahead ("schedule it for 4 January
    2027") breaks the task the day it passes: a chain binds it relative to the run's
    clock instead (``at(`1`, '09:00')``), which a recording keeps for its replay."""
    now = time.time()
    ahead = []
    for task in suite:
        steps = [*task.chain, *(task.answer.state if task.answer.type == "operational" else [])]
        for step in steps:
            text = json.dumps([step.args, getattr(step, "expect", None)])
            ahead += [(task.id, n) for n in re.findall(r"\b1[7-9]\d{8}(?:\.\d+)?\b", text)
                      if float(n) > now]
    assert ahead == [], f"bind these with at(days, 'HH:MM') instead: {ahead}"


def test_the_readme_task_table_is_the_suite_s(tmp_path: Path) -> None:
    readme = Path(__file__).resolve().parents[2] / "README.md"
    copy = tmp_path / "README.md"
    copy.write_text(readme.read_text(encoding="utf-8"), encoding="utf-8")
    for tier in ("selfhosted", "hosted", "mcp"):
        result = CliRunner().invoke(cli, ["tasks", "stats", "--tier", tier, "--update", str(copy)])
        assert result.exit_code == 0, result.output
    assert copy.read_text(encoding="utf-8") == readme.read_text(encoding="utf-8"), \
        "run `toolbed tasks stats --tier TIER --update README.md` for every tier"


def test_every_verified_task_has_its_recorded_cassette_and_no_cassette_is_orphaned(
    suite: TaskSuite,
) -> None:
    verified = {task_cassette(t) for t in suite if t.verified}
    assert sorted(p for p in verified if not p.is_file()) == []
    assert sorted(p for p in TASK_CASSETTES.rglob("*.yaml") if p not in verified) == []
