"""The task suite: the task format, the loader and its checks, the splits, the
statistics and the near-duplicate check, beside the task files they read
(``selfhosted/<app>.yaml``, ``hosted/<app>.yaml``, ``mcp/<app>.yaml``) and the dialogues
(``dialogues/<app>.yaml``, ``load_dialogues``), which install with them.

    from toolbed.tasks import load_tasks

    suite = load_tasks()
    task = suite.task("kinto-count-buckets")
    task.query, [step.api for step in task.chain]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolbed._lazy import attach as _attach

if TYPE_CHECKING:
    from ._dedup import (
        PARAPHRASE_THRESHOLD,
        Pair,
        examples_near_tasks,
        near_duplicates,
        translated_dialogues,
    )
    from ._dialogue import (
        DIALOGUE_CASSETTES,
        DIALOGUES_DIR,
        GRANULARITIES,
        Dialogue,
        DialogueSuite,
        Turn,
        check_dialogue,
        dialogue_cassette,
        load_dialogues,
    )
    from ._splits import HELD_OUT, SHARES, assign_splits
    from ._stats import GROUPINGS, api_coverage, dialogue_stats, task_stats, task_table
    from ._suite import (
        TASK_CASSETTES,
        TASKS_DIR,
        CheckedCalls,
        TaskSuite,
        check_calls,
        check_flags,
        check_lang,
        check_task,
        load_file,
        load_items,
        load_tasks,
        set_field,
        task_cassette,
        yaml_files,
    )
    from ._task import (
        CATEGORIES,
        LANGS,
        Answer,
        FixedAnswer,
        Match,
        OpenAnswer,
        OperationalAnswer,
        RealtimeAnswer,
        StateCheck,
        Task,
    )

__getattr__, __dir__ = _attach(__name__, __file__)

__all__ = [
    "Answer",
    "CATEGORIES",
    "CheckedCalls",
    "LANGS",
    "DIALOGUES_DIR",
    "DIALOGUE_CASSETTES",
    "Dialogue",
    "DialogueSuite",
    "GRANULARITIES",
    "Turn",
    "check_calls",
    "check_dialogue",
    "check_flags",
    "check_lang",
    "dialogue_cassette",
    "load_dialogues",
    "load_items",
    "FixedAnswer",
    "GROUPINGS",
    "HELD_OUT",
    "Match",
    "OpenAnswer",
    "OperationalAnswer",
    "PARAPHRASE_THRESHOLD",
    "Pair",
    "RealtimeAnswer",
    "SHARES",
    "StateCheck",
    "TASKS_DIR",
    "TASK_CASSETTES",
    "Task",
    "TaskSuite",
    "api_coverage",
    "assign_splits",
    "check_task",
    "examples_near_tasks",
    "load_file",
    "load_tasks",
    "near_duplicates",
    "translated_dialogues",
    "set_field",
    "task_cassette",
    "dialogue_stats",
    "task_stats",
    "task_table",
    "yaml_files",
]
