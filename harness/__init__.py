"""The evaluation harness: the agents, the oracle that proves a task, the runner and
the scoring. The tasks themselves are ``toolbed.tasks``.

    from toolbed.connectors import Runtime
    from toolbed.harness import run_oracle
    from toolbed.tasks import load_tasks

    suite = load_tasks()
    with Runtime() as runtime:                      # apps started by `toolbed apps up`
        run = run_oracle(runtime, suite.task("kinto-count-buckets"))
        assert run.ok, run.summary()

The MCP server over the testbed (``McpTestbed``) imports the ``mcp`` SDK, and
``RayCluster`` imports ``ray``, so their names are imported on first use.
"""

from typing import TYPE_CHECKING

from toolbed._lazy import attach as _attach

from ._dialogues import (
    DialogueResult,
    dialogue_summary,
    evaluate_dialogues,
    oracle_dialogue,
    run_agent_dialogue,
    run_simulated_dialogue,
)
from ._drift import ALARMS, VERDICTS, TaskDrift, check_drift, drift_html, drift_report, drift_task
from ._evaluation import Evaluation, default_run_dir, start_missing, stop_started
from ._oracle import (
    DialogueRun,
    TaskRun,
    TurnRun,
    check_state,
    end_checks,
    run_dialogue,
    run_oracle,
    truthy,
)
from ._report import (
    dialogue_html,
    dialogue_markdown,
    html_page,
    html_report,
    load_results,
    markdown,
    per_task,
    plot_runs,
    summarize,
    tooleyes_markdown,
    tooleyes_table,
    write_report,
)
from ._runlog import FORMAT, ResultRow, RunLog, RunSpec
from ._runner import TOOL_CHOICES, Runner, TaskResult, offered_tools
from ._stepwise import StepCase, run_stepwise, step_cases, step_means
from ._trajectory import VIA, Call, ToolBox, Trajectory, calls_via
from ._turnwise import TURN_SCORES, run_turnwise, turn_history, turn_means
from ._user import STOP, SimulatedUser, UserErrors, UserSession, user_errors
from .agents import (
    DEFAULT_GGUF,
    REACT_PROMPT,
    SYSTEM_PROMPT,
    Agent,
    AgentOptions,
    EmbeddedChatModel,
    LangChainAgent,
    OracleAgent,
    ReactAgent,
    ReactFormatError,
    ReactStep,
    ScriptedChatModel,
    chat_model,
    default_model_path,
    make_agent,
    parse_react,
)
from .scoring import (
    OPEN_PASS,
    Reference,
    TaskScore,
    answer_matches,
    filled_references,
    gold_calls,
    mentions,
    normalise,
    numbers_in,
    render,
    same_value,
    score_run,
    spelled_numbers,
)

if TYPE_CHECKING:
    from ._cluster import RayCluster, check_address
    from ._mcp import (
        FIND_TOOLS,
        McpCaller,
        McpTestbed,
        mcp_caller,
        serve_http,
        serve_stdio,
        testbed_session,
    )

__getattr__, __dir__ = _attach(__name__, __file__)

__all__ = [
    "ALARMS",
    "VERDICTS",
    "TaskDrift",
    "check_drift",
    "drift_html",
    "drift_report",
    "drift_task",
    "RayCluster",
    "check_address",
    "FIND_TOOLS",
    "McpCaller",
    "McpTestbed",
    "mcp_caller",
    "serve_http",
    "serve_stdio",
    "testbed_session",
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
    "AgentOptions",
    "Call",
    "EmbeddedChatModel",
    "Evaluation",
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
    "DialogueResult",
    "DialogueRun",
    "TaskRun",
    "TurnRun",
    "TaskScore",
    "ToolBox",
    "Trajectory",
    "VIA",
    "calls_via",
    "answer_matches",
    "filled_references",
    "chat_model",
    "check_state",
    "default_model_path",
    "default_run_dir",
    "gold_calls",
    "html_report",
    "load_results",
    "make_agent",
    "markdown",
    "mentions",
    "normalise",
    "offered_tools",
    "numbers_in",
    "parse_react",
    "per_task",
    "plot_runs",
    "render",
    "STOP",
    "SimulatedUser",
    "UserErrors",
    "UserSession",
    "dialogue_html",
    "dialogue_markdown",
    "dialogue_summary",
    "html_page",
    "end_checks",
    "evaluate_dialogues",
    "oracle_dialogue",
    "run_agent_dialogue",
    "run_simulated_dialogue",
    "user_errors",
    "start_missing",
    "stop_started",
    "run_dialogue",
    "run_oracle",
    "run_stepwise",
    "run_turnwise",
    "turn_history",
    "turn_means",
    "TURN_SCORES",
    "same_value",
    "spelled_numbers",
    "score_run",
    "step_cases",
    "step_means",
    "summarize",
    "tooleyes_markdown",
    "tooleyes_table",
    "truthy",
    "write_report",
]
