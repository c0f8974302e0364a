"""Reports of a run: ``results.jsonl`` (one line per task and trial), ``summary.json``,
``summary.md`` and ``report.html`` (the summary with its plots), all made from the run's
``results.db``.

The summary holds the mean of every score, CToolEval's tables (tool matching rate and
completion per scenario and answer type), ToolEyes' five capabilities per ToolEyes
scenario, the means per app, the error counts, pass^k
for every k up to the number of trials, and the retrieval misses: per answer type, how
many failed runs were never offered one of their gold tools, so that a score can be
split between the agent and the retriever that chose its tools.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from ._runlog import RunLog
from .metrics import ERRORS, by_scenario_and_type, pass_hat_k

__all__ = ["dialogue_html", "dialogue_markdown", "html_page", "html_report", "load_results",
           "markdown", "per_task", "plot_runs", "retrieval_misses", "summarize",
           "tooleyes_markdown", "tooleyes_table", "write_report"]


def load_results(run_dir: str | Path) -> list[dict[str, Any]]:
    """A run's result rows as plain dicts, ordered by task and trial."""
    return [row.model_dump() for row in RunLog(run_dir).rows()]


def _mean(values: list[float]) -> float:
    return round(sum(values) / len(values), 4) if values else 0.0


def per_task(rows: list[dict[str, Any]], name: str) -> dict[str, float]:
    """Each task's ``name`` score (``success``, or one of ``summarize``'s metrics), the
    mean over its trials; a task none of whose runs has that score is left out. Two runs'
    are what ``toolbed compare --bootstrap`` pairs task by task."""
    values: dict[str, list[float]] = defaultdict(list)
    for row in rows:
        value = float(row["success"]) if name == "success" else row["scores"].get(name)
        if value is not None:
            values[row["task"]].append(float(value))
    return {task: sum(v) / len(v) for task, v in values.items()}


def summarize(rows: list[dict[str, Any]], meta: dict[str, Any] | None = None) -> dict[str, Any]:
    """Means, tables, error counts and pass^k over a run's rows."""
    scores: dict[str, list[float]] = defaultdict(list)
    for row in rows:
        for name, value in row["scores"].items():
            scores[name].append(value)
    by_app: dict[str, list[dict[str, Any]]] = defaultdict(list)
    by_lang: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_app[row["app"]].append(row)
        by_lang[row.get("lang") or "en"].append(row)
    trials: dict[str, list[bool]] = defaultdict(list)
    for row in rows:
        trials[row["task"]].append(bool(row["success"]))
    most = min((len(t) for t in trials.values()), default=0)
    return {
        **(meta or {}),
        "tasks": len(trials), "runs": len(rows),
        "success": _mean([float(r["success"]) for r in rows]),
        "metrics": {name: _mean(values) for name, values in sorted(scores.items())},
        "tool_matching": by_scenario_and_type(
            (r["scenario"], r["type"], r["scores"]["tool_match"]) for r in rows),
        "completion": by_scenario_and_type(
            (r["scenario"], r["type"], r["scores"]["completion"]) for r in rows),
        "per_app": {app: _means(rs) for app, rs in sorted(by_app.items())},
        "per_lang": {lang: _means(rs) for lang, rs in sorted(by_lang.items())},
        "errors": {e: sum(r["errors"].get(e, 0) for r in rows) for e in ERRORS},
        "pass_hat_k": {str(k): round(pass_hat_k(list(trials.values()), k), 4)
                       for k in range(1, most + 1)} if trials else {},
        "tooleyes": tooleyes_table(rows),
        "problems": sum(1 for r in rows if r["problems"]),
        "problem_runs": [{"task": r["task"], "trial": r["trial"], "problems": r["problems"]}
                         for r in rows if r["problems"]],
        "retrieval_misses": retrieval_misses(rows),
    }


