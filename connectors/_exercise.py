"""Call every API of an app once, in the order its catalog file's ``exercise`` gives.

This is how toolbed proves a catalog entry is true to the real app: `toolbed apps
exercise` and the tests run it live, and record-then-replay it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from toolbed.apis import Step
from toolbed.errors import ArgumentError

from ._bind import bind_args
from ._observation import CallError, Observation
from ._runtime import Caller

__all__ = ["StepResult", "run_exercise", "run_steps"]


@dataclass(frozen=True)
class StepResult:
    step: Step
    api_id: str
    args: dict[str, Any]
    observation: Observation

    @property
    def ok(self) -> bool:
        return self.observation.error is None and self.step.accepts(self.observation.status)


def run_exercise(runtime: Caller, app: str) -> list[StepResult]:
    """Run ``app``'s exercise; each step is reported, a failed one does not stop the rest."""
    return run_steps(runtime, app, runtime.catalog.app(app).exercise)


def run_steps(
    runtime: Caller, app: str | None, steps: Sequence[Step], saved: dict[str, Any] | None = None
) -> list[StepResult]:
    """Run some steps; ``saved`` collects the observations they ``save``.

    A step names an API of ``app`` (``list_buckets``), or any API by its full id
    (``kinto.list_buckets``), as a task's gold chain does.

    Calls go through ``observe``: a refused call (bad arguments, an unreachable app, a
    write the rollback policy refuses) is a failed step, and the rest still run.
    """
    saved = {} if saved is None else saved
    results = []
    for step in steps:
        api_id = step.api if "." in step.api or app is None else f"{app}.{step.api}"
        try:
            args = bind_args(step.bind, saved, step.args)
        except ArgumentError as exc:
            args = dict(step.args)
            obs = Observation(api=api_id, error=CallError(type="ArgumentError", message=str(exc)))
        else:
            obs = runtime.observe(api_id, args)
        if step.save:
            saved[step.save] = obs.bindable()
        results.append(StepResult(step, api_id, args, obs))
    return results
