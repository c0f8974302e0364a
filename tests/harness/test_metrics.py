"""The seeds' metrics on the papers' worked examples, and on small cases worked by hand."""

from __future__ import annotations

import math

import pytest

from toolbed.harness import Call
from toolbed.harness.metrics import (
    StepPrediction,
    averaged_turn_success,
    by_scenario_and_type,
    category_f1,
    error_taxonomy,
    format_alignment,
    instruct_score,
    operational_completion,
    overall,
    parameter_selection,
    pass_at_k,
    pass_hat_k,
    plan_f1,
    review_class,
    review_score,
    soft_averaged_turn_success,
    step_metrics,
    subjective_accuracy,
    success_rate,
    task_process_rate,
    tool_matching_rate,
    tool_number,
    tool_order,
    tool_reality,
    tool_selection,
    tooleyes_scores,
)
from toolbed.registry import lookup

# --- MTU-Bench -----------------------------------------------------------------------


def test_mtubench_turn_scores_on_the_papers_example() -> None:
    turns = [True, True, False, True, True]
    # the paper: (1 + 1 + 0 + (1 - e^-1) + (1 - e^-2)) / 5 = 0.6994
    assert soft_averaged_turn_success(turns) == pytest.approx(0.6994, abs=1e-4)
    assert averaged_turn_success(turns) == 0.8
    assert success_rate(turns) == 0.0 and success_rate([True, True]) == 1.0
    assert task_process_rate(turns) == 0.4            # two turns done before the first error
    assert task_process_rate([True] * 3) == 1.0 and task_process_rate([False, True]) == 0.0


def test_mtubench_tool_number_on_the_papers_example() -> None:
    # gold {search_web, translate_text}, predicted {search_web, play_music, set_alarm}:
    # one shared tool out of four distinct ones
    assert tool_number(["search_web", "play_music", "set_alarm"],
                       ["search_web", "translate_text"]) == 0.25


def test_mtubench_tool_order_decays_with_where_the_shared_run_starts() -> None:
    assert tool_order(["a", "b", "c"], ["a", "b", "c"]) == 1.0
    # the longest shared run [a, b] starts at 1 of 3 in the prediction: cos(pi/6) * 2/3
    assert tool_order(["x", "a", "b"], ["a", "b", "c"]) == pytest.approx(
        math.cos(math.pi / 6) * 2 / 3)
    # reversed: every run has length 1; the first starts at 0, so no decay: 1/3
    assert tool_order(["book_hotel", "plan_route", "get_weather"],
                      ["get_weather", "plan_route", "book_hotel"]) == pytest.approx(1 / 3)
    assert tool_order([], ["a"]) == 0.0


def test_mtubench_parameters_count_only_with_the_right_tool() -> None:
    gold = {"from_location": "charlotte", "to_location": "las vegas"}
    assert tool_selection("Flight", "Flight") == 1.0
    assert parameter_selection("Flight", {"from_location": "Charlotte NC",
                                          "to_location": "Las Vegas"}, "Flight", gold) == 1.0
    assert parameter_selection("Flight", {"from_location": "charlotte",
                                          "to_location": "reno"}, "Flight", gold) == 0.0
    assert parameter_selection("Flight", {"from": "charlotte", "to_location": "las vegas"},
                               "Flight", gold) == 0.0              # a wrong key fails too
    assert parameter_selection("Hotel", dict(gold), "Flight", gold) == 0.0   # PS <= TS


# --- CToolEval -------------------------------------------------------------------------


def test_ctooleval_tool_matching_rate_counts_each_gold_call_once() -> None:
    assert tool_matching_rate(["b", "a", "c"], ["a", "b", "b"]) == pytest.approx(2 / 3)
    assert tool_matching_rate(["a", "a", "a"], ["a"]) == 1.0
    assert tool_matching_rate([], ["a", "b"]) == 0.0


