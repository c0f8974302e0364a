"""The match rules an answer is judged by, on the cases they exist for."""

from __future__ import annotations

import pytest

from toolbed.harness import answer_matches, mentions, numbers_in, same_value
from toolbed.tasks import Match

CONTAINS, EXACT = Match(), Match(match="exact")


def test_numbers_are_read_as_numbers_whatever_their_spelling() -> None:
    assert numbers_in("3 of 1,234 runs took 2.5 s, -4 left") == [3, 1234, 2.5, -4]
    assert mentions("There are 7 buckets.", 7)
    assert mentions("There are 7.0 buckets.", "7")
    assert not mentions("There are 17 buckets.", 7)


def test_a_number_written_in_words_is_that_number() -> None:
    assert mentions("You have three unread books.", 3) and mentions("twenty-one tags", 21)
    assert mentions("two hundred runs", 200) and not mentions("You have three books.", 2)
    assert mentions("书架上有三本书。", 3) and mentions("一共一百二十元", 120)
    assert mentions("有两个日历", 2) and mentions("总数是十二。", 12)
    assert mentions("预算两万五千元", 25000) and mentions("二〇二五年", 2025)
    assert not mentions("我们一起去，第一个到的是小王。", 1)    # 一起 and 第一 count nothing
    assert mentions("装修预算3万元", 30000) and mentions("年收入1.5万", 15000)
    assert not mentions("装修预算3万元", 10000)


def test_zero_is_also_none_when_the_answer_names_no_number() -> None:
    assert mentions("下周没有安排。", 0) and mentions("There are no open issues.", 0)
    assert mentions("None of them is overdue.", 0) and mentions("没有", 0.0)
    assert not mentions("No, there are 2 open issues.", 0)      # a number says otherwise
    assert not mentions("有两个，没有别的了。", 0)
    assert not mentions("There are no open issues.", 1)


def test_text_is_found_on_word_boundaries_case_ignored() -> None:
    assert mentions("You have not read MIDDLEMARCH yet.", "Middlemarch")
    assert not mentions("Middlemarches", "Middlemarch")
    assert mentions("Filed under 'rain jacket'.", "rain jacket")


def test_chinese_text_has_no_spaces_to_bound_a_word() -> None:
    assert mentions("网址是https://www.postgresql.org/docs/，去看看吧", "https://www.postgresql.org/docs/")
    assert mentions("你最早的那本是Middlemarch，1871年出版。", "Middlemarch")
    assert mentions("我的同事们都在", "同事")
    assert mentions("一共３本书", 3) and mentions("合计1,280.5元", 1280.5)
    assert not mentions("你最早的那本是Middlemarches。", "Middlemarch")   # still a longer word
    # a Chinese name ends where digits begin: names and amounts run together in Chinese
    assert mentions("还没结清的是燃气费88元和宽带年费1200元", "燃气费")
    assert mentions("电费236.5元", "电费") and mentions("2026年读书计划", "读书计划")
    assert not mentions("Room 4B2", "4B") and not mentions("v23", "v2")   # Latin still bounds


def test_a_chinese_yes_or_no_is_its_first_word() -> None:
    assert mentions("是的，这个监控已经暂停了。", True)
    assert mentions("没有，书架上没有19世纪的书。", False)
    assert mentions("不是，它还在运行。", False) and not mentions("不是，它还在运行。", True)
    assert not mentions("这个监控已经暂停了，不会再检查。", False)   # no first-word answer
    assert mentions("Yes, it is paused.", True) and not mentions("是的", "yes")


def test_a_chinese_no_after_an_adverb_or_in_a_negating_clause_is_a_no() -> None:
    assert mentions("已经没有了。", False) and not mentions("已经没有了。", True)
    assert mentions("还没有，明天再装。", False)
    assert mentions("“传统文化”这个标签已经不在了。", False)    # the quoted name is skipped
    assert not mentions("“不错”这个标签还在。", False)           # a name is not a no
    assert mentions("没错，就是这个。", True) and mentions("已经暂停了。", True)
    assert mentions("允许，普通成员也能改。", True)


def test_a_question_in_chinese_asks_for_the_missing_value() -> None:
    from toolbed.harness import Trajectory
    from toolbed.harness.scoring import turn_right
    from toolbed.tasks import Turn

    turn = Turn(query="帮我记一笔滞纳金。", asks="the amount of the late fee")
    for reply, right in (("请问滞纳金是多少？", True), ("Which amount?", True),
                         ("好的，已经记好了。", False)):
        assert turn_right(turn, Trajectory(answer=reply), None, [], []) is right


