"""A simulated user: a chat model plays a dialogue's user from a goal it keeps to itself.

The scripted user (MTU-Bench) says a dialogue's turns exactly as written, whatever the
agent does. The simulated one (tau-bench) is given the same turns as a hidden goal: it
asks for one thing at a time in its own words, answers the agent's questions from the
goal's facts, holds back a value the goal says to give only when asked (an ``asks``
turn), and ends the dialogue by saying ``STOP``. So every dialogue can be played either
way, with the same checks.

Its model is any LangChain chat model: the embedded default, a provider's, or one on an
OpenAI-compatible server. A served model's requests go through httpx like the tools'
calls, so a simulated run records into the dialogue's cassette and replays offline
exactly; the embedded model makes no traffic and repeats exactly under greedy decoding.

A simulated user can go wrong itself, and that is not the agent's fault; tau2-bench
counts it apart. ``user_errors`` reads the user's messages against its goal:

- ``stopped_early``: it said STOP before it had made every request of the goal (a
  request is made when a message gives all of its values, or, for a request without
  values, is at least ``MADE`` similar to it);
- ``left_goal``: a message of five words or more that gives none of the goal's values
  and is less than ``OFF_GOAL`` similar to every request;
- ``leaked``: a message gave a held-back value before the agent asked for it (the
  agent's last reply had no question mark), or quoted its instructions.

These are heuristics over words and embeddings, not a judge: they flag, a person reads.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from toolbed.tasks._dialogue import Dialogue

from .agents._agents import _text

__all__ = ["GREETING", "MADE", "OFF_GOAL", "STOP", "SimulatedUser", "UserErrors",
           "UserSession", "user_errors", "values_in"]

STOP = "###STOP###"
"""What the simulated user says when its goal is done (tau-bench's token)."""

GREETING = "Hi! How can I help you today?"
"""The agent's opening line, which the simulated user answers with its first request."""

MADE = 0.6
"""Similarity at which a message makes a goal request that carries no values."""

OFF_GOAL = 0.3
"""Below this similarity to every request, a long message has left the goal."""

INSTRUCTIONS = (
    "You are playing a user who talks to an AI assistant that can act on your apps "
    "({apps}). Below is what you want done, in order. Keep it to yourself: say one request "
    "at a time, in your own words, as a person would type it, keeping every name, number, "
    "date and quoted value exactly as written. Wait until the assistant has dealt with a "
    "request before you make the next one. When the assistant asks you something, answer "
    "from what is below; never invent anything else. When every request is done, reply "
    f"with exactly {STOP} and nothing else.\n\nWhat you want:\n{{goal}}"
)

_HELD = " (Leave out {what}: give it only when the assistant asks for it. Then say: {then})"

_VALUE = re.compile(r"'[^']+'|\"[^\"]+\"|[\w.@:/+-]*\d[\w.@:/+-]*|"
                    r"[\w.+-]+@[\w.-]+|\w+(?:[-_/.]\w+)+|(?<=[\w,;] )[A-Z][\w'-]+")


def values_in(text: str) -> set[str]:
    """The value-like words of a request: quoted text, anything with a digit, e-mail
    addresses, hyphenated or dotted names, and capitalised words inside a sentence."""
    return {m.strip("'\"").lower() for m in _VALUE.findall(text) if len(m.strip("'\"")) > 1}


def goal_text(dialogue: Dialogue) -> str:
    """The dialogue's turns as the numbered goal the simulated user is given."""
    lines: list[str] = []
    turns = dialogue.turns
    n = 0
    while n < len(turns):
        turn = turns[n]
        line = f"{len(lines) + 1}. {turn.query}"
        if turn.asks is not None and n + 1 < len(turns):
            line += _HELD.format(what=turn.asks, then=turns[n + 1].query)
            n += 1
        lines.append(line)
        n += 1
    return "\n".join(lines)


@dataclass
class UserSession:
    """One simulated user in one dialogue: ``say`` gives its next message, or None
    once it has stopped."""

    model: BaseChatModel
    messages: list[BaseMessage]
    max_turns: int
    said: list[str] = field(default_factory=list)
    stopped: bool = False
    error: str | None = None

    def say(self, agent_reply: str) -> str | None:
        """The user's answer to the agent's ``agent_reply`` (None: the dialogue is over)."""
        if self.stopped or len(self.said) >= self.max_turns:
            return None
        self.messages.append(HumanMessage(agent_reply or "(no reply)"))
        try:
            text = _text(self.model.invoke(self.messages).content)
        except Exception as exc:  # the user's model failed: the dialogue ends here
            self.error = f"the user's model failed: {type(exc).__name__}: {exc}"[:500]
            return None
        self.messages.append(AIMessage(text))
        if STOP in text or not text:
            self.stopped = True
            return None
        self.said.append(text)
        return text


class SimulatedUser:
    """Plays the user of a dialogue from its turns, as a hidden goal (see the module)."""

    def __init__(self, model: BaseChatModel, max_turns: int | None = None,
                 model_name: str | None = None):
        self.model, self.max_turns, self.model_name = model, max_turns, model_name

    def start(self, dialogue: Dialogue) -> UserSession:
        """A session for ``dialogue``: up to ``max_turns`` messages (default: two per
        turn of the dialogue, so a user may repeat or answer questions)."""
        prompt = INSTRUCTIONS.format(apps=", ".join(dialogue.apps), goal=goal_text(dialogue))
        return UserSession(self.model, [SystemMessage(prompt)],
                           self.max_turns or 2 * len(dialogue.turns))


@dataclass
class UserErrors:
    """What a simulated user did wrong (see the module's docstring)."""

    stopped_early: bool = False
    left_goal: bool = False
    leaked: bool = False
    unmade: list[int] = field(default_factory=list)
    """The goal's requests (numbered from 1, as the turns) no message made."""

    @property
    def any(self) -> bool:
        return self.stopped_early or self.left_goal or self.leaked


def user_errors(dialogue: Dialogue, said: Sequence[str], replies: Sequence[str],
                stopped: bool, similarity: Callable[[str, str], float]) -> UserErrors:
    """Check the user's messages ``said`` (with the agent's ``replies``, reply i
    answering message i) against the dialogue's turns; ``stopped``: it said STOP."""
    errors = UserErrors()
    turns = [(n + 1, t) for n, t in enumerate(dialogue.turns)]
    held: set[str] = set()          # what a turn after an `asks` turn gives, new there
    for n, turn in enumerate(dialogue.turns[:-1]):
        if turn.asks is not None:
            earlier = set().union(*(values_in(t.query) for t in dialogue.turns[:n + 1]))
            held |= values_in(dialogue.turns[n + 1].query) - earlier
    lowered = [m.lower() for m in said]
    for number, turn in turns:
        values = values_in(turn.query)
        made = any(all(v in m for v in values) for m in lowered) if values else \
            any(similarity(m, turn.query) >= MADE for m in said)
        if not made:
            errors.unmade.append(number)
    errors.stopped_early = stopped and bool(errors.unmade)
    every_value = set().union(*(values_in(t.query) for _, t in turns))
    for i, (message, low) in enumerate(zip(said, lowered, strict=True)):
        asked = i > 0 and "?" in (replies[i - 1] if i - 1 < len(replies) else "")
        if (any(v in low for v in held) and not asked) or "what you want:" in low:
            errors.leaked = True
        if len(message.split()) >= 5 and not any(v in low for v in every_value) and \
                max((similarity(message, t.query) for _, t in turns), default=0.0) < OFF_GOAL:
            errors.left_goal = True
    return errors