def _means(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Runs, success, completion and tool matching of a group of rows (an app, a language)."""
    return {"runs": len(rows), "success": _mean([float(r["success"]) for r in rows]),
            "completion": _mean([r["scores"]["completion"] for r in rows]),
            "tool_match": _mean([r["scores"]["tool_match"] for r in rows])}


def language_lines(summary: dict[str, Any]) -> list[str]:
    """Scores by the language the tasks were asked in, as a Markdown table."""
    per_lang = summary.get("per_lang") or {}
    return ["## By language", "",
            "| language | runs | success % | completion % | tool matching % |",
            "|---|---|---|---|---|",
            *(f"| {lang} | {cell['runs']} | {100 * cell['success']:.1f} | "
              f"{100 * cell['completion']:.1f} | {100 * cell['tool_match']:.1f} |"
              for lang, cell in per_lang.items())] if per_lang else []


_TOOLEYES = ("fa", "ic", "bp", "ts", "ao", "overall", "t_reality", "a_pass")


def tooleyes_table(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """ToolEyes' scores (``tooleyes_*``) averaged per scenario (the task's ToolEyes
    category) and over all runs; ``judged``: whether a judge rated the judged parts."""
    scored = [r for r in rows if "tooleyes_fa" in r["scores"]]

    def means(group: list[dict[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {"runs": len(group)}
        for name in _TOOLEYES:
            values = [r["scores"][f"tooleyes_{name}"] for r in group
                      if f"tooleyes_{name}" in r["scores"]]
            if values:
                out[name] = _mean(values)
        return out

    scenarios = sorted({r.get("category") or "-" for r in scored})
    return {"judged": any("tooleyes_ic" in r["scores"] for r in scored),
            "by_scenario": {s: means([r for r in scored if (r.get("category") or "-") == s])
                            for s in scenarios},
            "all": means(scored)} if scored else {}


def retrieval_misses(rows: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Per answer type (and ``all``): the failed runs, and how many of them lacked a gold
    tool among the tools the agent was offered (``gold_offered`` below 1)."""
    out: dict[str, dict[str, int]] = {}
    for row in rows:
        if row["success"]:
            continue
        missed = int(row["scores"].get("gold_offered", 1.0) < 1.0)
        for key in (row["type"], "all"):
            cell = out.setdefault(key, {"failed": 0, "missed": 0})
            cell["failed"] += 1
            cell["missed"] += missed
    return dict(sorted(out.items(), key=lambda item: item[0] == "all"))


