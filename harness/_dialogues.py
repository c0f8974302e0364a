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

With a ``SimulatedUser`` (``run_simulated_dialogue``) a chat model plays the user from
the turns as its hidden goal, until it says STOP; the oracle's run also reads every
state check at its end, the agent's run is judged by whether it reached the same end
state and gave the answers asked for (``goal_met``), and the user's own mistakes are
counted apart (``user_errors``). Trials (``trials``) give pass^k per granularity.
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

from ._oracle import check_state, end_checks, run_dialogue
from ._report import dialogue_html, dialogue_markdown, html_page
from ._trajectory import Call, ToolBox, Trajectory
from ._user import GREETING, SimulatedUser, UserErrors, user_errors
from .agents import Agent, ConversingAgent
from .metrics import embedding_similarity, pass_hat_k
from .scoring import goal_met, score_dialogue, score_simulated, turn_errors, turn_right

__all__ = ["DialogueResult", "dialogue_summary", "evaluate_dialogues", "oracle_dialogue",
           "run_agent_dialogue", "run_simulated_dialogue"]


@dataclass
class DialogueResult:
    """An agent's dialogue: each turn's trajectory and verdict, and the scores."""

    dialogue: Dialogue
    turns: list[Trajectory] = field(default_factory=list)
    right: list[bool] = field(default_factory=list)
    scores: dict[str, float] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    errors: list[dict[str, int]] = field(default_factory=list)
    """Per turn of a scripted run, the error taxonomy's counts (``turn_errors``)."""
    trial: int = 0
    said: list[str] | None = None
    """A simulated user's messages (None: the user was scripted); ``right`` is then
    per request of the goal, not per message."""
    user: UserErrors | None = None

    @property
    def success(self) -> bool:
        """Every turn right, and nothing went wrong around them."""
        return bool(self.right) and all(self.right) and not self.problems

    def row(self) -> dict[str, Any]:
        """The result as one line of ``dialogues.jsonl``."""
        d = self.dialogue
        row = {"dialogue": d.id, "trial": self.trial, "apps": d.apps,
               "granularity": d.granularity, "split": d.split, "category": d.category,
               "lang": d.lang,
               "turns": len(d.turns), "user": "scripted" if self.said is None else "simulated",
               "success": self.success, "right": self.right, "scores": self.scores,
               "problems": self.problems, "errors": self.errors,
               "trajectories": [t.model_dump(mode="json") for t in self.turns]}
        if self.said is not None:
            row["said"] = self.said
        if self.user is not None:
            row["user_errors"] = {"stopped_early": self.user.stopped_early,
                                  "left_goal": self.user.left_goal,
                                  "leaked": self.user.leaked, "unmade": self.user.unmade}
        return row


def run_agent_dialogue(
    runtime: Runtime, agent: Agent, dialogue: Dialogue, offered: Iterable[str],
    similarity: Callable[[str, str], float] | None = None,
) -> DialogueResult:
    """Run ``agent`` through ``dialogue`` with ``offered`` tools (see the module's
    docstring)."""
    conversing = _conversing(agent)
    result = DialogueResult(dialogue)
    similarity = similarity or embedding_similarity()     # loads a model only if needed
    reference = run_dialogue(runtime, dialogue)
    if not reference.ok:
        result.problems.append("the reference run failed: " + reference.summary())
    scope, tools = _scope(runtime, dialogue, offered)
    with scope:
        conversation = conversing.start(tools, lang=dialogue.lang)
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
            result.errors.append(turn_errors(turn, tools.trajectory, result.right[-1]))
    if scope.report is not None and not scope.report.clean:
        result.problems.append(scope.report.summary())
    result.scores = score_dialogue(dialogue, result.turns, result.right)
    return result


