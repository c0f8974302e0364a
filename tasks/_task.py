"""The typed shape of a task: what a user asks, the gold chain, and the reference.

This module is the contract for everything under tasks/: the loader turns YAML into
these models, and the oracle, the scorer and the harness read nothing else. A task
names its APIs by full id (``kinto.list_buckets``) and its gold chain is a list of
the same steps the catalog's ``exercise`` uses: a later argument is bound from an
earlier observation with a JMESPath expression (the library rollback binds with).

Four answer types, after CToolEval (section 3.5):

* ``fixed``: the answer is known in advance (it comes from the seeded data); the
  ``source`` expression must yield exactly ``value`` on the live app, so a wrong
  label cannot ship;
* ``realtime``: the answer changes with the app's state (a count, a version, an id);
  it is extracted by ``source`` from what the gold chain got at run time;
* ``open``: free text, judged against one or more ``references``; each of ``facts``
  (expressions over the chain's observations) must be mentioned by every reference;
* ``operational``: the user asks for a change; ``state`` lists reads, made after
  the chain, whose ``expect`` predicate must hold then and must not hold before.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

import jmespath
from jmespath.exceptions import JMESPathError
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from toolbed.apis import Step

FACT = re.compile(r"\{(\d+)\}")
"""A fact's place in an open answer's reference: ``{0}`` is the live value of facts[0]."""

__all__ = [
    "CATEGORIES",
    "LANGS",
    "Answer",
    "FixedAnswer",
    "Match",
    "OpenAnswer",
    "OperationalAnswer",
    "RealtimeAnswer",
    "StateCheck",
    "Task",
]

LANGS = ("en", "zh")
"""The languages a task may be asked in (``lang``)."""

CATEGORIES = (
    "text generation", "data understanding", "real-time search", "application manipulation",
    "personal life", "information retrieval", "financial transactions",
)
"""ToolEyes' seven scenarios (its section 3.1), so results can be reported per scenario."""