def markdown(summary: dict[str, Any]) -> str:
    """The summary as Markdown: headline, CToolEval tables, other metrics, errors."""
    agent = summary.get("agent", "agent") + (f" ({summary['model']})" if summary.get("model")
                                             else "")
    lines = [f"# {agent} on {summary['tasks']} tasks "
             f"({summary['runs']} runs, mode {summary.get('mode', '?')}, "
             f"tools {summary.get('tools', '?')}"
             + (f", via {summary['via']}" if summary.get("via", "direct") != "direct" else "")
             + ")", "",
             f"Success: {100 * summary['success']:.1f}%", ""]
    lines += [*language_lines(summary), ""] if summary.get("per_lang") else []
    types = ("fixed", "open", "operational", "realtime")
    for title, key in (("Tool matching rate", "tool_matching"), ("Completion", "completion")):
        table = summary[key]
        lines += [f"## {title} (%)", "",
                  "| scenario | " + " | ".join(types) + " |", "|---" * (len(types) + 1) + "|"]
        for scenario in ("single", "multi"):
            cells = table.get(scenario, {})
            lines.append(f"| {scenario} | " + " | ".join(
                f"{100 * cells[t]:.1f}" if t in cells else "-" for t in types) + " |")
        lines += ["", f"All tasks: {100 * table['all']['all']:.1f}", ""]
    lines += ["## All metrics (mean over runs)", "", "| metric | value |", "|---|---|"]
    lines += [f"| {name} | {value:.4f} |" for name, value in summary["metrics"].items()]
    if summary["pass_hat_k"]:
        lines += ["", "pass^k: " + ", ".join(f"k={k}: {v:.3f}"
                                             for k, v in summary["pass_hat_k"].items())]
    lines += tooleyes_markdown(summary.get("tooleyes") or {}, summary.get("judge"))
    lines += ["", "## Errors", "", "| error | count |", "|---|---|"]
    lines += [f"| {name} | {count} |" for name, count in summary["errors"].items()]
    lines += ["", "## Retrieval misses", "",
              "Failed runs whose offered tools lacked a gold tool: the retriever's share.", "",
              "| answer type | failed | gold tool not offered |", "|---|---|---|"]
    lines += [f"| {kind} | {cell['failed']} | {cell['missed']} |"
              for kind, cell in summary.get("retrieval_misses", {}).items()]
    if summary.get("dialogues"):
        talk = dialogue_markdown(summary["dialogues"]).splitlines()
        lines += ["", "## Dialogues", "", talk[0].lstrip("# ") + ".", *talk[1:]]
    if summary.get("problem_runs"):
        lines += ["", "## Problems", "",
                  "Runs that went wrong besides the agent's own mistakes (scored as failed).",
                  "", "| task | trial | problem |", "|---|---|---|"]
        lines += [f"| {r['task']} | {r['trial']} | "
                  + "; ".join(p.replace("|", "/").replace("\n", " ") for p in r["problems"])
                  + " |" for r in summary["problem_runs"]]
    return "\n".join(lines) + "\n"


_NO_JUDGE = ("IC, BP, TS and AO are rated by an LLM judge: run with `--judge` to score "
             "them. Without one they are left out, not counted as zero; the rule-based parts "
             "are shown (FA, tool reality, answered).")

_NO_SCORE = ("The judge ({judge}) gave no readable score (\"Evaluation Score: N\") for "
             "{parts}, so {they} left out, not counted as zero; the overall needs all five.")


def tooleyes_markdown(table: dict[str, Any], judge: str | None = None) -> list[str]:
    """ToolEyes' table (Eq. 1-6) as Markdown lines, per scenario; empty without scores.
    ``judge``: the judge's name, when the run had one."""
    if not table:
        return []
    names = [n for n in _TOOLEYES if n in table["all"]]
    lines = ["", "## ToolEyes' capabilities (%)", "",
             "| scenario | runs | " + " | ".join(names) + " |", "|---" * (len(names) + 2) + "|"]
    for scenario, cells in [*table["by_scenario"].items(), ("**all**", table["all"])]:
        lines.append(f"| {scenario} | {cells['runs']} | " + " | ".join(
            f"{100 * cells[n]:.1f}" if n in cells else "-" for n in names) + " |")
    missing = [n.upper() for n in ("ic", "bp", "ts", "ao") if n not in table["all"]]
    if judge is None:
        lines += ["", _NO_JUDGE]
    elif missing:
        lines += ["", _NO_SCORE.format(judge=judge, parts=", ".join(missing),
                                       they="it is" if len(missing) == 1 else "they are")]
    return lines


def _figure(draw: Any) -> bytes:
    """A matplotlib figure drawn by ``draw(ax)``, as PNG bytes."""
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 3.6), dpi=100)
    try:
        draw(ax)
        ax.set_ylim(0, 100)
        ax.grid(axis="y", alpha=0.3)
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", bbox_inches="tight")
    finally:
        plt.close(fig)
    return buffer.getvalue()


def _inline(png: bytes) -> str:
    import base64

    return f'<img src="data:image/png;base64,{base64.b64encode(png).decode("ascii")}">'