def test_ctooleval_operational_completion_needs_the_state_change() -> None:
    assert operational_completion(["kinto.create_bucket"], ["kinto.create_bucket",
                                                             "kinto.create_record"], True) == 0.5
    # the agent says it did it, the statuses were fine, but the app shows no change
    assert operational_completion(["kinto.create_bucket"], ["kinto.create_bucket"],
                                  False) == 0.0


def test_ctooleval_table_is_the_mean_per_scenario_and_answer_type() -> None:
    table = by_scenario_and_type([("single", "fixed", 1.0), ("single", "fixed", 0.0),
                                  ("multi", "operational", 0.5), ("single", "realtime", 1.0)])
    assert table == {"single": {"fixed": 0.5, "realtime": 1.0}, "multi": {"operational": 0.5},
                     "all": {"all": 0.625}}


# --- T-Eval ----------------------------------------------------------------------------


def test_teval_overall_reproduces_table_1() -> None:
    # GPT-4's row: formats averaged within each ability, then six abilities averaged
    gpt4 = {"instruct": [96.7, 95.9], "plan": [88.9, 86.7], "reason": [65.6, 65.1],
            "retrieve": [91.3, 86.6], "understand": [83.2, 88.3], "review": 94.5}
    assert overall(gpt4) == pytest.approx(86.4, abs=0.05)
    qwen7b = {"instruct": [28.7, 94.2], "plan": [66.2, 63.1], "reason": [56.4, 34.1],
              "retrieve": [89.0, 35.3], "understand": [77.7, 46.1], "review": 61.6}
    assert overall(qwen7b) == pytest.approx(59.5, abs=0.05)


def test_teval_plan_f1_matches_in_order() -> None:
    a, b, c, d = ("a", {}), ("b", {}), ("c", {}), ("d", {})
    assert plan_f1([a, b, c], [a, b, c]) == 1.0
    # a and c matched in order: p = r = 2/3
    assert plan_f1([a, b, c], [a, c, d]) == pytest.approx(2 / 3)
    # both matched but in reverse order: the longest ordered run is 1, p = r = 1/2
    assert plan_f1([c, a], [a, c]) == pytest.approx(0.5)
    # p = 1/1, r = 1/3
    assert plan_f1([a], [a, b, c]) == pytest.approx(2 * 1 * (1 / 3) / (1 + 1 / 3))
    # same tool, other args: 0.75 * 1 + 0.25 * 0 passes the paper's 0.7, not the code's 0.8
    assert plan_f1([("a", {"x": 1})], [("a", {"x": 2})]) == 1.0
    assert plan_f1([("a", {"x": 1})], [("a", {"x": 2})], threshold=0.8) == 0.0
    assert plan_f1([], [a]) == 0.0


def test_teval_instruct_and_review() -> None:
    assert instruct_score(True, {"city": "Oslo", "days": 2}, {"city": "Oslo", "days": 3}) \
        == 0.75
    assert instruct_score(False, {"city": "Oslo"}, {"city": "Oslo"}) == 0.0
    assert review_score("input_error", "input_error") == 1.0
    with pytest.raises(ValueError, match="unknown review class"):
        review_score("fine", "ok")


def test_teval_review_classes_of_real_responses() -> None:
    assert review_class(200, {"data": [{"id": "trips"}]}) == "success"
    assert review_class(201, {"id": 7}) == "success"
    assert review_class(404, {"errno": 111, "message": "not found"}) == "input_error"
    assert review_class(422, "bad field") == "input_error"
    assert review_class(503, None) == "internal_error"
    assert review_class(None, None) == "internal_error"          # never answered
    assert review_class(200, {"data": []}) == "unable"
    assert review_class(200, {"ok": True, "rows": [], "truncated": False}) == "unable"
    assert review_class(204, None) == "success"                  # a delete acknowledged


# --- GTA -------------------------------------------------------------------------------


