"""The agents ``toolbed eval`` runs.

- ``OracleAgent``: the gold chain, run by ``run_oracle`` exactly as ``toolbed tasks
  validate`` runs it, so its cassettes are the suite's task cassettes. It is the upper
  bound every metric should reach.
- ``LangChainAgent``: any LangChain chat model with native tool calling, in a loop:
  the model calls tools, each call goes through the ``ToolBox`` and its observation
  (cut to ``observation_cap`` characters) goes back, until the model answers in text
  or ``max_steps`` rounds have passed. ``start`` opens a conversation that keeps the
  history from one user turn to the next (a ``ConversingAgent``, for dialogues).
- ``ReactAgent``: the Thought / Action / Action Input text protocol of the seeds, for
  models without native tool calling. Each output is parsed (leniently by default,
  strictly with ``strict=True``); an output that does not parse is counted and answered
  with what is wrong, and a made-up ``Observation:`` is cut off and counted.
- ``chat_model``: a model from a ``provider:model`` string (LangChain's
  ``init_chat_model``) or an OpenAI-compatible server (vLLM, Ollama, llama.cpp).
- ``ScriptedChatModel``: LangChain's fake chat model that replays given messages,
  tool calls included, for tests.

Each agent is registered by name (``oracle``, ``embedded``, ``langchain``, ``react``) as
a factory that makes it from ``AgentOptions``; ``make_agent`` looks one up, so
``toolbed eval --agent NAME`` runs any of them, and a plugin adds its own under the
entry-point group ``toolbed.agents`` (see ``toolbed.registry``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol, runtime_checkable

from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from toolbed.connectors import langchain_tools, now
from toolbed.errors import AgentError
from toolbed.registry import lookup, register
from toolbed.tasks._task import Task

from .._trajectory import ToolBox, Trajectory
from ._embedded import EmbeddedChatModel
from ._react import ReactFormatError, cut_observation, parse_react

__all__ = ["ANSWER_IN", "REACT_PROMPT", "SYSTEM_PROMPT", "Agent", "AgentOptions", "Conversation",
           "ConversingAgent", "LangChainAgent", "LangChainConversation", "OracleAgent",
           "ReactAgent", "ScriptedChatModel", "chat_model", "make_agent"]

SYSTEM_PROMPT = (
    "You help a user by calling the tools you are given; they act on real applications. "
    "Call a tool whenever the answer depends on data you do not have, using the ids and "
    "values that earlier tool results returned. When the task is done, reply with a short "
    "final answer in plain text that states the result (numbers and names as the tools "
    "gave them); do not invent results."
)

ANSWER_IN = {
    "zh": "The user writes in Chinese: write your final answer in Chinese (请用中文回答), "
          "with numbers, names and ids exactly as the tools gave them.",
}
"""What the system prompt adds for a task asked in another language than English: the
answer comes back in the user's language (CToolEval's users read Chinese)."""


def prompt_in(prompt: str, lang: str, clock: int | None = None) -> str:
    """``prompt`` for a run at ``clock`` (default: the run's clock, which a runtime sets
    and a replay takes from its recording) for a user who writes in ``lang`` (``en``,
    ``zh``). It adds the date and time: a request for "tomorrow at 09:00" is bound to
    that clock in the gold chain (``at()``), and an agent that is not told the date can
    only guess it; then, for a language other than English, ``ANSWER_IN``."""
    when = datetime.fromtimestamp(now() if clock is None else clock, UTC)
    dated = f"{prompt} It is now {when:%A %d %B %Y, %H:%M} UTC."
    return f"{dated} {ANSWER_IN[lang]}" if lang in ANSWER_IN else dated


REACT_PROMPT = """You help a user by calling tools that act on real applications.

Tools (name: what it does; arguments as JSON Schema):
{tools}

Answer in exactly this format, one step at a time:
Thought: what you will do next and why
Action: one tool name from: {names}
Action Input: the arguments as one JSON object

You will then get an Observation with the tool's result. When you know the answer:
Thought: why you are done
Final Answer: the answer, with the numbers and names as the tools gave them

Never write an Observation yourself."""


class Agent(Protocol):
    """Runs one task with the tools in ``tools``; every call goes through the box.
    ``model_name`` (None for none) is what a run's metadata names as its model."""

    name: str
    model_name: str | None

    def run(self, task: Task, tools: ToolBox) -> Trajectory: ...


class Conversation(Protocol):
    """One dialogue with a user: ``reply`` answers a turn, remembering the turns before."""

    def reply(self, text: str) -> Trajectory: ...