def plot_runs(runs: dict[str, dict[str, float]], path: str | Path) -> Path:
    """Grouped bars of each run's metrics (0..1 shown as %), saved as a PNG."""
    names = sorted({n for scores in runs.values() for n in scores},
                   key=lambda n: (n not in ("success", "completion", "tool_match"), n))
    width = 0.8 / max(1, len(runs))

    def draw(ax: Any) -> None:
        for i, (run, scores) in enumerate(runs.items()):
            ax.bar([x + (i - (len(runs) - 1) / 2) * width for x in range(len(names))],
                   [100 * scores.get(n, 0.0) for n in names], width, label=run)
        ax.set_xticks(range(len(names)), names, rotation=45, fontsize=7)
        ax.set_ylabel("%")
        ax.legend(fontsize=7)

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(_figure(draw))
    return path


def html_report(summary: dict[str, Any], runs: list[dict[str, Any]] | None = None) -> str:
    """One self-contained HTML page: the Markdown summary's numbers and three plots
    (completion and tool matching per scenario and answer type; success per app), then
    each task's run (``runs``, the run's result rows): its calls, answer and problems,
    so that a person can see why a task failed."""
    import html

    types = ("fixed", "open", "operational", "realtime")

    def by_type(ax: Any) -> None:
        width = 0.2
        for i, (key, scenario) in enumerate([(k, s) for k in ("completion", "tool_matching")
                                             for s in ("single", "multi")]):
            cells = summary[key].get(scenario, {})
            ax.bar([t + (i - 1.5) * width for t in range(len(types))],
                   [100 * cells.get(name, 0.0) for name in types], width,
                   label=f"{key.replace('_', ' ')}, {scenario}")
        ax.set_xticks(range(len(types)), types)
        ax.set_ylabel("%")
        ax.legend(fontsize=7)

    def by_app(ax: Any) -> None:
        apps = list(summary["per_app"])
        ax.bar(apps, [100 * summary["per_app"][a]["success"] for a in apps])
        ax.set_ylabel("success %")
        ax.tick_params(axis="x", rotation=45, labelsize=7)

    rows = "".join(f"<tr><td>{html.escape(n)}</td><td>{v:.4f}</td></tr>"
                   for n, v in summary["metrics"].items())
    errors = "".join(f"<tr><td>{html.escape(n)}</td><td>{c}</td></tr>"
                     for n, c in summary["errors"].items())
    misses = "".join(f"<tr><td>{html.escape(kind)}</td><td>{cell['failed']}</td>"
                     f"<td>{cell['missed']}</td></tr>"
                     for kind, cell in summary.get("retrieval_misses", {}).items())
    dialogues = dialogue_html(summary["dialogues"]) if summary.get("dialogues") else ""
    tooleyes = _html_table(tooleyes_markdown(summary.get("tooleyes") or {},
                                             summary.get("judge")))
    return html_page(markdown(summary).splitlines()[0].lstrip("# "), f"""<p>Success: \
{100 * summary['success']:.1f}%</p>
<h2>By scenario and answer type</h2>{_inline(_figure(by_type))}
<h2>By app</h2>{_inline(_figure(by_app))}{_html_table(language_lines(summary))}
<h2>Metrics (mean over runs)</h2><table>{rows}</table>
<h2>Errors</h2><table>{errors}</table>
<h2>Retrieval misses</h2><p>Failed runs whose offered tools lacked a gold tool.</p>
<table><tr><th>answer type</th><th>failed</th><th>gold tool not offered</th></tr>{misses}
</table>{tooleyes}{dialogues}{task_runs_html(runs or [])}""")


