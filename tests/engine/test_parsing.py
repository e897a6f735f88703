"""Reading model replies: fenced code blocks, and the rules for a final answer written in prose."""

from __future__ import annotations

import pytest

from rlm_desktop.engine.parsing import (
    code_being_written,
    extract_code_blocks,
    find_prose_final,
    prose_without_code,
)


@pytest.mark.parametrize(
    ("reply", "blocks"),
    [
        ("Let me look.\n```repl\nprint(len(context))\n```", ["print(len(context))"]),
        ("```python\nx = 1\n```", ["x = 1"]),
        ("```py\nx = 1\n```", ["x = 1"]),
        ("```REPL\nx = 1\n```", ["x = 1"]),
        ("```repl   \nx = 1\n```", ["x = 1"]),
        ("```repl\nx = 1```", ["x = 1"]),
        ("```repl\na = 1\n```\nthen\n```python\nb = 2\n```", ["a = 1", "b = 2"]),
        ("```repl\nfor i in range(2):\n    print(i)\n```", ["for i in range(2):\n    print(i)"]),
    ],
)
def test_tagged_blocks_are_extracted_in_order(reply: str, blocks: list[str]) -> None:
    assert extract_code_blocks(reply) == blocks


@pytest.mark.parametrize(
    "reply",
    [
        "No code here, just thinking.",
        "```\nprint('untagged')\n```",
        "```bash\nls -la\n```",
        '```json\n{"a": 1}\n```',
        "```repl\n   \n```",
        "Inline ```repl x = 1``` is not a block.",
    ],
)
def test_untagged_empty_or_foreign_blocks_are_not_run(reply: str) -> None:
    assert extract_code_blocks(reply) == []


def test_a_fence_inside_a_code_line_does_not_end_the_block() -> None:
    # CommonMark: only a line that starts with the fence closes a block. Models often build
    # prompts with fences in them, e.g. llm_query(f"Summarise: ```{chunk}```").
    reply = '```repl\nmarkdown = "a ``` b"\nprint(markdown)\n```'
    assert extract_code_blocks(reply) == ['markdown = "a ``` b"\nprint(markdown)']


def test_prose_without_code_keeps_only_the_words() -> None:
    reply = "First I count.\n```repl\nprint(1)\n```\nThen I answer."
    assert prose_without_code(reply) == "First I count.\n\nThen I answer."
    assert prose_without_code("```repl\nprint(1)\n```") == ""


@pytest.mark.parametrize(
    ("reply", "kind", "value"),
    [
        ("FINAL(42)", "FINAL", "42"),
        ("I have read every ledger.\nFINAL(The total is 42.)", "FINAL", "The total is 42."),
        ("FINAL('a quoted answer')", "FINAL", "a quoted answer"),
        ('FINAL("double quoted")', "FINAL", "double quoted"),
        ("   FINAL(indented)   \n\n", "FINAL", "indented"),
        ("Summary below.\nFINAL(line one\nline two)", "FINAL", "line one\nline two"),
        ("FINAL(f(x) = 2x)", "FINAL", "f(x) = 2x"),
        ("FINAL_VAR(total)", "FINAL_VAR", "total"),
        ('Done.\nFINAL_VAR("total")\n', "FINAL_VAR", "total"),
    ],
)
def test_a_final_line_in_a_reply_without_code_is_accepted(
    reply: str, kind: str, value: str
) -> None:
    final = find_prose_final(reply)
    assert final is not None
    assert (final.kind, final.value) == (kind, value)


@pytest.mark.parametrize(
    "reply",
    [
        "I will call FINAL(42) once I have checked the second ledger.",
        "The answer is FINAL(42)",
        "FINAL(42) is what I expect, but let me verify first.",
        "FINAL(42)\nBut first let me check the second ledger.",
        "Use FINAL_VAR(total) when done.",
        "Let me compute it.\n```repl\ntotal = 42\n```\nFINAL(42)",
        "FINAL(42)\n```\nsome untagged block\n```",
        "Nothing final here.",
        "FINAL(",
    ],
)
def test_a_final_mention_in_prose_is_not_an_answer(reply: str) -> None:
    assert find_prose_final(reply) is None


def test_prose_after_a_final_line_is_never_swallowed_into_the_answer() -> None:
    # The reply does end with ")", but the FINAL line closed long before: the answer must be 42
    # (or nothing), never the text that follows it.
    final = find_prose_final("FINAL(42)\nI am fairly sure of it (though not certain)")
    assert final is None or final.value == "42"


WRITING = "Hi\n```repl\na = 1\n```\nthen\n```repl\nb = 2\n```\nmore\n```python\nc = "


@pytest.mark.parametrize(
    ("reply", "index", "body"),
    [
        (WRITING, None, "c = "),
        (WRITING, 0, "a = 1"),
        (WRITING, 1, "b = 2"),
        (WRITING, 2, "c = "),
        (WRITING, 3, ""),
        ("```repl\na = 1\n```", 1, ""),
        ("no code yet", None, ""),
    ],
)
def test_the_code_being_written_is_the_latest_block_or_the_one_asked_for(
    reply: str, index: int | None, body: str
) -> None:
    assert code_being_written(reply, index) == body
