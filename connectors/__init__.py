"""The runtime that turns a catalog entry into a call: validation, request building,
auth from env, httpx with retries, cassettes (live | record | replay), observations,
agent tool adapters (LangChain, OpenAI, MCP), and the records of the self-hosted apps
that are running (which ``toolbed.launchers`` starts and stops).

    >>> from toolbed.connectors import Runtime
    >>> with Runtime(mode="replay", cassette="cassettes/exercise/kinto.yaml") as rt:
    ...     rt.call("kinto.get_server_info").status
    200
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolbed._lazy import attach as _attach

if TYPE_CHECKING:
    from ._auth import auth_for
    from ._bind import bind_args, evaluate
    from ._cassette import (
        Cassette,
        Mode,
        canonical_origin,
        json_body,
        made_as,
        made_when,
        made_with,
        parse_mode,
        read_cassette,
    )
    from ._check import FAKE_SECRET, Health, built_request, check_live, request_mismatches
    from ._clock import now, running_at
    from ._drift import (
        Change,
        Drift,
        api_of,
        body_shape,
        compare,
        exchange_key,
        request_pattern,
    )
    from ._exercise import StepResult, run_exercise, run_steps
    from ._observation import CallError, Observation
    from ._redact import Redactor
    from ._request import build_request, validate_args
    from ._retry import RetryPolicy
    from ._running import (
        RunningApp,
        damaged_records,
        forget_running,
        own,
        process_alive,
        process_started,
        reap_orphans,
        running_apps,
        save_running,
        stop_app,
    )
    from ._runtime import AGENT_ERRORS, Caller, Runtime
    from ._tools import (
        api_id_of,
        langchain_tool,
        langchain_tools,
        mcp_tool,
        openai_tool,
        tool_name,
    )

__getattr__, __dir__ = _attach(__name__, __file__)

__all__ = [
    "AGENT_ERRORS",
    "FAKE_SECRET",
    "CallError",
    "Change",
    "Caller",
    "Cassette",
    "Drift",
    "Health",
    "Mode",
    "Observation",
    "Redactor",
    "RetryPolicy",
    "RunningApp",
    "Runtime",
    "StepResult",
    "api_id_of",
    "api_of",
    "auth_for",
    "body_shape",
    "bind_args",
    "build_request",
    "built_request",
    "canonical_origin",
    "check_live",
    "compare",
    "damaged_records",
    "evaluate",
    "exchange_key",
    "request_pattern",
    "forget_running",
    "json_body",
    "langchain_tool",
    "langchain_tools",
    "made_as",
    "made_when",
    "made_with",
    "mcp_tool",
    "now",
    "openai_tool",
    "own",
    "parse_mode",
    "process_alive",
    "process_started",
    "read_cassette",
    "reap_orphans",
    "request_mismatches",
    "run_exercise",
    "run_steps",
    "running_apps",
    "running_at",
    "save_running",
    "stop_app",
    "tool_name",
    "validate_args",
]
