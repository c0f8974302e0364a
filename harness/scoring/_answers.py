"""Compare an answer with what was expected: the match rules of fixed and real-time answers.

The same functions judge a fixed label against the live API when a task is validated
(``same_value``) and an agent's answer text against the expected value when a run is
scored (``answer_matches``), so a task that validates is scored by the rule it states.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from typing import Any

from toolbed.tasks._task import FACT, Match, OpenAnswer

__all__ = ["answer_matches", "chinese_yes_no", "filled_references", "mentions", "normalise",
           "numbers_in", "render", "same_value", "spelled_numbers"]

_NUMBER = re.compile(r"-?\d+(?:[.,]\d+)*(?:\.\d+)?(?:e[+-]?\d+)?", re.IGNORECASE)


def normalise(text: str) -> str:
    """Case, accents' composition, surrounding punctuation and runs of spaces ignored."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return re.sub(r"\s+", " ", text).strip(" \t\n.,;:!?\"'`()[]")


def render(value: Any) -> str:
    """A value as an answer would say it: lists comma-separated, numbers plainly."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, list):
        return ", ".join(render(v) for v in value)
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    return str(value)


def numbers_in(text: str) -> list[float]:
    """Every number written in ``text`` (thousands separators allowed)."""
    found = []
    for token in _NUMBER.findall(text):
        cleaned = token.replace(",", "") if re.fullmatch(r"-?\d{1,3}(,\d{3})+(\.\d+)?", token) \
            else token.replace(",", ".")
        try:
            found.append(float(cleaned))
        except ValueError:
            continue
    return found


_EN_UNITS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
             "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
             "eighteen", "nineteen"]
_EN_TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_EN_NUMBER = re.compile(
    rf"\b(?:({'|'.join(_EN_TENS)})(?:[- ]({'|'.join(_EN_UNITS[1:10])}))?|({'|'.join(_EN_UNITS)}))"
    r"(?: (hundred|thousand))?\b")
_ZH_DIGIT = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6,
             "七": 7, "八": 8, "九": 9}
_ZH_UNIT = {"十": 10, "百": 100, "千": 1000}
_ZH_COUNTED = ("个本条项次位人元块天篇张件笔份场首页门台名岁周月年日号分秒封章句行列期轮支家间座层"
               "把只款组遍回栋辆双套盒瓶杯节")
_ZH_DIGITS = "零〇一二两三四五六七八九十"
_ZH_NUMBER = re.compile(rf"(?<![第\d])[{_ZH_DIGITS}][{_ZH_DIGITS}百千万]*"
                        rf"(?=[{_ZH_COUNTED}]|小时|分钟|[,.;:!?。，；：！？、)）]|$)")
_TEN_THOUSANDS = re.compile(r"(\d+(?:\.\d+)?)\s*(万|亿)")
_NONE = re.compile(r"\b(?:no|none|zero|nothing|nobody|not any|n't any)\b|没|无|零")


def _chinese_numeral(text: str) -> float:
    """一百二十三 -> 123, 两万 -> 20000, 二〇二五 -> 2025 (digits alone read as digits)."""
    if not any(c in _ZH_UNIT or c == "万" for c in text):
        return float("".join(str(_ZH_DIGIT[c]) for c in text))
    total = section = digit = 0
    for char in text:
        if char in _ZH_DIGIT:
            digit = _ZH_DIGIT[char]
        elif char in _ZH_UNIT:
            section += (digit or 1) * _ZH_UNIT[char]
            digit = 0
        else:                                          # 万
            total += (section + digit or 1) * 10_000
            section = digit = 0
    return float(total + section + digit)


def spelled_numbers(text: str) -> list[float]:
    """Every number written in words: English (three, twenty-one, two hundred),
    Chinese numerals before a measure word or at a clause's end (三本, 一百二十元, 两个;
    not 一起 or 第一, which count nothing), and digits counted in 万 or 亿 (3万 = 30000)."""
    found = []
    for tens, unit, small, scale in _EN_NUMBER.findall(text.casefold()):
        value = (_EN_TENS.index(tens) + 2) * 10 + (_EN_UNITS.index(unit) if unit else 0) \
            if tens else _EN_UNITS.index(small)
        found.append(float(value * {"": 1, "hundred": 100, "thousand": 1000}[scale]))
    found += [_chinese_numeral(m.group(0)) for m in _ZH_NUMBER.finditer(text)]
    found += [float(n) * (10_000 if unit == "万" else 100_000_000)      # 3万元, 1.5亿
              for n, unit in _TEN_THOUSANDS.findall(text)]
    return found


def _as_number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return None
    return None


def _items(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else [value]


_CHINESE_NO = ("不", "没", "否", "无", "未", "非")
_CHINESE_YES = ("是", "对", "有", "已", "能", "会", "可以", "在", "嗯", "好", "允许", "开着")
_CHINESE_AFFIRMING = ("没错", "不错", "没问题", "无误")
"""Set phrases that say yes with a negating character in them."""
_QUOTED = re.compile(r"“[^”]*”|「[^」]*」|『[^』]*』|《[^》]*》|\"[^\"]*\"")
_LEADING_ADVERBS = re.compile(r"^(?:已经|还是|还|都|也|目前|现在|暂时|仍然|依然)+")
_CLAUSE_END = re.compile(r"[,.;:!?。；：！？、\n]")


def chinese_yes_no(answer: str) -> bool | None:
    """What a Chinese answer says to a yes/no question, read off its first clause, as
    Chinese answers one (是的，… / 没有，… / 已经不在了): its first word says yes or no
    (after an adverb such as 已经 or 还, so 已经没有了 is a no); else a clause that
    negates (不, 没, 未 ...) is a no, like “周报”这个标签已经不在了. Quoted names are
    skipped (a tag named 不错 says nothing). None when the clause does neither: a
    statement without an answer word (这个监控已经暂停了) depends on the question."""
    text = _QUOTED.sub("", normalise(answer)).lstrip("，。！、 ")
    clause = _CLAUSE_END.split(text, maxsplit=1)[0].strip()
    rest = _LEADING_ADVERBS.sub("", clause)
    for start in (rest, clause):
        if start.startswith(_CHINESE_AFFIRMING):
            return True
        if start.startswith(_CHINESE_NO):
            return False
    if any(n in clause for n in _CHINESE_NO) and not any(
            a in clause for a in _CHINESE_AFFIRMING):
        return False
    if rest.startswith(_CHINESE_YES) or clause.startswith(_CHINESE_YES):
        return True
    return None


def mentions(answer: str, value: Any, tolerance: float = 0.0) -> bool:
    """Does ``answer`` mention ``value``: as a number (in digits or in words, and zero as
    "none" / 没有 in an answer that names no number), a yes or no (in English anywhere on
    word bounds, or as a Chinese answer's first word), else as a phrase on word bounds
    (``_joins``)."""
    if isinstance(value, bool) and chinese_yes_no(answer) is value:
        return True
    number = _as_number(value)
    if number is not None:
        written, spelled = numbers_in(answer), spelled_numbers(answer)
        if any(math.isclose(n, number, abs_tol=tolerance or 1e-9) for n in written + spelled):
            return True
        return number == 0 and not written and not spelled and bool(_NONE.search(answer.casefold()))
    phrase = normalise(render(value))
    if not phrase:
        return False
    text = normalise(answer)
    for found in re.finditer(re.escape(phrase), text):
        before = text[found.start() - 1] if found.start() else " "
        after = text[found.end()] if found.end() < len(text) else " "
        if not (_joins(before) and _joins(phrase[0]) or _joins(after) and _joins(phrase[-1])):
            return True
    return False


def _joins(char: str) -> bool:
    """Is ``char`` a letter, digit or underscore of a script that spaces its words? Two
    such characters side by side are one word ("Tom" is not in "Tomas"); beside a Chinese
    or Japanese character, which are written without spaces, a word ends ("网址是https://..."
    mentions the URL, "燃气费88元" mentions 燃气费)."""
    return (char.isalnum() or char == "_") and ord(char) < 0x2E80


def answer_matches(answer: str, expected: Any, rule: Match) -> bool:
    """Is ``answer`` (an agent's final text) right, given the expected value and rule?"""
    if rule.match == "phrases":
        text = normalise(answer)
        return all(any(normalise(p) in text for p in group) for group in rule.whitelist) and \
            not any(normalise(p) in text for p in rule.blacklist)
    if rule.match == "exact":
        return normalise(answer) == normalise(render(expected))
    if rule.match == "number" and any(_as_number(v) is None for v in _items(expected)):
        return False
    return all(mentions(answer, v, rule.tolerance) for v in _items(expected))


def same_value(got: Any, expected: Any, rule: Match) -> bool:
    """Is what the API returned (``got``) the labelled value? Lists compare as multisets
    unless ``ordered``; numbers within the tolerance; text normalised."""
    if isinstance(expected, list):
        if not isinstance(got, list) or len(got) != len(expected):
            return False
        if rule.ordered:
            return all(same_value(g, e, rule) for g, e in zip(got, expected, strict=True))
        return Counter(map(_key, got)) == Counter(map(_key, expected)) if rule.tolerance == 0 \
            else all(same_value(g, e, rule) for g, e in zip(
                sorted(got, key=_key), sorted(expected, key=_key), strict=True))
    got_n, expected_n = _as_number(got), _as_number(expected)
    if got_n is not None and expected_n is not None:
        return math.isclose(got_n, expected_n, abs_tol=rule.tolerance or 1e-9)
    return normalise(render(got)) == normalise(render(expected))


def _key(value: Any) -> str:
    number = _as_number(value)
    return repr(number) if number is not None else normalise(render(value))


def filled_references(answer: OpenAnswer, values: Sequence[Any] | None) -> list[str]:
    """An open answer's references with each ``{i}`` replaced by the live value of
    ``facts[i]`` (as the gold chain read it in this run)."""
    found = list(values or [])

    def one(match: re.Match[str]) -> str:
        i = int(match.group(1))
        return render(found[i]) if i < len(found) else match.group(0)

    return [FACT.sub(one, reference) for reference in answer.references]
