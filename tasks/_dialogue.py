"""Dialogues: several user turns on the live apps (MTU-Bench's multi-turn granularities).

A dialogue is a list of turns. Each turn is what the user says, the calls that answer
it, and how to check it, as a task's: an ``answer`` (fixed, realtime, open or
operational). A turn may need no call (its answer is read from what earlier turns
got), or may leave out a value the agent needs: then ``asks`` names it, the turn has
no calls and no answer, and the right move is to ask the user, not to invent it.

Saved observations carry over from turn to turn, so a later turn binds to what an
earlier one made ("rename the one you just made") and passes only on the state the
earlier turns left. The whole dialogue runs in one rollback scope.

Granularity, after MTU-Bench: ``S-S`` one turn with one call, ``S-M`` one turn with
several, ``M-S`` several turns with at most one call each, ``M-M`` several turns, one
of them with several calls.

    - id: kinto-trip-bucket-dialogue
      apps: [kinto]
      category: application manipulation
      split: test
      turns:
        - query: Make me a bucket called summer-trip for our holiday plans.
          chain:
            - {api: kinto.create_bucket, args: {bucket: summer-trip}}
          answer: {type: operational, state: [...]}
        - query: And give it the title "Summer 2026".
          ...
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Literal

from pydantic import Field, model_validator

from toolbed.apis import Catalog, Step, load_catalog
from toolbed.errors import TaskError

from ._suite import (
    TASK_CASSETTES,
    TASKS_DIR,
    CheckedCalls,
    check_calls,
    check_flags,
    check_lang,
    load_items,
    yaml_files,
)
from ._task import CATEGORIES, LANGS, Answer, _Model

__all__ = [
    "DIALOGUES_DIR", "DIALOGUE_CASSETTES", "GRANULARITIES", "Dialogue", "DialogueSuite",
    "Turn", "check_dialogue", "dialogue_cassette", "load_dialogues",
]

DIALOGUES_DIR = TASKS_DIR / "dialogues"
"""The shipped dialogues: ``dialogues/<app>.yaml``."""

DIALOGUE_CASSETTES = TASK_CASSETTES.parent / "dialogues"
"""Their oracle cassettes: ``cassettes/dialogues/<first app>/<id>.yaml``."""

GRANULARITIES = ("S-S", "S-M", "M-S", "M-M")
"""MTU-Bench's granularities: single or multiple turns, single or multiple calls."""


class Turn(_Model):
    """One user turn: what the user says, the calls that answer it, how to check it."""

    query: str = Field(min_length=2)
    chain: list[Step] = Field([], max_length=9)
    answer: Answer | None = None
    asks: str | None = Field(
        None, description="The value the user left out (e.g. 'the time of the meeting'): "
        "the right move is to ask for it, with no call; the next turn gives it")

    @model_validator(mode="after")
    def _checkable(self) -> Turn:
        if self.asks is not None:
            if self.chain or self.answer is not None:
                raise ValueError("a turn that `asks:` for a missing value makes no call and "
                                 "has no answer: the next turn gives the value")
        elif self.answer is None:
            raise ValueError("a turn needs an `answer:` to check (or `asks:` for a value "
                             "the user left out)")
        elif self.answer.type == "operational" and not self.chain:
            raise ValueError("an operational turn needs a chain that makes the change")
        return self