@runtime_checkable
class ConversingAgent(Agent, Protocol):
    """An agent that can hold a dialogue (``LangChainAgent``, so the embedded one too)."""

    def start(self, tools: ToolBox, lang: str = "en") -> Conversation: ...


class OracleAgent:
    """The gold chain. The runner runs it with ``run_oracle`` (see the module's
    docstring); ``run`` runs the chain through a tool box, for use outside a runner."""

    name = "oracle"
    model_name: str | None = None

    def run(self, task: Task, tools: ToolBox) -> Trajectory:
        from toolbed.connectors import run_steps

        run_steps(tools, None, task.chain, {})
        tools.trajectory.steps = len(task.chain)
        return tools.trajectory


class LangChainAgent:
    """A chat model with native tool calling, looped over its tool calls."""

    name = "langchain"

    def __init__(self, model: BaseChatModel, max_steps: int = 12,
                 observation_cap: int = 6000, system_prompt: str = SYSTEM_PROMPT,
                 model_name: str | None = None):
        self.model, self.model_name = model, model_name
        self.max_steps = max_steps
        self.observation_cap = observation_cap
        self.system_prompt = system_prompt

    @property
    def fork_safe(self) -> bool:
        """Whether a forked process can run this agent (a replay worker): not when its
        model runs in this process on threads that a fork leaves behind."""
        return bool(getattr(self.model, "fork_safe", True))

    def run(self, task: Task, tools: ToolBox) -> Trajectory:
        return self.start(tools, lang=task.lang).reply(task.query)

    def start(self, tools: ToolBox, lang: str = "en") -> LangChainConversation:
        """A conversation over ``tools``: each ``reply`` answers one user turn, with
        the turns before it (and their tool calls and results) in the model's context;
        ``lang`` is the user's language, the one the answers are asked in."""
        return LangChainConversation(self, tools, lang)


class LangChainConversation:
    """The messages of one conversation, and the tool loop that answers each turn."""

    def __init__(self, agent: LangChainAgent, tools: ToolBox, lang: str = "en"):
        self.agent, self.tools = agent, tools
        self.bound = agent.model.bind_tools(langchain_tools(tools, tools.offered))
        self.messages: list[BaseMessage] = [SystemMessage(prompt_in(agent.system_prompt, lang))]

    def reply(self, text: str) -> Trajectory:
        """Answer the user's ``text``: call tools until the model answers in text or
        ``max_steps`` rounds have passed; the calls go into the tool box's trajectory."""
        tools, messages = self.tools, self.messages
        trajectory = tools.trajectory
        messages.append(HumanMessage(text))
        for _ in range(self.agent.max_steps):
            try:
                reply = self.bound.invoke(messages)
            except Exception as exc:  # the model's server, not the task, failed
                trajectory.error = f"the model failed: {type(exc).__name__}: {exc}"[:500]
                break
            trajectory.steps += 1
            messages.append(reply)
            if not isinstance(reply, AIMessage):
                break
            for bad in reply.invalid_tool_calls:
                trajectory.format_errors += 1
                messages.append(ToolMessage(
                    f"error: the arguments of {bad.get('name')} are not valid JSON: "
                    f"{bad.get('error') or bad.get('args')}", tool_call_id=bad.get("id") or ""))
            if not reply.tool_calls and not reply.invalid_tool_calls:
                trajectory.answer = _text(reply.content)
                break
            for call in reply.tool_calls:
                trajectory.thoughts.append(_text(reply.content))
                observation = tools.observe(call["name"], call["args"])
                messages.append(ToolMessage(
                    observation.model_dump_json()[: self.agent.observation_cap],
                    tool_call_id=call.get("id") or ""))
        return trajectory


