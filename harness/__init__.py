"""The evaluation harness: tasks, the oracle that proves them, and scoring.

    from toolbed.harness import load_tasks, run_oracle
    from toolbed.connectors import Runtime

    suite = load_tasks()
    with Runtime() as runtime:                      # apps started by `toolbed apps up`
        run = run_oracle(runtime, suite.task("kinto-count-buckets"))
        assert run.ok, run.summary()
"""

from ._agents import (
    REACT_PROMPT,
    SYSTEM_PROMPT,
    Agent,
    LangChainAgent,
    OracleAgent,
    ReactAgent,
    ScriptedChatModel,
    chat_model,
)
from ._dedup import PARAPHRASE_THRESHOLD, Pair, near_duplicates
from ._embedded import DEFAULT_GGUF, EmbeddedChatModel, default_model_path
from ._oracle import TaskRun, check_state, run_oracle, truthy
from ._react import ReactFormatError, ReactStep, parse_react
from ._report import (
    html_report,
    load_results,
    markdown,
    plot_runs,
    summarize,
    write_meta,
    write_report,
)
from ._runner import TOOL_CHOICES, Runner, TaskResult, offered_tools
from ._score import (
    answer_matches,
    filled_references,
    mentions,
    normalise,
    numbers_in,
    render,
    same_value,
)
from ._scoring import OPEN_PASS, Reference, TaskScore, gold_calls, score_run
from ._splits import HELD_OUT, SHARES, assign_splits
from ._stats import GROUPINGS, api_coverage, task_stats, task_table
from ._stepwise import StepCase, run_stepwise, step_cases
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
    "DEFAULT_GGUF",
    "GROUPINGS",
    "HELD_OUT",
    "OPEN_PASS",
    "PARAPHRASE_THRESHOLD",
    "REACT_PROMPT",
    "SHARES",
    "SYSTEM_PROMPT",
    "TASKS_DIR",
    "TASK_CASSETTES",
    "TOOL_CHOICES",
    "Agent",
    "Answer",
    "Call",
    "EmbeddedChatModel",
    "FixedAnswer",
    "LangChainAgent",
    "Match",
    "OpenAnswer",
    "OperationalAnswer",
    "OracleAgent",
    "Pair",
    "ReactAgent",
    "ReactFormatError",
    "ReactStep",
    "RealtimeAnswer",
    "Reference",
    "Runner",
    "ScriptedChatModel",
    "StateCheck",
    "StepCase",
    "Task",
    "TaskResult",
    "TaskRun",
    "TaskScore",
    "TaskSuite",
    "ToolBox",
    "Trajectory",
    "answer_matches",
    "filled_references",
    "api_coverage",
    "assign_splits",
    "chat_model",
    "check_state",
    "check_task",
    "default_model_path",
    "gold_calls",
    "html_report",
    "load_file",
    "load_results",
    "load_tasks",
    "markdown",
    "mentions",
    "near_duplicates",
    "normalise",
    "offered_tools",
    "numbers_in",
    "parse_react",
    "plot_runs",
    "render",
    "run_oracle",
    "run_stepwise",
    "same_value",
    "score_run",
    "set_field",
    "step_cases",
    "summarize",
    "task_cassette",
    "task_stats",
    "task_table",
    "truthy",
    "write_meta",
    "write_report",
]