class Dialogue(_Model):
    """A user's dialogue with an agent over the live apps, turn by turn."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$")
    apps: list[str] = Field(min_length=1)
    category: Literal[CATEGORIES] = Field(  # type: ignore[valid-type]
        description="ToolEyes' scenario label")
    split: Literal["train", "dev", "test"]
    lang: Literal[LANGS] = Field(  # type: ignore[valid-type]
        "en", description="The language the user speaks in, every turn (as a task's)")
    irreversible: bool = Field(
        False, description="A turn makes a write that has no undo (on objects the "
        "dialogue created itself)")
    turns: list[Turn] = Field(min_length=1, max_length=8)

    @property
    def granularity(self) -> str:
        """``S-S``, ``S-M``, ``M-S`` or ``M-M`` (see the module's docstring)."""
        turns = "M" if len(self.turns) > 1 else "S"
        calls = "M" if any(len(t.chain) > 1 for t in self.turns) else "S"
        return f"{turns}-{calls}"

    @property
    def chain(self) -> list[Step]:
        """Every turn's gold calls, in order."""
        return [step for turn in self.turns for step in turn.chain]

    @model_validator(mode="after")
    def _consistent(self) -> Dialogue:
        if not self.chain:
            raise ValueError("a dialogue needs at least one call in one of its turns")
        named = sorted({step.api.split(".")[0] for step in self.chain})
        if sorted(set(self.apps)) != named:
            raise ValueError(f"apps {self.apps} differ from the turns' apps {named}")
        saved: set[str] = set()
        for n, turn in enumerate(self.turns):
            saved |= {step.save for step in turn.chain if step.save}
            if turn.answer is not None and turn.answer.type in ("fixed", "realtime", "open") \
                    and not saved:
                raise ValueError(f"turn {n + 1}: save the observation(s) that its answer is "
                                 "read from, in this turn or an earlier one")
        return self


def check_dialogue(dialogue: Dialogue, catalog: Catalog) -> list[str]:
    """What is wrong with a dialogue given the catalog (empty when nothing is)."""
    problems: list[str] = []
    every = CheckedCalls()
    for n, turn in enumerate(dialogue.turns):
        found = check_calls(turn.chain, turn.answer, turn.query, catalog, f"turns[{n}].")
        problems += found.problems
        if turn.answer is not None and turn.answer.type == "operational" and not found.writes:
            problems.append(f"turns[{n}]: an operational turn's chain must make a write")
        every.writes |= found.writes
        every.irreversible |= found.irreversible
        every.tiers |= found.tiers
    if every.tiers - {"selfhosted"}:
        problems.append("dialogues run on the self-hosted apps (validated live, replayed "
                        "offline); a hosted API cannot be in one yet")
    return problems + check_flags(every, dialogue.irreversible, reset=False, verified=True)


class DialogueSuite:
    """Dialogues by id, in file order."""

    def __init__(self, dialogues: Iterable[Dialogue], catalog: Catalog):
        self.catalog = catalog
        self.dialogues: dict[str, Dialogue] = {}
        for dialogue in dialogues:
            if dialogue.id in self.dialogues:
                raise TaskError(f"dialogue id {dialogue.id!r} is used twice; ids must be unique")
            self.dialogues[dialogue.id] = dialogue

    def __len__(self) -> int:
        return len(self.dialogues)

    def __iter__(self) -> Iterator[Dialogue]:
        return iter(self.dialogues.values())

    def dialogue(self, dialogue_id: str) -> Dialogue:
        try:
            return self.dialogues[dialogue_id]
        except KeyError:
            raise TaskError(f"no dialogue {dialogue_id!r}; `toolbed dialogues list` shows "
                            "them") from None

    def filter(self, apps: Iterable[str] = (), splits: Iterable[str] = (),
               ids: Iterable[str] = (), granularities: Iterable[str] = (),
               lang: str | None = None) -> list[Dialogue]:
        """The dialogues on any of ``apps``, in one of ``splits``, with one of ``ids``
        and ``granularities``, asked in ``lang`` (None or ``all``: any language)."""
        apps, splits, ids, kinds = set(apps), set(splits), set(ids), set(granularities)
        check_lang(lang, "dialogues")
        for wanted in ids - set(self.dialogues):
            self.dialogue(wanted)
        unknown = kinds - set(GRANULARITIES)
        if unknown:
            raise TaskError(f"unknown granularity {sorted(unknown)[0]!r}; use one of "
                            f"{', '.join(GRANULARITIES)}")
        return [d for d in self
                if (not apps or apps & set(d.apps)) and (not splits or d.split in splits)
                and (not ids or d.id in ids) and (not kinds or d.granularity in kinds)
                and (lang in (None, "all") or d.lang == lang)]


def load_dialogues(*roots: str | Path, catalog: Catalog | None = None) -> DialogueSuite:
    """Load every dialogue file under the given folders (default: the shipped ones)."""
    catalog = catalog or load_catalog()
    files = yaml_files(roots, [DIALOGUES_DIR], "dialogue")
    return DialogueSuite((d for f in files
                          for d in load_items(f, Dialogue, check_dialogue, catalog, "dialogue")),
                         catalog)


def dialogue_cassette(dialogue: Dialogue, root: Path = DIALOGUE_CASSETTES) -> Path:
    """The cassette of a dialogue's oracle run."""
    return root / dialogue.apps[0] / f"{dialogue.id}.yaml"