def task_runs_html(rows: list[dict[str, Any]]) -> str:
    """Each run as a collapsed block: passed or not, then every call the agent made
    (its arguments, its outcome, the start of what came back and, for a write, what
    rollback did with it), its answer and the run's problems."""
    import html

    if not rows:
        return ""
    blocks = []
    for row in rows:
        trajectory = row.get("trajectory") or {}
        calls = "".join(
            f'<li class="call"><code class="api">{html.escape(str(c.get("api")))}</code> '
            f"<code>{html.escape(json.dumps(c.get('args') or {}, ensure_ascii=False))}</code>"
            f" &rarr; {_call_outcome(c)}"
            + (f'<pre class="observation">{html.escape(c["excerpt"])}</pre>'
               if c.get("excerpt") else "")
            + (f'<p class="undo">Rollback: {html.escape(c["undo"])}</p>'
               if c.get("undo") else "")
            + "</li>" for c in trajectory.get("calls") or [])
        problems = "".join(f"<li>{html.escape(p)}</li>" for p in row.get("problems") or [])
        mark = "passed" if row.get("success") else "failed"
        blocks.append(
            f'<details class="task-run" id="run-{html.escape(row["task"])}-{row["trial"]}">'
            f"<summary>{mark}: {html.escape(row['task'])} ({html.escape(row['app'])}, "
            f"{html.escape(row['type'])}), tool match {row.get('tool_match', 0):.2f}, "
            f"completion {row.get('completion', 0):.2f}</summary>"
            f"<p>Offered: {html.escape(', '.join(trajectory.get('offered') or []))}</p>"
            f"<ol>{calls or '<li>no call</li>'}</ol>"
            f"<p>Answer: {html.escape(row.get('answer') or '(none)')}</p>"
            + (f"<p>Problems:</p><ul>{problems}</ul>" if problems else "")
            + "</details>")
    return "<h2>Each task's run</h2>" + "".join(blocks)


def _call_outcome(call: dict[str, Any]) -> str:
    import html

    if call.get("error"):
        return "refused: " + html.escape(str(call["error"]))
    status = call.get("status")
    return f"status {status}" + ("" if call.get("ok") else " (failed)")


def write_report(run_dir: str | Path) -> dict[str, Any]:
    """Write results.jsonl, summary.json, summary.md and report.html into ``run_dir``
    from its run log; return the summary."""
    run_dir = Path(run_dir)
    rows = load_results(run_dir)
    with (run_dir / "results.jsonl").open("w", encoding="utf-8") as out:
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    spec = RunLog(run_dir).spec()
    summary = summarize(rows, spec.model_dump(exclude={"format"}) if spec else None)
    talks = run_dir / "dialogues.json"           # --turns all ran the dialogues first
    if talks.is_file():
        summary["dialogues"] = json.loads(talks.read_text(encoding="utf-8"))
    (run_dir / "summary.json").write_text(json.dumps(summary, indent=2) + "\n",
                                          encoding="utf-8")
    (run_dir / "summary.md").write_text(markdown(summary), encoding="utf-8")
    (run_dir / "report.html").write_text(html_report(summary, rows), encoding="utf-8")
    return summary


_DIALOGUE_SCORES = ("success", "goal", "sr", "ats", "sats", "tpr", "ts", "ps", "tn", "to",
                    "tool_match", "user_turns")