def test_contains_needs_every_item_of_a_list() -> None:
    assert answer_matches("Middlemarch and Dune are unread", ["Dune", "Middlemarch"], CONTAINS)
    assert not answer_matches("Only Middlemarch is unread", ["Dune", "Middlemarch"], CONTAINS)


def test_exact_is_the_whole_answer() -> None:
    assert answer_matches("  Middlemarch. ", "middlemarch", EXACT)
    assert not answer_matches("It is Middlemarch", "middlemarch", EXACT)


def test_number_rule_uses_the_tolerance_and_refuses_words() -> None:
    rule = Match(match="number", tolerance=0.05)
    assert answer_matches("The accuracy was 0.93", 0.91, rule)
    assert not answer_matches("The accuracy was 0.83", 0.91, rule)
    assert not answer_matches("ninety", "ninety", rule)


def test_phrases_follow_gta_whitelist_and_blacklist() -> None:
    rule = Match(match="phrases", whitelist=[["lisbon", "portugal"], ["friday"]],
                 blacklist=["cancelled"])
    assert answer_matches("The Portugal trip starts on Friday", None, rule)
    assert not answer_matches("The Lisbon trip starts on Monday", None, rule)
    assert not answer_matches("The Lisbon trip on Friday was cancelled", None, rule)
    with pytest.raises(ValueError, match="whitelist"):
        Match(match="phrases")


def test_a_label_equals_the_api_value_as_a_multiset_unless_ordered() -> None:
    assert same_value(["b", "a"], ["a", "b"], CONTAINS)
    assert not same_value(["a", "a"], ["a", "b"], CONTAINS)
    assert not same_value(["b", "a"], ["a", "b"], Match(ordered=True))
    assert same_value(3, "3", CONTAINS)
    assert same_value(0.301, 0.3, Match(tolerance=0.01))
    assert not same_value(0.4, 0.3, Match(tolerance=0.01))


def test_an_open_reference_about_live_data_takes_its_facts_from_the_run() -> None:
    from pydantic import ValidationError

    from toolbed.harness import filled_references
    from toolbed.tasks import OpenAnswer

    answer = OpenAnswer.model_validate({
        "type": "open", "facts": ["company.body.founded", "company.body.employees"],
        "references": ["SpaceX was founded in {0} and employs about {1} people."]})
    assert filled_references(answer, [2002, 9500.0]) == [
        "SpaceX was founded in 2002 and employs about 9500 people."]
    assert filled_references(answer, None) == answer.references      # no run: as written
    with pytest.raises(ValidationError, match="uses \\{2\\} but there are 2 facts"):
        OpenAnswer.model_validate({"type": "open", "facts": ["a", "b"],
                                   "references": ["{0} {1} {2}"]})


def test_zero_is_a_fact_and_the_gold_chain_reads_whole_answers(demo_catalog) -> None:
    import httpx

    from toolbed.connectors import Runtime
    from toolbed.harness import run_oracle, truthy
    from toolbed.tasks import Task

    assert truthy(0) and truthy(0.0) and not truthy(False) and not truthy([])
    items = [{"id": f"item-{i:05d}", "rain": 0} for i in range(2000)]     # ~50 kB of JSON
    task = Task.model_validate({
        "id": "demo-last-item", "query": "Which item comes last, and how much rain?",
        "apps": ["demo"], "scenario": "single", "category": "information retrieval",
        "split": "dev", "chain": [{"api": "demo.get_item", "args": {"item_id": "all"},
                                   "save": "all"}],
        "answer": {"type": "open", "facts": ["all.body.items[-1].id", "all.body.items[-1].rain"],
                   "references": ["The last is {0}, with {1} mm of rain."]}})
    transport = httpx.MockTransport(lambda r: httpx.Response(200, json={"items": items}))
    with Runtime(demo_catalog, env={"DEMO_API_KEY": "k"}, transport=transport) as runtime:
        run = run_oracle(runtime, task)
        assert runtime.max_chars == 32_000                  # the agent's cap is back
    assert run.problems == [] and run.ok
    assert run.answer == "The last is item-01999, with 0 mm of rain."
