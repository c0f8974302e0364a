"""The seeds' metrics as plain functions, each named in toolbed's registry as
``("metric", "<paper>.<name>")`` so that runs and reports can name what they score.

- CToolEval: ``tool_matching_rate``, ``operational_completion``, ``by_scenario_and_type``;
  open answers by ``embedding_similarity`` or an ``llm_judge``
- MTU-Bench: ``tool_selection`` (TS), ``parameter_selection`` (PS), ``success_rate`` (SR),
  ``averaged_turn_success`` (ATS), ``soft_averaged_turn_success`` (SATS),
  ``task_process_rate`` (TPR), ``tool_number`` (TN), ``tool_order`` (TO)
- GTA: ``step_metrics`` (InstAcc, ToolAcc, ArgAcc, SummAcc), ``subjective_accuracy``,
  ``category_f1``; AnsAcc's phrase lists are the ``phrases`` match rule of a task
- T-Eval: ``plan_f1`` and the instruct / reason / retrieve / understand / review scores
- ToolEyes: ``format_alignment``, ``tool_reality``, ``judge_tooleyes`` (the judged parts)
  and ``tooleyes_scores`` (all five capabilities and their mean)
- tau-bench: ``pass_hat_k`` (and ``pass_at_k``)
- ``error_taxonomy``: the errors of one run, counted by kind
"""

from toolbed.registry import register as _register

from ._common import canonical, gives
from ._ctooleval import (
    ANSWER_TYPES,
    by_scenario_and_type,
    operational_completion,
    tool_matching_rate,
)
from ._gta import StepPrediction, category_f1, step_metrics, subjective_accuracy
from ._judge import JUDGE_PROMPT, Judge, LLMJudge, llm_judge
from ._mtubench import (
    averaged_turn_success,
    parameter_selection,
    soft_averaged_turn_success,
    success_rate,
    task_process_rate,
    tool_number,
    tool_order,
    tool_selection,
)
from ._passk import pass_at_k, pass_hat_k
from ._taxonomy import ERRORS, error_taxonomy
from ._teval import (
    REVIEW_CLASSES,
    Similarity,
    embedding_similarity,
    exact_similarity,
    instruct_score,
    overall,
    plan_f1,
    reason_score,
    retrieve_score,
    review_class,
    review_score,
    understand_score,
)
from ._tooleyes import (
    CAPABILITIES,
    RUBRICS,
    Rater,
    format_alignment,
    judge_tooleyes,
    thought_chain,
    tool_reality,
    tooleyes_scores,
)

for _name, _fn in {
    "ctooleval.tool_matching_rate": tool_matching_rate,
    "ctooleval.operational_completion": operational_completion,
    "mtubench.ts": tool_selection,
    "mtubench.ps": parameter_selection,
    "mtubench.sr": success_rate,
    "mtubench.ats": averaged_turn_success,
    "mtubench.sats": soft_averaged_turn_success,
    "mtubench.tpr": task_process_rate,
    "mtubench.tn": tool_number,
    "mtubench.to": tool_order,
    "gta.step": step_metrics,
    "gta.subjective": subjective_accuracy,
    "gta.category_f1": category_f1,
    "teval.plan": plan_f1,
    "teval.instruct": instruct_score,
    "teval.reason": reason_score,
    "teval.retrieve": retrieve_score,
    "teval.understand": understand_score,
    "teval.review": review_score,
    "teval.overall": overall,
    "tooleyes.format_alignment": format_alignment,
    "tooleyes.tool_reality": tool_reality,
    "taubench.pass_hat_k": pass_hat_k,
    "pass_at_k": pass_at_k,
    "errors": error_taxonomy,
}.items():
    _register("metric", _name)(_fn)

__all__ = [
    "JUDGE_PROMPT", "Judge", "LLMJudge", "llm_judge",
    "ANSWER_TYPES", "ERRORS", "REVIEW_CLASSES", "Similarity", "StepPrediction",
    "averaged_turn_success", "by_scenario_and_type", "canonical", "category_f1",
    "embedding_similarity", "error_taxonomy", "exact_similarity", "format_alignment", "gives",
    "instruct_score", "operational_completion", "overall", "parameter_selection", "pass_at_k",
    "pass_hat_k", "plan_f1", "reason_score", "retrieve_score", "review_class", "review_score",
    "soft_averaged_turn_success",
    "step_metrics", "subjective_accuracy", "success_rate", "task_process_rate",
    "tool_matching_rate", "tool_number", "tool_order", "tool_reality", "tool_selection",
    "understand_score",
    "CAPABILITIES", "RUBRICS", "Rater", "judge_tooleyes", "thought_chain", "tooleyes_scores",
]