AnswerType = Literal["fixed", "open", "operational", "realtime"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _expression(value: str) -> str:
    try:
        jmespath.compile(value)
    except JMESPathError as exc:
        raise ValueError(f"not a valid JMESPath expression {value!r}: {exc}") from None
    return value


class Match(_Model):
    """How an answer text is compared with the expected value (fixed and real-time).

    * ``contains`` (default): every expected value (each item of a list) appears in the
      answer, case and spacing ignored; numbers are compared as numbers;
    * ``exact``: the whole answer is the value, case and spacing ignored;
    * ``number``: every expected number appears in the answer, within ``tolerance``;
    * ``phrases``: GTA's rule: the answer holds one phrase of each ``whitelist`` group
      and none of the ``blacklist``.
    """

    match: Literal["contains", "exact", "number", "phrases"] = "contains"
    tolerance: float = Field(0.0, ge=0, description="Absolute tolerance for numbers.")
    ordered: bool = Field(False, description="A list value must come in this order.")
    whitelist: list[list[str]] = []
    blacklist: list[str] = []

    @model_validator(mode="after")
    def _phrases_need_a_whitelist(self) -> Match:
        if self.match == "phrases" and not self.whitelist:
            raise ValueError("match: phrases needs a whitelist (groups of accepted phrases)")
        return self


class FixedAnswer(Match):
    """The answer is known: ``value``, which ``source`` must yield on the live app."""

    type: Literal["fixed"]
    source: Annotated[str, Field(description="JMESPath over the chain's saved observations")]
    value: Any

    _source = field_validator("source")(_expression)

    @field_validator("value")
    @classmethod
    def _not_empty(cls, value: Any) -> Any:
        if value is None or value == "" or value == []:
            raise ValueError("a fixed answer needs a value")
        return value


class RealtimeAnswer(Match):
    """The answer is whatever ``source`` extracts from the chain's observations now."""

    type: Literal["realtime"]
    source: str

    _source = field_validator("source")(_expression)


class OpenAnswer(_Model):
    """Free text, judged against ``references``; each fact must be in every reference.

    An answer about live data cannot be written in advance: its reference names the
    facts by place instead, ``{0}`` for the live value of ``facts[0]`` and so on, and
    ``filled_references`` puts in what the gold chain read at run time."""

    type: Literal["open"]
    references: list[str] = Field(min_length=1)
    facts: list[str] = Field([], description="JMESPath over the chain's saved observations; "
                             "every reference mentions each one's live value")

    @field_validator("facts")
    @classmethod
    def _facts(cls, facts: list[str]) -> list[str]:
        return [_expression(f) for f in facts]

    @model_validator(mode="after")
    def _placeholders_name_facts(self) -> OpenAnswer:
        for reference in self.references:
            for index in FACT.findall(reference):
                if int(index) >= len(self.facts):
                    raise ValueError(f"reference {reference[:40]!r}... uses {{{index}}} but "
                                     f"there are {len(self.facts)} facts")
        return self


class StateCheck(_Model):
    """A read made after the chain (and before it): ``expect`` must hold only after."""

    api: str
    args: dict[str, Any] = {}
    expect: str = Field(description="JMESPath over {status, headers, body} that is true "
                        "once the change is made")

    _expect = field_validator("expect")(_expression)


class OperationalAnswer(_Model):
    """The user asked for a change: every ``state`` check holds after the chain."""

    type: Literal["operational"]
    state: list[StateCheck] = Field(min_length=1)


Answer = Annotated[
    FixedAnswer | RealtimeAnswer | OpenAnswer | OperationalAnswer, Field(discriminator="type")
]


class Task(_Model):
    """One task: a user's query, the calls that answer it, and how to check the answer."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$")
    query: str = Field(min_length=10)
    apps: list[str] = Field(min_length=1)
    scenario: Literal["single", "multi"] = Field(
        description="single: one call; multi: 2 to 9 calls (CToolEval's scenarios)")
    category: Literal[CATEGORIES] = Field(  # type: ignore[valid-type]
        description="ToolEyes' scenario label")
    split: Literal["train", "dev", "test"]
    lang: Literal[LANGS] = Field(  # type: ignore[valid-type]
        "en", description="The language the user asks in (CToolEval's tasks are Chinese); "
        "the catalog, the apps and the gold chain are the same whatever the language")
    irreversible: bool = Field(
        False, description="The chain makes a write that has no undo (on objects it "
        "created itself, so the app still ends as it began)")
    reset: bool = Field(
        False, description="The chain makes a write that nothing can reverse (emptying a "
        "whole collection): its apps are restarted from their seed after the task, and "
        "their state is then verified as before")
    verified: bool = Field(
        True, description="False for tasks not yet run live (hosted tasks written offline)")
    stale: str | None = Field(
        None, description="Why the task no longer holds against the app as it is now "
        "(set by `toolbed cassettes drift --update`): runs skip it, naming the reason, "
        "until it is fixed and the mark removed")
    chain: list[Step] = Field(min_length=1, max_length=9)
    answer: Answer

    @property
    def type(self) -> AnswerType:
        return self.answer.type

    @model_validator(mode="after")
    def _consistent(self) -> Task:
        calls = len(self.chain)
        if self.scenario == "single" and calls != 1:
            raise ValueError(f"scenario single means one call; the chain has {calls}")
        if self.scenario == "multi" and calls < 2:
            raise ValueError("scenario multi means 2 to 9 calls; the chain has 1")
        named = sorted({step.api.split(".")[0] for step in self.chain})
        if sorted(set(self.apps)) != named:
            raise ValueError(f"apps {self.apps} differ from the chain's apps {named}")
        saved = {step.save for step in self.chain if step.save}
        if self.type in ("fixed", "realtime", "open") and not saved:
            raise ValueError("save the observation(s) that the answer is read from")
        return self
