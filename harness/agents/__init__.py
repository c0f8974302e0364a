"""The agents ``toolbed eval`` runs, registered by name: the oracle (the gold chains),
``embedded`` (a GGUF model in-process), ``langchain`` (native tool calling) and
``react`` (the seeds' text protocol); a plugin adds its own (``toolbed.registry``).

    from toolbed.harness.agents import AgentOptions, make_agent

    agent = make_agent("react", AgentOptions(model="openai:gpt-4o-mini"))
"""

from ._agents import (
    ANSWER_IN,
    REACT_PROMPT,
    SYSTEM_PROMPT,
    Agent,
    AgentOptions,
    Conversation,
    ConversingAgent,
    LangChainAgent,
    LangChainConversation,
    OracleAgent,
    ReactAgent,
    ScriptedChatModel,
    chat_model,
    make_agent,
    prompt_in,
)
from ._embedded import DEFAULT_GGUF, EmbeddedChatModel, default_model_path
from ._react import ReactFormatError, ReactStep, cut_observation, parse_react

__all__ = [
    "ANSWER_IN",
    "DEFAULT_GGUF",
    "REACT_PROMPT",
    "SYSTEM_PROMPT",
    "Agent",
    "AgentOptions",
    "Conversation",
    "ConversingAgent",
    "EmbeddedChatModel",
    "LangChainAgent",
    "LangChainConversation",
    "OracleAgent",
    "ReactAgent",
    "ReactFormatError",
    "ReactStep",
    "ScriptedChatModel",
    "prompt_in",
    "chat_model",
    "cut_observation",
    "default_model_path",
    "make_agent",
    "parse_react",
]