def run_simulated_dialogue(
    runtime: Runtime, agent: Agent, user: SimulatedUser, dialogue: Dialogue,
    offered: Iterable[str], similarity: Callable[[str, str], float] | None = None,
) -> DialogueResult:
    """Run ``agent`` with ``user`` playing the user of ``dialogue`` from its turns as
    a hidden goal (see the module's docstring)."""
    conversing = _conversing(agent)
    similarity = similarity or embedding_similarity()
    reference = run_dialogue(runtime, dialogue, final=True)
    result = DialogueResult(dialogue, said=[])
    if not reference.ok:
        result.problems.append("the reference run failed: " + reference.summary())
    catalog = runtime.catalog
    scope, tools = _scope(runtime, dialogue, offered)
    replies: list[str] = []
    with scope:
        conversation = conversing.start(tools, lang=dialogue.lang)
        session = user.start(dialogue)
        message = session.say(GREETING)
        while message is not None:
            tools.trajectory = Trajectory(offered=list(tools.offered))
            try:
                conversation.reply(message)
            except Exception as exc:        # the agent failed: the user hears nothing
                tools.trajectory.error = f"the agent failed: {type(exc).__name__}: {exc}"
            result.turns.append(tools.trajectory)
            replies.append(tools.trajectory.answer or "")
            message = session.say(replies[-1])
        final = check_state(scope, end_checks(dialogue))
    if session.error:
        result.problems.append(session.error)
    if scope.report is not None and not scope.report.clean:
        result.problems.append(scope.report.summary())
    result.said = list(session.said)
    calls = [c for t in result.turns for c in t.calls]
    expected = [t.expected for t in reference.turns]
    result.right = goal_met(dialogue, calls, replies, final, reference.final, expected,
                            lambda api: catalog.api(api).effect == "write", similarity)
    result.user = user_errors(dialogue, result.said, replies, session.stopped, similarity)
    result.scores = {**score_simulated(dialogue, calls, result.right),
                     "user_turns": float(len(result.said))}
    return result


def _conversing(agent: Agent) -> ConversingAgent:
    if not isinstance(agent, ConversingAgent):
        raise AgentError(f"the {agent.name} agent cannot hold a dialogue (it has no "
                         "start(tools)); use the embedded or a langchain agent")
    return agent


def _scope(runtime: Runtime, dialogue: Dialogue, offered: Iterable[str]
           ) -> tuple[RollbackScope, ToolBox]:
    """The dialogue's one rollback scope (verifying the self-hosted apps it may touch)
    and the tool box of the ``offered`` APIs over it."""
    catalog = runtime.catalog
    offered = list(dict.fromkeys(offered))
    apps = sorted({catalog.app_of(catalog.api(a)).app for a in offered} | set(dialogue.apps))
    scope = RollbackScope(runtime, task_id=dialogue.id, allow_irreversible=dialogue.irreversible,
                          verify=[a for a in apps if catalog.app(a).local])
    return scope, ToolBox(scope, offered, Trajectory())


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
        result.errors.append(turn_errors(turn.turn, result.turns[-1], result.right[-1]))
        result.problems += [f"turn {turn.number}: {p}" for p in turn.problems]
    result.scores = score_dialogue(dialogue, result.turns, result.right)
    return result


