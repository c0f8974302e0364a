"""An agent in a dialogue: the user's turns one at a time, on the live (or replayed) apps.

The user is scripted, as in MTU-Bench: the dialogue's fixed turns, in order, whatever
the agent did before. ``evaluate_dialogues`` runs an agent (or the oracle) on many and
writes ``dialogues.jsonl`` and ``dialogues.json`` into the run folder. For each one:

1. the oracle runs the gold turns (``run_dialogue``, rolled back), so a real-time or
   open turn is scored against what the apps return at run time, at that turn;
2. the agent holds one conversation (``ConversingAgent.start``) inside one rollback
   scope over the apps it is offered; each user turn is a ``reply``, with its calls in
   a trajectory of its own, and an operational turn's state checks are read before and
   after it, so a later turn passes only on the state the agent's earlier turns left;
3. every write is undone and each self-hosted app's state verified; each turn is
   judged (``turn_right``) and the dialogue scored (``score_dialogue``).

A turn the agent cannot answer (its model failed) is wrong, and the turns after it are
still asked, as a user would go on.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolbed.apis import Catalog
from toolbed.connectors import Mode, RunningApp, Runtime, parse_mode
from toolbed.errors import AgentError, TaskError, ToolbedError
from toolbed.rollback import RollbackScope
from toolbed.tasks._dialogue import (
    DIALOGUE_CASSETTES,
    GRANULARITIES,
    Dialogue,
    dialogue_cassette,
)

from ._oracle import check_state, run_dialogue
from ._trajectory import Call, ToolBox, Trajectory
from .agents import Agent, ConversingAgent
from .metrics import embedding_similarity
from .scoring import score_dialogue, turn_right

__all__ = ["DialogueResult", "dialogue_summary", "evaluate_dialogues", "oracle_dialogue",
           "run_agent_dialogue"]


@dataclass
class DialogueResult:
    """An agent's dialogue: each turn's trajectory and verdict, and the scores."""

    dialogue: Dialogue
    turns: list[Trajectory] = field(default_factory=list)
    right: list[bool] = field(default_factory=list)
    scores: dict[str, float] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    @property
    def success(self) -> bool:
        """Every turn right, and nothing went wrong around them."""
        return bool(self.right) and all(self.right) and not self.problems

    def row(self) -> dict[str, Any]:
        """The result as one line of ``dialogues.jsonl``."""
        d = self.dialogue
        return {"dialogue": d.id, "apps": d.apps, "granularity": d.granularity,
                "split": d.split, "category": d.category, "turns": len(d.turns),
                "success": self.success, "right": self.right, "scores": self.scores,
                "problems": self.problems,
                "trajectories": [t.model_dump(mode="json") for t in self.turns]}


def run_agent_dialogue(
    runtime: Runtime, agent: Agent, dialogue: Dialogue, offered: Iterable[str],
    similarity: Callable[[str, str], float] | None = None,
) -> DialogueResult:
    """Run ``agent`` through ``dialogue`` with ``offered`` tools (see the module's
    docstring)."""
    if not isinstance(agent, ConversingAgent):
        raise AgentError(f"the {agent.name} agent cannot hold a dialogue (it has no "
                         "start(tools)); use the embedded or a langchain agent")
    result = DialogueResult(dialogue)
    similarity = similarity or embedding_similarity()     # loads a model only if needed
    reference = run_dialogue(runtime, dialogue)
    if not reference.ok:
        result.problems.append("the reference run failed: " + reference.summary())
    catalog = runtime.catalog
    offered = list(dict.fromkeys(offered))
    apps = sorted({catalog.app_of(catalog.api(a)).app for a in offered} | set(dialogue.apps))
    scope = RollbackScope(runtime, task_id=dialogue.id, allow_irreversible=dialogue.irreversible,
                          verify=[a for a in apps if catalog.app(a).tier == "selfhosted"])
    with scope:
        tools = ToolBox(scope, offered, Trajectory())
        conversation = agent.start(tools)
        for turn, gold in zip(dialogue.turns, reference.turns, strict=True):
            tools.trajectory = Trajectory(offered=list(tools.offered))
            checks = turn.answer.state if turn.answer is not None and \
                turn.answer.type == "operational" else []
            before = check_state(scope, checks) if checks else []
            try:
                conversation.reply(turn.query)
            except Exception as exc:        # the agent failed: this turn is wrong
                tools.trajectory.error = f"the agent failed: {type(exc).__name__}: {exc}"
            after = check_state(scope, checks) if checks else []
            result.turns.append(tools.trajectory)
            result.right.append(turn_right(turn, tools.trajectory, gold.expected, before,
                                           after, similarity))
    if scope.report is not None and not scope.report.clean:
        result.problems.append(scope.report.summary())
    result.scores = score_dialogue(dialogue, result.turns, result.right)
    return result


def oracle_dialogue(runtime: Runtime, dialogue: Dialogue) -> DialogueResult:
    """The gold turns as a result, scored like an agent's (the upper bound: all 1.0)."""
    run = run_dialogue(runtime, dialogue)
    result = DialogueResult(dialogue, problems=list(run.problems))
    for turn in run.turns:
        result.turns.append(Trajectory(
            calls=[Call(api=s.api_id, args=s.args, status=s.observation.status,
                        ok=s.observation.ok) for s in turn.steps],
            answer=turn.answer, steps=len(turn.steps)))
        result.right.append(turn.passed and not turn.problems)
        result.problems += [f"turn {turn.number}: {p}" for p in turn.problems]
    result.scores = score_dialogue(dialogue, result.turns, result.right)
    return result


