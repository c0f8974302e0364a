"""The ReAct text protocol: the strict form scores format, the lenient one runs agents."""

from __future__ import annotations

import pytest

from toolbed.harness import ReactFormatError, ReactStep, parse_react


def test_a_strict_step_is_a_thought_an_action_and_one_json_object() -> None:
    text = 'Thought: I need the buckets.\nAction: kinto_list_buckets\nAction Input: {}'
    assert parse_react(text) == ReactStep("I need the buckets.", "kinto_list_buckets", {})
    done = parse_react("Thought: I know it now.\nFinal Answer: There are 3 buckets.")
    assert done.final_answer == "There are 3 buckets." and done.action is None


@pytest.mark.parametrize(("text", "complaint"), [
    ("I cannot handle this task.", "write 'Thought: ...'"),
    ('Thought: x\nAction: a\nAction Input: {"q": 1}\nPlease provide the result.',
     "nothing after them"),
    ("Thought: x\nAction: a\nAction Input: {'q': 1}", "not a JSON object"),
    ('thought: x\naction: a\naction input: {"q": 1}', "write 'Thought: ...'"),
])
def test_strict_parsing_names_what_is_wrong(text: str, complaint: str) -> None:
    with pytest.raises(ReactFormatError, match=complaint):
        parse_react(text)


def test_lenient_parsing_accepts_what_models_really_write() -> None:
    fenced = ("thought: look it up\nACTION: `kinto_get_record`\naction input:\n```json\n"
              '{"bucket": "b", "id": "r{1}"}\n```\nI will wait for the result.')
    step = parse_react(fenced, strict=False)
    assert (step.action, step.args) == ("kinto_get_record", {"bucket": "b", "id": "r{1}"})
    python_dict = parse_react("Action: a\nAction Input: {'n': 2, 'ok': True}", strict=False)
    assert python_dict.args == {"n": 2, "ok": True} and python_dict.thought == ""
    escapes = parse_react('Action: a\nAction Input: {"path": "C:\\\\", "q": "say \\"}\\""} ok',
                          strict=False)
    assert escapes.args == {"path": "C:\\", "q": 'say "}"'}
    answer = parse_react("The total is 7.\nFinal answer: 7", strict=False)
    assert (answer.thought, answer.final_answer) == ("The total is 7.", "7")


def test_a_made_up_observation_is_cut_off_and_reported() -> None:
    text = ('Thought: x\nAction: a\nAction Input: {"q": 1}\nObservation: {"count": 3}\n'
            "Final Answer: 3")
    step = parse_react(text, strict=False)
    assert step.hallucinated_observation and step.final_answer is None
    assert step.args == {"q": 1}


@pytest.mark.parametrize(("text", "complaint"), [
    ("just chatting", "no 'Action:'"),
    ("Action: a\n", "no 'Action Input:'"),
    ("Action: a\nAction Input: none", "no {...} object"),
    ('Action: a\nAction Input: {"q": 1', "not closed"),
    ("Action: a\nAction Input: {q: 1}", "neither a JSON object"),
])
def test_lenient_parsing_still_refuses_what_is_not_a_step(text: str, complaint: str) -> None:
    with pytest.raises(ReactFormatError, match=complaint):
        parse_react(text, strict=False)