def test_gta_step_metrics_by_hand() -> None:
    steps = [
        StepPrediction("ocr", {"image": "a.png"}, tool="ocr", args={"image": "a.png"}),
        StepPrediction("calculator", {"expression": "2+3"}, tool="calculator",
                       args={"expression": "3+2"}),
        StepPrediction("search", {"q": "x"}, error=True),                    # did not parse
        StepPrediction(None, answer_right=True),                             # the answer
    ]
    assert step_metrics(steps) == {"inst_acc": 0.75, "tool_acc": pytest.approx(2 / 3),
                                   "arg_acc": pytest.approx(1 / 3), "summ_acc": 1.0}


def test_gta_category_f1_and_subjective_answers() -> None:
    domain = {"ocr": "perception", "count": "perception", "calc": "logic", "draw": "operation"}
    f1 = category_f1(["ocr", "ocr", "calc", "draw"], ["ocr", "count", "calc"], domain.__getitem__)
    # perception: 1 gold tool called / 2 calls made, 1 / 2 gold calls -> 0.5
    assert f1 == {"perception": 0.5, "logic": 1.0, "operation": 0.0}
    same = {("rain", "rain"): 1.0, ("rain", "wet"): 0.6, ("rain", "dry"): -0.2}

    def similarity(a: str, b: str) -> float:
        return same[(a, b)]

    assert subjective_accuracy("rain", ["dry", "wet"], similarity) == 0.6   # the best one
    assert subjective_accuracy("rain", ["dry"], similarity) == 0.0          # clipped at 0


# --- ToolEyes --------------------------------------------------------------------------


def test_tooleyes_format_alignment_counts_well_formed_rounds() -> None:
    good = 'Thought: find the threads.\nAction: get_threads\nAction Input: {"board": "mu"}'
    redundant = good + "\nPlease provide the result."        # the paper's redundant sentence
    missing = "I cannot handle this task."                    # missing keywords
    assert format_alignment([good, redundant, missing]) == pytest.approx(1 / 3)
    assert format_alignment([good, "Thought: done.\nFinal Answer: 4 threads"]) == 1.0
    assert format_alignment([good + "\nObservation: 4 threads"]) == 0.0   # made-up result


def test_tooleyes_tool_reality() -> None:
    offered = {"get_threads": {"properties": {"board": {}, "page": {}}, "required": ["board"]}}
    assert tool_reality("get_threads", {"board": "mu", "page": 1}, offered) == 1.0
    assert tool_reality("get_threads", {"page": 1}, offered) == 0.0            # required missing
    assert tool_reality("get_threads", {"board": "mu", "api_key": "x"}, offered) == 0.0
    assert tool_reality(r"get\_threads", {"board": "mu"}, offered) == 0.0       # hallucinated


# --- tau-bench -------------------------------------------------------------------------


def test_pass_hat_k_and_pass_at_k() -> None:
    trials = [[True, True, False, False], [True, True, True, True]]
    # first task: C(2,1)/C(4,1) = 1/2 and C(2,2)/C(4,2) = 1/6; the second always passes
    assert pass_hat_k(trials, 1) == pytest.approx((0.5 + 1) / 2)
    assert pass_hat_k(trials, 2) == pytest.approx((1 / 6 + 1) / 2)
    assert pass_at_k(trials, 2) == pytest.approx((5 / 6 + 1) / 2)
    with pytest.raises(ValueError, match="k=5 needs"):
        pass_hat_k(trials, 5)


# --- the error taxonomy ---------------------------------------------------------------


