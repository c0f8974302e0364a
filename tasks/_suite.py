"""Load the task suite: every ``*.yaml`` under tasks/ is a list of tasks.

Everything a task refers to is checked against the catalog at load, so a bad task
fails here with its file and id named, not half way through a live run: unknown API
ids, arguments the API does not take or that break its schema, a query that names
the API, an ``irreversible`` flag that does not match the chain, duplicate ids.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from toolbed.apis import Catalog, Step, load_catalog
from toolbed.connectors import validate_args
from toolbed.errors import ArgumentError, TaskError, UnknownApiError

from ._task import LANGS, Answer, Task

__all__ = [
    "TASKS_DIR", "TASK_CASSETTES", "CheckedCalls", "TaskSuite", "check_calls", "check_flags",
    "check_lang", "check_task", "load_file", "load_items", "load_tasks", "set_field",
    "task_cassette",
    "yaml_files",
]

TASKS_DIR = Path(__file__).resolve().parent
"""Where the shipped suite lives: ``selfhosted/<app>.yaml``, ``hosted/<app>.yaml`` and
``mcp/<app>.yaml``."""

TASK_CASSETTES = TASKS_DIR.parent / "cassettes" / "tasks"
"""Where `toolbed tasks record` writes, and replays read: ``<first app>/<task id>.yaml``
(the repository's ``cassettes/tasks``: they are not installed with the package)."""

_SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
M = TypeVar("M", bound=BaseModel)


class TaskSuite:
    """Tasks by id, in file order, with the filters the CLI and the harness use."""

    def __init__(self, tasks: Iterable[Task], catalog: Catalog, files: Iterable[Path] = ()):
        self.catalog = catalog
        self.files = list(files)
        self.tasks: dict[str, Task] = {}
        for task in tasks:
            if task.id in self.tasks:
                raise TaskError(f"task id {task.id!r} is used twice; task ids must be unique")
            self.tasks[task.id] = task

    def __len__(self) -> int:
        return len(self.tasks)

    def __iter__(self) -> Iterator[Task]:
        return iter(self.tasks.values())

    def task(self, task_id: str) -> Task:
        try:
            return self.tasks[task_id]
        except KeyError:
            raise TaskError(f"no task {task_id!r}; `toolbed tasks list` shows them") from None

    def write_field(self, field: str, values: Mapping[str, str | None]) -> None:
        """Set ``field`` of the tasks in ``values`` (by id) in their files, leaving the
        rest of each file as written (``None`` removes the field; see ``set_field``)."""
        for path in self.files:
            in_file = [t.id for t in load_file(path, self.catalog)]
            chosen = {n: values[i] for n, i in enumerate(in_file) if i in values}
            if chosen:
                text = path.read_text(encoding="utf-8")
                path.write_text(set_field(text, field, chosen), encoding="utf-8")

    def tier(self, task: Task) -> str:
        return self.catalog.app(task.apps[0]).tier

    def filter(
        self, apps: Iterable[str] = (), types: Iterable[str] = (), splits: Iterable[str] = (),
        ids: Iterable[str] = (), tier: str | None = None, lang: str | None = None,
    ) -> list[Task]:
        """Tasks that touch any of ``apps`` and have one of ``types``/``splits``/``ids``,
        of ``tier`` and asked in ``lang`` (None or ``all``: any language)."""
        check_lang(lang, "tasks")
        apps, types, splits, ids = set(apps), set(types), set(splits), set(ids)
        for wanted in ids - set(self.tasks):
            self.task(wanted)
        return [
            t for t in self
            if (not apps or apps & set(t.apps)) and (not types or t.type in types)
            and (not splits or t.split in splits) and (not ids or t.id in ids)
            and (tier is None or self.tier(t) == tier)
            and (lang in (None, "all") or t.lang == lang)
        ]


def check_lang(lang: str | None, kind: str) -> None:
    """Refuse a language no task or dialogue is asked in (None and ``all`` mean any)."""
    if lang not in (None, "all", *LANGS):
        raise TaskError(f"no language {lang!r}: {kind} are asked in {', '.join(LANGS)} "
                        "(or pick all)")


def load_tasks(*roots: str | Path, catalog: Catalog | None = None) -> TaskSuite:
    """Load every task file under the given folders (default: the shipped suite)."""
    catalog = catalog or load_catalog()
    files = yaml_files(roots, [TASKS_DIR / tier for tier in ("selfhosted", "hosted", "mcp")],
                       "task")
    return TaskSuite((t for f in files for t in load_file(f, catalog)), catalog, files)


def yaml_files(roots: Sequence[str | Path], default: Sequence[Path], kind: str) -> list[Path]:
    """The YAML files a loader reads: each root that is a file, and every ``*.yaml`` under
    each root that is a folder (``default`` when no root is given)."""
    files: list[Path] = []
    for root in [Path(r) for r in roots] or default:
        if root.is_file():
            files.append(root)
        elif root.is_dir():
            files.extend(sorted(root.rglob("*.yaml")))
        else:
            raise TaskError(f"{root}: no such {kind} file or folder")
    return files


def load_file(path: Path, catalog: Catalog) -> list[Task]:
    """One task file, each task checked against the catalog."""
    return load_items(path, Task, check_task, catalog, "task")


def load_items(path: Path, model: type[M], check: Callable[[M, Catalog], list[str]],
               catalog: Catalog, kind: str) -> list[M]:
    """A YAML list of ``model`` items (tasks or dialogues), each validated, then checked
    against the catalog by ``check``; the first bad one is an error naming file and id."""
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        problem = getattr(exc, "problem", None) or exc
        raise TaskError(f"{path}: not valid YAML{where}: {problem}; fix the file") from None
    if not isinstance(data, list):
        raise TaskError(f"{path}: a {kind} file is a YAML list of {kind}s")
    items = []
    for index, item in enumerate(data):
        label = item.get("id") if isinstance(item, dict) else None
        where = f"{path}: {kind} {label or f'#{index + 1}'!s}"
        try:
            parsed = model.model_validate(item)
        except ValidationError as exc:
            raise TaskError("\n".join(f"{where}: {_field(e['loc'])}"
                                      f"{e['msg'].removeprefix('Value error, ')}"
                                      for e in exc.errors())) from None
        problems = check(parsed, catalog)
        if problems:
            raise TaskError("\n".join(f"{where}: {p}" for p in problems))
        items.append(parsed)
    return items


def _field(loc: tuple[Any, ...]) -> str:
    # pydantic puts the union member's name ("FixedAnswer") in the path: leave it out
    path = ".".join(str(p) for p in loc if not str(p)[:1].isupper())
    return f"field {path}: " if path else ""


def check_task(task: Task, catalog: Catalog) -> list[str]:
    """What is wrong with a task given the catalog (empty when nothing is)."""
    checked = check_calls(task.chain, task.answer, task.query, catalog)
    problems = checked.problems
    if task.type == "operational" and not checked.writes:
        problems.append("an operational task's chain must make at least one write")
    return problems + check_flags(checked, task.irreversible, task.reset, task.verified)


class CheckedCalls:
    """What ``check_calls`` found: the problems, and what the calls do."""

    def __init__(self) -> None:
        self.problems: list[str] = []
        self.writes = self.irreversible = False
        self.tiers: set[str] = set()


def check_calls(chain: Sequence[Step], answer: Answer | None, query: str, catalog: Catalog,
                prefix: str = "") -> CheckedCalls:
    """Check a chain and an answer's state reads against the catalog: the APIs exist,
    their arguments fit, a state check only reads, the query does not name an API."""
    found = CheckedCalls()
    problems = found.problems
    calls: list[tuple[str, str, dict[str, Any], set[str]]] = [
        (f"{prefix}chain[{i}]", s.api, s.args, set(s.bind)) for i, s in enumerate(chain)]
    if answer is not None and answer.type == "operational":
        calls += [(f"{prefix}answer.state[{i}]", c.api, c.args, set())
                  for i, c in enumerate(answer.state)]
    for where, api_id, args, bound in calls:
        try:
            api = catalog.api(api_id)
        except UnknownApiError as exc:
            problems.append(f"{where}: {exc}")
            continue
        found.tiers.add(catalog.app_of(api).tier)
        if "chain" in where:
            found.writes |= api.effect == "write"
            found.irreversible |= api.effect == "write" and api.undo is None
        elif api.effect != "read":
            problems.append(f"{where}: {api_id} is a write; a state check must only read")
        unknown = (set(args) | bound) - set(api.args)
        if unknown:
            problems.append(f"{where}: {api_id} takes no argument(s) {sorted(unknown)}; "
                            f"it takes {sorted(api.args)}")
        elif not bound:
            try:
                validate_args(api, args)
            except ArgumentError as exc:
                problems.append(f"{where}: {exc}")
        name = api_id.split(".", 1)[1]
        if "_" in name and name in query or api_id in query:
            problems.append(f"the query names the API {api_id}; say it as a user would")
    return found


def check_flags(found: CheckedCalls, irreversible: bool, reset: bool, verified: bool
                ) -> list[str]:
    """Whether a task's (or a dialogue's) flags agree with what its calls do."""
    problems = []
    if found.irreversible != irreversible:
        problems.append(
            "the chain makes a write that has no undo: say `irreversible: true` (and act only "
            "on objects the chain creates)" if found.irreversible else
            "`irreversible: true`, but every write of the chain has an undo")
    if reset and not irreversible:
        problems.append("`reset: true` is for chains with a write no undo reverses "
                        "(`irreversible: true`); rollback undoes the rest")
    if reset and "hosted" in found.tiers:
        problems.append("`reset: true` restarts self-hosted or MCP apps; a hosted app cannot "
                        "be reset")
    if len(found.tiers) > 1:
        problems.append("a task's apps are all of one tier: self-hosted, hosted or MCP")
    if not verified and "hosted" not in found.tiers:
        problems.append("self-hosted and MCP tasks are validated live: `verified: false` is "
                        "for hosted")
    return problems


def task_cassette(task: Task, root: Path = TASK_CASSETTES) -> Path:
    """The cassette of a task's oracle run."""
    return root / task.apps[0] / f"{task.id}.yaml"


def set_field(text: str, field: str, values: Mapping[int, str | None]) -> str:
    """A task file's text with the ``field:`` line of the n-th task set to ``values[n]``.

    Tasks are the file's top-level list items (lines starting ``- ``); only their
    ``field:`` lines change, so comments and layout stay as written. A task not in
    ``values`` is left alone; ``None`` removes the line; a task without the line gets
    one after its ``id:``. How `toolbed tasks split --write`, `validate --live` and
    `cassettes drift --update` edit task files.
    """
    lines = text.splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if line.startswith("- ")]
    if any(not 0 <= n < len(starts) for n in values):
        raise TaskError(f"{len(starts)} top-level tasks; no task #{max(values) + 1} "
                        f"to set {field} of")
    for n in sorted(values, reverse=True):          # from the end: indexes stay valid
        start = starts[n]
        end = starts[n + 1] if n + 1 < len(starts) else len(lines)
        found = {key: i for key in (field, "id") for i in range(start, end)
                 if _key_line(lines[i], key)}
        value = values[n]
        if field in found:
            i = found[field]
            if value is None:
                del lines[i]
            else:
                head = lines[i].partition(f"{field}:")[0]
                lines[i] = f"{head}{field}: {value}\n"
        elif value is not None:
            if "id" not in found:
                raise TaskError(f"task #{n + 1} has no id: line to add {field} after")
            head = lines[found["id"]].partition("id:")[0].replace("-", " ")
            lines.insert(found["id"] + 1, f"{head}{field}: {value}\n")
    return "".join(lines)


def _key_line(line: str, key: str) -> bool:
    """Whether ``line`` is a task's own ``key:`` line (not a nested one's)."""
    head, sep, _ = line.partition(f"{key}:")
    return bool(sep) and not head.strip(" -") and len(head) <= 2
