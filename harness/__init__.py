"""The evaluation harness: the agents, the oracle that proves a task, the runner and
the scoring. The tasks themselves are ``toolbed.tasks``.

    from toolbed.connectors import Runtime
    from toolbed.harness import run_oracle
    from toolbed.tasks import load_tasks

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
from ._embedded import DEFAULT_GGUF, EmbeddedChatModel, default_model_path
from ._oracle import TaskRun, check_state, run_oracle, truthy
from ._react import ReactFormatError, ReactStep, parse_react
from ._report import (
    html_report,
    load_results,
    markdown,
    plot_runs,
    summarize,
    write_report,
)
from ._runlog import FORMAT, ResultRow, RunLog, RunSpec
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
from ._stepwise import StepCase, run_stepwise, step_cases
from ._trajectory import Call, ToolBox, Trajectory

__all__ = [
    "FORMAT",
    "ResultRow",
    "RunLog",
    "RunSpec",
    "DEFAULT_GGUF",
    "OPEN_PASS",
    "REACT_PROMPT",
    "SYSTEM_PROMPT",
    "TOOL_CHOICES",
    "Agent",
    "Call",
    "EmbeddedChatModel",
    "LangChainAgent",
    "OracleAgent",
    "ReactAgent",
    "ReactFormatError",
    "ReactStep",
    "Reference",
    "Runner",
    "ScriptedChatModel",
    "StepCase",
    "TaskResult",
    "TaskRun",
    "TaskScore",
    "ToolBox",
    "Trajectory",
    "answer_matches",
    "filled_references",
    "chat_model",
    "check_state",
    "default_model_path",
    "gold_calls",
    "html_report",
    "load_results",
    "markdown",
    "mentions",
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
    "step_cases",
    "summarize",
    "truthy",
    "write_report",
]
