"""The evaluation harness: tasks, the oracle that proves them, and scoring.

    from toolbed.harness import load_tasks, run_oracle
    from toolbed.connectors import Runtime

    suite = load_tasks()
    with Runtime() as runtime:                      # apps started by `toolbed apps up`
        run = run_oracle(runtime, suite.task("kinto-count-buckets"))
        assert run.ok, run.summary()
"""

from ._dedup import PARAPHRASE_THRESHOLD, Pair, near_duplicates
from ._oracle import TaskRun, check_state, run_oracle, truthy
from ._score import answer_matches, mentions, normalise, numbers_in, render, same_value
from ._splits import HELD_OUT, SHARES, assign_splits
from ._stats import GROUPINGS, api_coverage, task_stats, task_table
from ._suite import (
    TASK_CASSETTES,
    TASKS_DIR,
    TaskSuite,
    check_task,
    load_file,
    load_tasks,
    set_field,
    task_cassette,
)
from ._task import (
    CATEGORIES,
    Answer,
    FixedAnswer,
    Match,
    OpenAnswer,
    OperationalAnswer,
    RealtimeAnswer,
    StateCheck,
    Task,
)

__all__ = [
    "CATEGORIES",
    "GROUPINGS",
    "HELD_OUT",
    "PARAPHRASE_THRESHOLD",
    "SHARES",
    "TASKS_DIR",
    "TASK_CASSETTES",
    "Answer",
    "FixedAnswer",
    "Match",
    "OpenAnswer",
    "OperationalAnswer",
    "Pair",
    "RealtimeAnswer",
    "StateCheck",
    "Task",
    "TaskRun",
    "TaskSuite",
    "answer_matches",
    "assign_splits",
    "api_coverage",
    "check_state",
    "check_task",
    "load_file",
    "load_tasks",
    "mentions",
    "near_duplicates",
    "normalise",
    "numbers_in",
    "render",
    "run_oracle",
    "same_value",
    "task_cassette",
    "task_stats",
    "task_table",
    "set_field",
    "truthy",
]
