"""The ranking metrics on small examples worked out by hand."""

from __future__ import annotations

import math

import pytest

from toolbed.retriever import (
    against,
    comp_at_k,
    f1_at_k,
    mrr,
    ndcg_at_k,
    precision_at_k,
    query_scores,
    rank,
    recall_at_k,
    score_rankings,
)
from toolbed.stats import Difference

LOG3 = 1 / math.log2(3)  # the discount of rank 2


def test_ndcg_is_one_for_the_ideal_ranking_and_discounts_later_ranks() -> None:
    assert ndcg_at_k(["a", "b", "c"], {"a"}, 1) == 1.0
    assert ndcg_at_k(["b", "a", "c"], {"a"}, 1) == 0.0
    assert ndcg_at_k(["b", "a", "c"], {"a"}, 3) == pytest.approx(LOG3)
    # two relevant: a at rank 1 and c at rank 3, against the ideal a, c at ranks 1 and 2
    assert ndcg_at_k(["a", "b", "c"], {"a", "c"}, 3) == pytest.approx((1 + 0.5) / (1 + LOG3))


def test_k_larger_than_the_relevant_set_keeps_the_ideal_at_its_size() -> None:
    assert ndcg_at_k(["x", "a"], {"a"}, 10) == pytest.approx(LOG3)
    assert recall_at_k(["x", "a"], {"a"}, 10) == 1.0
    assert comp_at_k(["x", "a"], {"a"}, 10) == 1.0


def test_recall_comp_and_mrr() -> None:
    ranked = ["a", "b", "c"]
    assert recall_at_k(ranked, {"a", "c"}, 1) == 0.5
    assert comp_at_k(ranked, {"a", "c"}, 2) == 0.0
    assert comp_at_k(ranked, {"a", "c"}, 3) == 1.0
    assert mrr(ranked, {"b", "c"}) == 0.5
    assert mrr(ranked, {"z"}) == 0.0


def test_precision_and_f1_read_the_offered_set_however_short_a_cut_left_it() -> None:
    # a cut left two of the five: one of them is one of the three gold ids
    assert precision_at_k(["a", "x"], {"a", "b", "c"}, 5) == 0.5
    assert f1_at_k(["a", "x"], {"a", "b", "c"}, 5) == pytest.approx(2 * 1 / (2 + 3))
    # uncut, the same hit among five offered is worth less
    assert precision_at_k(["a", "x", "y", "z", "w"], {"a", "b", "c"}, 5) == 0.2
    assert f1_at_k(["a", "x", "y", "z", "w"], {"a", "b", "c"}, 5) == pytest.approx(2 / 8)
    assert precision_at_k([], {"a"}, 5) == 0.0
    scores = score_rankings([["a"], ["a", "b", "c"]], [{"a"}, {"c"}], ks=(5,))
    assert scores["offered@5"] == 2.0 and scores["recall@5"] == 1.0


def test_ties_are_broken_by_id_so_a_ranking_repeats() -> None:
    assert rank({"b": 0.5, "a": 0.5, "c": 0.9}) == ["c", "a", "b"]
    tied = rank({"b": 0.5, "a": 0.5})
    assert ndcg_at_k(tied, {"b"}, 1) == 0.0 and ndcg_at_k(tied, {"b"}, 2) == pytest.approx(LOG3)


def test_scores_are_averaged_over_queries() -> None:
    scores = score_rankings([["a", "b"], ["b", "a"]], [{"a"}, {"a"}], ks=(1,))
    assert scores == {"ndcg@1": 0.5, "recall@1": 0.5, "comp@1": 0.5, "offered@1": 1.0,
                      "precision@1": 0.5, "f1@1": 0.5, "mrr": 0.75}
    with pytest.raises(ValueError, match="at least one relevant"):
        ndcg_at_k(["a"], set(), 1)


def test_against_sets_each_ranker_query_by_query_beside_a_reference() -> None:
    relevant = [{"a"}, {"b"}, {"c"}, {"d"}] * 5
    rankings = {"right": [[g] for gold in relevant for g in gold],
                "wrong": [["x"]] * len(relevant),
                "half": [[g] if i % 2 else ["x"] for i, gold in enumerate(relevant)
                         for g in gold]}
    diffs = against(rankings, relevant, "right", ("ndcg@1", "mrr"), rounds=200)
    assert set(diffs) == {"wrong", "half"}                         # not the reference itself
    assert diffs["wrong"]["ndcg@1"] == Difference(-1.0, -1.0, -1.0)
    assert diffs["half"]["mrr"].mean == -0.5 and diffs["half"]["mrr"].clear
    assert query_scores(rankings["half"], relevant, "ndcg@1")[:2] == [0.0, 1.0]
    with pytest.raises(ValueError, match="unknown metric 'ndgc@5'"):
        query_scores(rankings["half"], relevant, "ndgc@5")