class ReactAgent:
    """A chat model speaking the ReAct text protocol (no native tool calling)."""

    name = "react"

    def __init__(self, model: BaseChatModel, max_steps: int = 12,
                 observation_cap: int = 6000, strict: bool = False,
                 prompt: str = REACT_PROMPT, model_name: str | None = None):
        self.model, self.max_steps, self.observation_cap = model, max_steps, observation_cap
        self.model_name = model_name
        self.strict, self.prompt = strict, prompt

    def system_prompt(self, tools: ToolBox) -> str:
        lines = []
        for api_id in tools.offered:
            api = tools.catalog.api(api_id)
            schema = json.dumps(api.parameters.get("properties", {}), ensure_ascii=False)
            lines.append(f"- {api_id}: {' '.join(api.description.split())} Arguments: {schema}")
        return self.prompt.format(tools="\n".join(lines), names=", ".join(tools.offered))

    def run(self, task: Task, tools: ToolBox) -> Trajectory:
        trajectory = tools.trajectory
        messages: list[BaseMessage] = [
            SystemMessage(prompt_in(self.system_prompt(tools), task.lang)),
            HumanMessage(task.query)]
        for _ in range(self.max_steps):
            try:
                text = _text(self.model.invoke(messages).content)
            except Exception as exc:  # the model's server, not the task, failed
                trajectory.error = f"the model failed: {type(exc).__name__}: {exc}"[:500]
                break
            trajectory.steps += 1
            trajectory.outputs.append(text)
            try:
                step = parse_react(text, strict=self.strict)
            except ReactFormatError as exc:
                trajectory.format_errors += 1
                messages += [AIMessage(text), HumanMessage(
                    f"Your output does not follow the format: {exc}. Answer again.")]
                continue
            trajectory.hallucinated_observations += step.hallucinated_observation
            if step.final_answer is not None:
                trajectory.answer = step.final_answer
                break
            assert step.action is not None
            trajectory.thoughts.append(step.thought)
            observation = tools.observe(step.action, step.args or {})
            messages += [AIMessage(cut_observation(text)[0].rstrip()), HumanMessage(
                "Observation: " + observation.model_dump_json()[: self.observation_cap])]
        return trajectory


def _text(content: str | list[Any]) -> str:
    if isinstance(content, str):
        return content.strip()
    return " ".join(p if isinstance(p, str) else str(p.get("text", "")) for p in content).strip()


class ScriptedChatModel(GenericFakeChatModel):
    """Replays ``messages`` one per call, tool calls included; binding tools is a no-op."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self




def chat_model(model: str, base_url: str | None = None, api_key_env: str | None = None,
               temperature: float = 0.0) -> BaseChatModel:
    """``model`` as ``provider:name`` (e.g. ``openai:gpt-4o-mini``), or a model name
    served by the OpenAI-compatible server at ``base_url``; the key is read from
    ``api_key_env`` (a local server usually needs none)."""
    if base_url:
        from langchain_openai import ChatOpenAI

        key = os.environ.get(api_key_env, "") if api_key_env else ""
        return ChatOpenAI(model=model, base_url=base_url, api_key=key or "none",  # type: ignore[arg-type]
                          temperature=temperature, max_retries=1)
    from langchain.chat_models import init_chat_model

    return init_chat_model(model, temperature=temperature)


@dataclass(frozen=True)
class AgentOptions:
    """What a user says about the agent to run (``toolbed eval``'s options); each agent
    reads the ones it needs. ``None`` leaves an agent's own default."""

    model: str | None = None
    """``provider:model``, the model name at ``base_url``, or (embedded) a GGUF file."""
    base_url: str | None = None
    api_key_env: str | None = None
    temperature: float = 0.0
    max_steps: int | None = None
    observation_cap: int | None = None
    strict_parse: bool = False

    def chat_model(self, agent: str) -> BaseChatModel:
        """The chat model these options name; ``agent`` is who needs it (for the error)."""
        if not self.model:
            raise AgentError(f"--agent {agent} needs --model PROVIDER:NAME (e.g. "
                             "openai:gpt-4o-mini, with its key in the environment) or "
                             "--base-url URL --model NAME for an OpenAI-compatible server "
                             "(vLLM, Ollama, llama.cpp)")
        return chat_model(self.model, self.base_url, self.api_key_env, self.temperature)


AgentFactory = Callable[[AgentOptions], Agent]


def make_agent(name: str | None = None, options: AgentOptions | None = None) -> Agent:
    """The agent registered as ``name``, made from ``options``. Without a name: the
    embedded model, or ``langchain`` when the options name a model."""
    options = options or AgentOptions()
    factory: AgentFactory = lookup("agent", name or ("langchain" if options.model
                                                      else "embedded"))
    return factory(options)


@register("agent", "oracle")
def _oracle(options: AgentOptions) -> Agent:
    return OracleAgent()


@register("agent", "embedded")
def _embedded(options: AgentOptions) -> Agent:
    model = EmbeddedChatModel(model_path=options.model, temperature=options.temperature)
    model.load()                    # a missing file or package fails here, clearly
    # a 135M model loops rather than recovers, and reads a short result best
    return LangChainAgent(model, options.max_steps or 4, options.observation_cap or 1500,
                          model_name=model.name_)


@register("agent", "langchain")
def _langchain(options: AgentOptions) -> Agent:
    return LangChainAgent(options.chat_model("langchain"), options.max_steps or 12,
                          options.observation_cap or 6000, model_name=options.model)


@register("agent", "react")
def _react(options: AgentOptions) -> Agent:
    return ReactAgent(options.chat_model("react"), options.max_steps or 12,
                      options.observation_cap or 6000, strict=options.strict_parse,
                      model_name=options.model)