def _dialogue_groups(summary: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The rows of a dialogue table: all runs, each granularity, each language."""
    return {"all": summary["all"], **summary["by_granularity"],
            **{f"in {lang}": g for lang, g in summary.get("by_lang", {}).items()}}


def dialogue_markdown(summary: dict[str, Any]) -> str:
    """A dialogue summary (``dialogue_summary``) as Markdown: the scores by granularity
    and language, pass^k, and the simulated user's own errors."""
    groups = _dialogue_groups(summary)
    names = [n for n in _DIALOGUE_SCORES if any(n in g for g in groups.values())]
    lines = [f"# {summary.get('agent', 'agent')} on {summary['all']['dialogues']} dialogues "
             f"({summary['all']['runs']} runs, mode {summary.get('mode', '?')}, user "
             f"{summary.get('user', 'scripted')}, tools {summary.get('tools', '?')})", "",
             "| dialogues of | dialogues | " + " | ".join(names) + " |",
             "|---" * (len(names) + 2) + "|"]
    lines += [f"| {kind} | {g['dialogues']} | " + " | ".join(
        f"{g[n]:.3f}" if n in g else "-" for n in names) + " |" for kind, g in groups.items()]
    passk = summary["all"].get("pass_hat_k", {})
    if len(passk) > 1:
        lines += ["", "pass^k: " + ", ".join(f"k={k}: {v:.3f}" for k, v in passk.items())]
    if summary.get("errors"):
        lines += ["", "## Errors, summed over turns", "", "| error | count |", "|---|---|"]
        lines += [f"| {name} | {count} |" for name, count in summary["errors"].items()]
    if "user_errors" in summary:
        errors = summary["user_errors"]
        lines += ["", "## The simulated user's own errors (share of runs)", "",
                  "| stopped early | left the goal | leaked | any |", "|---|---|---|---|",
                  f"| {errors['stopped_early']:.3f} | {errors['left_goal']:.3f} | "
                  f"{errors['leaked']:.3f} | {errors['any']:.3f} |"]
    if summary.get("problems"):
        lines += ["", f"{summary['problems']} run(s) had problems besides the agent's own "
                  "mistakes: see dialogues.jsonl"]
    return "\n".join(lines) + "\n"


def dialogue_html(summary: dict[str, Any]) -> str:
    """The same as ``dialogue_markdown``, as a section of an HTML page."""
    import html

    groups = _dialogue_groups(summary)
    names = [n for n in _DIALOGUE_SCORES if any(n in g for g in groups.values())]
    head = "".join(f"<th>{n}</th>" for n in ["dialogues of", "dialogues", *names])
    rows = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in [
        html.escape(kind), g["dialogues"], *(f"{g[n]:.3f}" if n in g else "-" for n in names)])
        + "</tr>" for kind, g in groups.items())
    title = html.escape(dialogue_markdown(summary).splitlines()[0].lstrip("# "))
    parts = [f"<h2>Dialogues</h2><p>{title}</p><table><tr>{head}</tr>{rows}</table>"]
    passk = summary["all"].get("pass_hat_k", {})
    if len(passk) > 1:
        parts.append("<p>pass^k: " + ", ".join(f"k={k}: {v:.3f}" for k, v in passk.items())
                     + "</p>")
    if "user_errors" in summary:
        e = summary["user_errors"]
        parts.append("<h3>The simulated user's own errors (share of runs)</h3><table><tr>"
                     "<th>stopped early</th><th>left the goal</th><th>leaked</th><th>any</th>"
                     f"</tr><tr><td>{e['stopped_early']:.3f}</td><td>{e['left_goal']:.3f}</td>"
                     f"<td>{e['leaked']:.3f}</td><td>{e['any']:.3f}</td></tr></table>")
    return "\n".join(parts)


def _html_table(lines: list[str]) -> str:
    """Markdown lines of one titled table (and notes) as HTML."""
    import html

    if not lines:
        return ""
    out = []
    rows = [line for line in lines if line.startswith("|") and not line.startswith("|---")]
    for line in lines:
        if line.startswith("## "):
            out.append(f"<h2>{html.escape(line[3:])}</h2>")
        elif line and not line.startswith("|"):
            out.append(f"<p>{html.escape(line)}</p>")
    cells = ["<tr>" + "".join(f"<td>{html.escape(c.strip().strip('*'))}</td>"
                              for c in row.strip("|").split("|")) + "</tr>" for row in rows]
    return out[0] + "<table>" + "".join(cells) + "</table>" + "".join(out[1:])


def html_page(title: str, body: str) -> str:
    """A self-contained HTML page around ``body``."""
    import html

    title = html.escape(title)
    return f"""<!doctype html><html><head><meta charset="utf-8"><title>{title}</title>
<style>body{{font-family:sans-serif;max-width:60em;margin:2em auto}}td{{padding:0 1em}}</style>
</head><body><h1>{title}</h1>{body}</body></html>
"""
