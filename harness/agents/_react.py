"""The ReAct text protocol the seeds use, for models without native tool calling:

    Thought: I need the forecast first.
    Action: weather_forecast
    Action Input: {"city": "Oslo"}

and, to finish, ``Thought: ...`` then ``Final Answer: ...``.

``parse_react(text, strict=True)`` accepts exactly that: the keywords as written, an
Action Input that is one JSON object, nothing after it (ToolEyes' format alignment
counts a round as valid only then). ``strict=False`` is what an agent loop uses:
keywords in any case, a missing Thought, the object inside a code fence or written
as a Python dict, and text after the object are all accepted. Either way, text a
model writes after ``Observation:`` is dropped and reported as a hallucinated
observation, since only the tool may say what it returned.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from typing import Any

__all__ = ["ReactFormatError", "ReactStep", "cut_observation", "parse_react"]


class ReactFormatError(ValueError):
    """A model's output is not a ReAct step; the message says what is wrong, in words
    that can be sent back to the model."""


@dataclass(frozen=True)
class ReactStep:
    thought: str
    action: str | None = None
    args: dict[str, Any] | None = None
    final_answer: str | None = None
    hallucinated_observation: bool = False


_STRICT = re.compile(
    r"\AThought: ?(?P<thought>.*?)\n"
    r"(?:Action: ?(?P<action>[^\n]+)\nAction Input: ?(?P<input>\{.*\})"
    r"|Final Answer: ?(?P<answer>.+))\s*\Z", re.DOTALL)
_KEY = r"(?im)^\s*{}\s*:\s*"


def cut_observation(text: str) -> tuple[str, bool]:
    """``text`` up to a line that starts ``Observation:``, and whether there was one."""
    match = re.search(r"(?im)^\s*Observation\s*:", text)
    return (text[:match.start()], True) if match else (text, False)


def parse_react(text: str, strict: bool = True) -> ReactStep:
    """One ReAct step from a model's output; ReactFormatError says what is missing."""
    text, hallucinated = cut_observation(text.replace("\r\n", "\n"))
    if strict:
        match = _STRICT.match(text.strip())
        if not match:
            raise ReactFormatError(
                "write 'Thought: ...' and then either 'Action: <tool>' and 'Action Input: "
                "<JSON object>' or 'Final Answer: ...', and nothing after them")
        if match["answer"] is not None:
            return ReactStep(match["thought"].strip(), final_answer=match["answer"].strip(),
                             hallucinated_observation=hallucinated)
        try:
            args = json.loads(match["input"])
        except json.JSONDecodeError as exc:
            raise ReactFormatError(f"Action Input is not a JSON object: {exc.msg}") from None
        if not isinstance(args, dict):
            raise ReactFormatError("Action Input must be a JSON object")
        return ReactStep(match["thought"].strip(), match["action"].strip(), args,
                         hallucinated_observation=hallucinated)
    return _lenient(text, hallucinated)


def _section(text: str, key: str) -> re.Match[str] | None:
    return re.search(_KEY.format(key), text)


def _lenient(text: str, hallucinated: bool) -> ReactStep:
    thought_at = _section(text, "thought")
    answer_at = _section(text, "final answer")
    action_at = _section(text, "action")
    first = min((m.start() for m in (answer_at, action_at) if m), default=len(text))
    thought = text[thought_at.end():first].strip() if thought_at else text[:first].strip()
    if answer_at and (not action_at or answer_at.start() < action_at.start()):
        return ReactStep(thought, final_answer=text[answer_at.end():].strip(),
                         hallucinated_observation=hallucinated)
    if not action_at:
        raise ReactFormatError("no 'Action:' and no 'Final Answer:' line")
    rest = text[action_at.end():]
    input_at = _section(rest, "action input")
    if not input_at:
        raise ReactFormatError("'Action:' has no 'Action Input:' after it")
    action = rest[:input_at.start()].strip().strip("`").strip()
    if not action:
        raise ReactFormatError("'Action:' names no tool")
    return ReactStep(thought, action, _object(rest[input_at.end():]),
                     hallucinated_observation=hallucinated)


def _object(text: str) -> dict[str, Any]:
    """The first balanced ``{...}`` in ``text``, read as JSON or as a Python dict."""
    start = text.find("{")
    if start < 0:
        raise ReactFormatError("Action Input has no {...} object")
    depth, in_string, quote, escaped = 0, False, "", False
    for end in range(start, len(text)):
        char = text[end]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                in_string = False
        elif char in "\"'":
            in_string, quote = True, char
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                chunk = text[start:end + 1]
                for read in (json.loads, ast.literal_eval):
                    try:
                        value = read(chunk)
                    except (ValueError, SyntaxError):
                        continue
                    if isinstance(value, dict):
                        return value
                raise ReactFormatError("Action Input is neither a JSON object nor a dict")
    raise ReactFormatError("Action Input's {...} is not closed")