def evaluate_dialogues(
    catalog: Catalog, agent: Agent, dialogues: Sequence[Dialogue], run_dir: str | Path,
    mode: Mode | str = Mode.LIVE, tools: str = "gold", cassettes: str | Path | None = None,
    apps: Mapping[str, RunningApp] | None = None,
    advance: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """Run ``agent`` on each dialogue, each in its own cassette, and write
    ``<run_dir>/dialogues.jsonl`` (one row a dialogue) and ``dialogues.json`` (the means
    by granularity); return the latter. ``tools``: ``gold`` (the dialogue's APIs) or
    ``apps`` (every API of its apps). The oracle replays ``cassettes/dialogues``."""
    mode, run_dir = parse_mode(mode), Path(run_dir)
    oracle = agent.name == "oracle"
    if tools not in ("gold", "apps"):
        raise TaskError(f"dialogues offer --tools gold or apps, not {tools!r}")
    folder = Path(cassettes) if cassettes else (
        DIALOGUE_CASSETTES if oracle and mode.offline else run_dir / "cassettes")
    run_dir.mkdir(parents=True, exist_ok=True)
    rows = []
    for dialogue in dialogues:
        offered = [s.api for s in dialogue.chain] if tools == "gold" else [
            a.id for name in dialogue.apps for a in catalog.app(name).apis]
        cassette = (dialogue_cassette(dialogue, folder) if oracle
                    else folder / f"{dialogue.id}.yaml") if mode.uses_cassette else None
        try:
            with Runtime(catalog, mode=mode, cassette=cassette, apps=apps) as runtime:
                result = oracle_dialogue(runtime, dialogue) if oracle else \
                    run_agent_dialogue(runtime, agent, dialogue, offered)
        except ToolbedError as exc:          # an app down, a cassette missing...
            result = DialogueResult(dialogue, problems=[str(exc)])
            result.scores = score_dialogue(dialogue, [], [False] * len(dialogue.turns))
        rows.append(result.row())
        if advance is not None:
            advance()
    with (run_dir / "dialogues.jsonl").open("w", encoding="utf-8") as out:
        out.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    summary = dialogue_summary(rows, agent=agent.name, mode=mode.value, tools=tools)
    (run_dir / "dialogues.json").write_text(json.dumps(summary, indent=2) + "\n",
                                            encoding="utf-8")
    return summary


def dialogue_summary(rows: Sequence[dict[str, Any]], **spec: Any) -> dict[str, Any]:
    """Success and the mean of every score, over all dialogues and by granularity."""
    def means(group: Sequence[dict[str, Any]]) -> dict[str, Any]:
        names = sorted({n for r in group for n in r["scores"]})
        return {"dialogues": len(group),
                "success": round(sum(r["success"] for r in group) / len(group), 4),
                **{n: round(sum(r["scores"][n] for r in group if n in r["scores"]) /
                            max(1, sum(n in r["scores"] for r in group)), 4) for n in names}}
    kinds = [k for k in GRANULARITIES if any(r["granularity"] == k for r in rows)]
    return {**spec, "all": means(rows) if rows else {"dialogues": 0},
            "by_granularity": {k: means([r for r in rows if r["granularity"] == k])
                               for k in kinds},
            "problems": sum(bool(r["problems"]) for r in rows)}
