"""The evaluation harness: tasks, the oracle that proves them, and scoring.

    from toolbed.harness import load_tasks, run_oracle
    from toolbed.connectors import Runtime

    suite = load_tasks()
    with Runtime() as runtime:                      # apps started by `toolbed apps up`
        run = run_oracle(runtime, suite.task("kinto-count-buckets"))
        assert run.ok, run.summary()
"""

from ._agents import (
    SYSTEM_PROMPT,
    Agent,
    LangChainAgent,
    OracleAgent,
    ScriptedChatModel,
    chat_model,
)
from ._dedup import PARAPHRASE_THRESHOLD, Pair, near_duplicates
from ._oracle import TaskRun, check_state, run_oracle, truthy
from ._react import ReactFormatError, ReactStep, parse_react
from ._report import load_results, markdown, summarize, write_report
from ._runner import TOOL_CHOICES, Runner, TaskResult
from ._score import answer_matches, mentions, normalise, numbers_in, render, same_value
from ._scoring import OPEN_PASS, Reference, TaskScore, gold_calls, score_run
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
from ._trajectory import Call, ToolBox, Trajectory

__all__ = [
    "CATEGORIES",
    "GROUPINGS",
    "HELD_OUT",
    "OPEN_PASS",
    "PARAPHRASE_THRESHOLD",
    "SHARES",
    "SYSTEM_PROMPT",
    "TASKS_DIR",
    "TASK_CASSETTES",
    "TOOL_CHOICES",
    "Agent",
    "Answer",
    "Call",
    "FixedAnswer",
    "LangChainAgent",
    "Match",
    "OpenAnswer",
    "OperationalAnswer",
    "OracleAgent",
    "Pair",
    "ReactFormatError",
    "ReactStep",
    "RealtimeAnswer",
    "Reference",
    "Runner",
    "ScriptedChatModel",
    "StateCheck",
    "Task",
    "TaskResult",
    "TaskRun",
    "TaskScore",
    "TaskSuite",
    "ToolBox",
    "Trajectory",
    "answer_matches",
    "api_coverage",
    "assign_splits",
    "chat_model",
    "check_state",
    "check_task",
    "gold_calls",
    "load_file",
    "load_results",
    "load_tasks",
    "markdown",
    "mentions",
    "near_duplicates",
    "normalise",
    "numbers_in",
    "parse_react",
    "render",
    "run_oracle",
    "same_value",
    "score_run",
    "set_field",
    "summarize",
    "task_cassette",
    "task_stats",
    "task_table",
    "truthy",
    "write_report",
]
