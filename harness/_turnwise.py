"""Turn by turn with teacher forcing, as MTU-Bench scores a dialogue's turns.

For each turn of a dialogue the model is given the gold history up to it: every earlier
user turn, the gold calls that answered it with what each returned on the live app
(read back from the dialogue's cassette), and the oracle's answer; then the user's turn.
Its next move is scored, and nothing is executed, so a turn's score never depends on
the model's earlier moves:

- a turn with gold calls: its first call against the first gold call (MTU-Bench's TS,
  the tool; PS, the tool and every argument);
- a turn that ``asks``: the move is a question, with no call;
- a turn answered from what earlier turns read (no calls): its text matches the answer.

``turn`` is the share of turns whose move was right (a call turn: the right tool with
the right arguments). The model's own HTTP traffic is recorded and replayed like a run's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from toolbed.apis import Catalog
from toolbed.connectors import Mode, Runtime, api_id_of, openai_tool, running_at
from toolbed.tasks._dialogue import (
    DIALOGUE_CASSETTES,
    GRANULARITIES,
    Dialogue,
    Turn,
    dialogue_cassette,
)

from ._oracle import DialogueRun, TurnRun, run_dialogue
from ._stepwise import _ask, _mean, gold_call_messages
from ._trajectory import Trajectory
from .agents._agents import SYSTEM_PROMPT, _text, prompt_in
from .metrics import parameter_selection, tool_selection
from .scoring import turn_right

__all__ = ["TURN_SCORES", "run_turnwise", "turn_history", "turn_means"]

TURN_SCORES = ("turn", "ts", "ps", "asks")
"""The scores of a row of ``run_turnwise``, as far as its dialogue has such turns."""


def turn_history(run: DialogueRun, upto: int, observation_cap: int = 6000
                 ) -> list[BaseMessage]:
    """The gold conversation before turn ``upto`` (from 0), then that turn's query."""
    messages: list[BaseMessage] = [SystemMessage(prompt_in(SYSTEM_PROMPT, run.dialogue.lang))]
    for turn in run.turns[:upto]:
        messages += [HumanMessage(turn.turn.query),
                     *gold_call_messages(turn.steps, observation_cap, f"call_{turn.number}"),
                     AIMessage(turn.answer)]
    return [*messages, HumanMessage(run.turns[upto].turn.query)]


def _move(turn: TurnRun, reply: AIMessage | None,
          similarity: Callable[[str, str], float] | None) -> dict[str, float]:
    """The scores of the model's move on one turn."""
    calls = [] if reply is None else reply.tool_calls
    text = "" if reply is None else _text(reply.content)
    gold: Turn = turn.turn
    if gold.chain:
        first = turn.steps[0]
        tool = api_id_of(calls[0]["name"]) if calls else None
        args = calls[0]["args"] if calls else None
        ts = tool_selection(tool, first.api_id)
        ps = parameter_selection(tool, args, first.api_id, first.args)
        return {"right": ps, "ts": ts, "ps": ps}
    right = float(not calls and turn_right(gold, Trajectory(answer=text), turn.expected,
                                           [], [], similarity))
    return {"right": right, **({"asks": right} if gold.asks is not None else {})}


def run_turnwise(
    catalog: Catalog, dialogues: Sequence[Dialogue], model: BaseChatModel,
    mode: Mode | str = "live", cassettes: str | Path | None = None,
    dialogue_cassettes: str | Path = DIALOGUE_CASSETTES, tools: str = "gold",
    similarity: Callable[[str, str], float] | None = None, observation_cap: int = 6000,
) -> list[dict[str, Any]]:
    """Score ``model`` turn by turn on each dialogue (see the module); one row each.

    The gold history comes from the dialogues' cassettes (offline). ``tools``: ``gold``
    (the dialogue's APIs) or ``apps`` (every API of its apps). In ``record`` / ``replay``
    mode the model's own traffic goes to / comes from ``cassettes/<id>.turns.yaml``."""
    mode = Mode(mode)
    rows = []
    for dialogue in dialogues:
        with Runtime(catalog, mode=Mode.REPLAY,
                     cassette=dialogue_cassette(dialogue, Path(dialogue_cassettes))) as replay:
            run = run_dialogue(replay, dialogue)
            clock = replay.clock              # the gold turns' "now"
        offered = list(dict.fromkeys(s.api for s in dialogue.chain)) if tools == "gold" else [
            a.id for name in dialogue.apps for a in catalog.app(name).apis]
        bound = model.bind_tools([openai_tool(catalog.api(a)) for a in offered])
        cassette = Path(cassettes) / f"{dialogue.id}.turns.yaml" if cassettes else None
        moves = []
        with Runtime(catalog, mode=mode, cassette=cassette, apps={}), running_at(clock):
            for n, turn in enumerate(run.turns):
                reply = _ask(bound, turn_history(run, n, observation_cap))
                moves.append(_move(turn, reply, similarity))
        scores = {name: _mean([m[name] for m in moves if name in m])
                  for name in ("ts", "ps", "asks") if any(name in m for m in moves)}
        rows.append({"dialogue": dialogue.id, "granularity": dialogue.granularity,
                     "turns": len(dialogue.turns),
                     **{k: round(v, 4) for k, v in
                        {"turn": _mean([m["right"] for m in moves]), **scores}.items()}})
    return rows


def turn_means(rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each score's mean over the rows of ``run_turnwise`` that have it, over all of them
    and by granularity, with the number of dialogues."""
    groups = {"all": list(rows), **{k: [r for r in rows if r["granularity"] == k]
                                    for k in GRANULARITIES
                                    if any(r["granularity"] == k for r in rows)}}
    return {kind: {"dialogues": len(group), **{
        n: round(sum(r[n] for r in group if n in r) / sum(n in r for r in group), 4)
        for n in TURN_SCORES if any(n in r for r in group)}} for kind, group in groups.items()}