def evaluate_dialogues(
    catalog: Catalog, agent: Agent, dialogues: Sequence[Dialogue], run_dir: str | Path,
    mode: Mode | str = Mode.LIVE, tools: str = "gold", cassettes: str | Path | None = None,
    apps: Mapping[str, RunningApp] | None = None,
    advance: Callable[[], None] | None = None,
    user: SimulatedUser | None = None, trials: int = 1,
) -> dict[str, Any]:
    """Run ``agent`` on each dialogue ``trials`` times, each run in its own cassette,
    and write ``<run_dir>/dialogues.jsonl`` (one row a run), ``dialogues.json`` (the
    means by granularity, pass^k) and ``dialogues.md``; return the summary. ``tools``:
    ``gold`` (the dialogue's APIs) or ``apps`` (every API of its apps); ``user``: a
    simulated user instead of the scripted turns. The oracle replays
    ``cassettes/dialogues``."""
    mode, run_dir = parse_mode(mode), Path(run_dir)
    oracle = agent.name == "oracle"
    if tools not in ("gold", "apps"):
        raise TaskError(f"dialogues offer --tools gold or apps, not {tools!r}")
    if oracle and (user is not None or trials != 1):
        raise TaskError("the oracle plays each dialogue's gold turns once: a simulated "
                        "user and trials are for agents (--agent embedded, langchain)")
    folder = Path(cassettes) if cassettes else (
        DIALOGUE_CASSETTES if oracle and mode.offline else run_dir / "cassettes")
    run_dir.mkdir(parents=True, exist_ok=True)
    rows = []
    for dialogue in dialogues:
        offered = [s.api for s in dialogue.chain] if tools == "gold" else [
            a.id for name in dialogue.apps for a in catalog.app(name).apis]
        for trial in range(trials):
            cassette = (dialogue_cassette(dialogue, folder) if oracle else
                        folder / f"{dialogue.id}.{trial}.yaml") if mode.uses_cassette else None
            try:
                with Runtime(catalog, mode=mode, cassette=cassette, apps=apps) as runtime:
                    if oracle:
                        result = oracle_dialogue(runtime, dialogue)
                    elif user is not None:
                        result = run_simulated_dialogue(runtime, agent, user, dialogue, offered)
                    else:
                        result = run_agent_dialogue(runtime, agent, dialogue, offered)
            except ToolbedError as exc:          # an app down, a cassette missing...
                result = DialogueResult(dialogue, problems=[str(exc)],
                                        said=None if user is None else [])
                result.scores = score_dialogue(dialogue, [], [False] * len(dialogue.turns))
            result.trial = trial
            rows.append(result.row())
            if advance is not None:
                advance()
    with (run_dir / "dialogues.jsonl").open("w", encoding="utf-8") as out:
        out.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    summary = dialogue_summary(rows, agent=agent.name, mode=mode.value, tools=tools,
                               user="scripted" if user is None else "simulated",
                               user_model=None if user is None else user.model_name,
                               trials=trials)
    (run_dir / "dialogues.json").write_text(json.dumps(summary, indent=2) + "\n",
                                            encoding="utf-8")
    (run_dir / "dialogues.md").write_text(dialogue_markdown(summary), encoding="utf-8")
    if not (run_dir / "results.db").exists():    # --turns all: the tasks' report adds it
        (run_dir / "report.html").write_text(html_page(
            dialogue_markdown(summary).splitlines()[0].lstrip("# "), dialogue_html(summary)),
            encoding="utf-8")
    return summary


def dialogue_summary(rows: Sequence[dict[str, Any]], **spec: Any) -> dict[str, Any]:
    """Success, the mean of every score and pass^k (k up to the fewest trials of a
    dialogue), over all runs, by granularity and by language; with a simulated user,
    how often the user itself went wrong."""
    def means(group: Sequence[dict[str, Any]]) -> dict[str, Any]:
        names = sorted({n for r in group for n in r["scores"]})
        trials: dict[str, list[bool]] = {}
        for r in group:
            trials.setdefault(r["dialogue"], []).append(bool(r["success"]))
        most = min(len(t) for t in trials.values())
        return {"dialogues": len(trials), "runs": len(group),
                "success": round(sum(r["success"] for r in group) / len(group), 4),
                **{n: round(sum(r["scores"][n] for r in group if n in r["scores"]) /
                            max(1, sum(n in r["scores"] for r in group)), 4) for n in names},
                "pass_hat_k": {str(k): round(pass_hat_k(list(trials.values()), k), 4)
                               for k in range(1, most + 1)}}
    kinds = [k for k in GRANULARITIES if any(r["granularity"] == k for r in rows)]
    summary = {**spec, "all": means(rows) if rows else {"dialogues": 0, "runs": 0},
               "by_granularity": {k: means([r for r in rows if r["granularity"] == k])
                                  for k in kinds},
               "by_lang": {lang: means([r for r in rows if r.get("lang", "en") == lang])
                           for lang in sorted({r.get("lang", "en") for r in rows})},
               "problems": sum(bool(r["problems"]) for r in rows)}
    errors = [e for r in rows for e in r.get("errors", [])]
    if errors:
        summary["errors"] = {name: sum(e.get(name, 0) for e in errors)
                             for name in dict.fromkeys(n for e in errors for n in e)}
    simulated = [r for r in rows if "user_errors" in r]
    if simulated:
        summary["user_errors"] = {
            name: round(sum(bool(r["user_errors"][name]) for r in simulated) / len(simulated), 4)
            for name in ("stopped_early", "left_goal", "leaked")}
        summary["user_errors"]["any"] = round(sum(
            any(r["user_errors"][n] for n in ("stopped_early", "left_goal", "leaked"))
            for r in simulated) / len(simulated), 4)
    return summary