def test_error_taxonomy_counts_each_kind() -> None:
    gold = [("kinto.create_bucket", {"id": "trips"}),
            ("kinto.create_collection", {"bucket": "trips", "id": "days"}),
            ("kinto.list_records", {"bucket": "trips", "collection": "days"})]
    calls = [
        Call(api="kinto.create_bucket", args={"id": "Trips"}),                     # wrong value
        Call(api="kinto.create_collection", args={"bucket": "trips"}),             # id missing
        Call(api="kinto.delete_bucket", args={"id": "trips"}),                     # instead of list
        Call(api="kinto.list_buckets", args={}),                                   # one too many
        Call(api="kinto.make_magic", valid=False),                                 # no such API
    ]
    counts = error_taxonomy(calls, gold, format_errors=2, hallucinated_observations=1,
                            unfinished=True)
    assert counts == {"wrong_tool": 1, "missing_tool": 0, "excess_tool": 1,
                      "wrong_argument": 1, "missing_argument": 1, "format_error": 2,
                      "invalid_api": 1, "hallucinated_observation": 1,
                      "unfinished_operation": 1}
    clean = error_taxonomy([Call(api=api, args=args) for api, args in gold], gold)
    assert not any(clean.values())


def test_every_metric_is_in_the_registry() -> None:
    assert lookup("metric", "mtubench.sats") is soft_averaged_turn_success
    assert lookup("metric", "taubench.pass_hat_k") is pass_hat_k


def test_tooleyes_five_capabilities_on_a_hand_worked_run() -> None:
    schemas = {"kinto.get_bucket": {"properties": {"bucket": {}}, "required": ["bucket"]}}
    calls = [Call(api="kinto__drop_all", valid=False),              # no such tool: 0
             Call(api="kinto.get_bucket", args={}),                 # required one missing: 0
             Call(api="kinto.get_bucket", args={"bucket": "trips"})]  # as documented: 1
    # 5 rounds, one of them a malformed call; it never answered
    rules = tooleyes_scores(calls, 5, 1, [], None, schemas)
    assert rules == {"tooleyes_fa": 0.8, "tooleyes_t_reality": 0.3333, "tooleyes_a_pass": 0.0}
    ratings = {"ic": 0.5, "b_validity": 0.5, "b_integrity": 0.4, "a_quality": 0.9,
               "t_match": [0.0, 0.3, 0.6]}
    judged = tooleyes_scores(calls, 5, 1, [], None, schemas, ratings)
    assert judged == {**rules, "tooleyes_ic": 0.5, "tooleyes_bp": 0.2, "tooleyes_ts": 0.2,
                      "tooleyes_ao": 0.0, "tooleyes_overall": 0.34}   # (.8+.5+.2+.2+0)/5
    # a rating the judge did not give leaves its part, and the overall, out
    partial = tooleyes_scores(calls, 5, 1, [], "done", schemas, {**ratings, "b_integrity": None})
    assert "tooleyes_bp" not in partial and "tooleyes_overall" not in partial
    assert partial["tooleyes_ao"] == 0.9
    # a ReAct agent's FA reads its outputs: the second one has a sentence after its input
    outputs = ["Thought: look\nAction: kinto.get_bucket\nAction Input: {\"bucket\": \"a\"}",
               "Thought: look\nAction: kinto.get_bucket\nAction Input: {\"bucket\": \"a\"}\nok?"]
    assert tooleyes_scores([], 2, 0, outputs, "x", schemas)["tooleyes_fa"] == 0.5


def test_a_judges_rating_is_read_from_its_score_line_or_a_bare_number() -> None:
    from langchain_core.messages import AIMessage

    from toolbed.harness import ScriptedChatModel
    from toolbed.harness.metrics import llm_judge

    replies = [AIMessage(r) for r in ("Scoring Reason: clear.\nEvaluation Score: 7", " 9.",
                                      "It seems fine.", "Evaluation Score: 12")]
    replies.append(AIMessage("", tool_calls=[{"id": "1", "name": "give_score",
                                              "args": {"score": 4, "reason": "vague"}}]))
    judge = llm_judge(ScriptedChatModel(messages=iter(replies)))
    assert [judge.rate("rate it") for _ in replies] == [0.7, 0.9, None, 1.0, 0.4]
