"""The stop rule on its own: where a reply is complete, whatever the size of its pieces."""

from __future__ import annotations

import pytest

from rlm_desktop.engine.code_stop import AFTER_CODE, FIRST_BLOCK, PROSE_BOUND, CodeStop


def cut_of(reply: str, piece: int, rule: str = AFTER_CODE) -> int | None:
    """Where `CodeStop` cuts `reply` streamed in pieces of `piece` characters (None: nowhere)."""
    stop = CodeStop(rule)
    for end in range(piece, len(reply) + piece, piece):
        cut = stop.end(reply[:end])
        if cut is not None:
            return cut
    return None


def block(code: str) -> str:
    return f"```repl\n{code}\n```\n"


REPLIES = {
    "a long preamble, then blocks": "Plan: "
    + "read, " * 400
    + "\n"
    + block("a = 1")
    + block("b = 2"),
    "blocks joined by short prose": (block("a = 1") + "x" * 500 + "\n") * 3 + block("FINAL(a)"),
    "an indented fence after prose at the bound": (
        block("a = 1") + "y" * (PROSE_BOUND - 4) + "\n   ```repl\nb = 2\n```\n"
    ),
    "prose past the bound": block("a = 1") + "z " * PROSE_BOUND + "\n" + block("b = 2"),
    "an Out[ line": block("a = 1") + "Out[3]: 1\n" + block("b = 2"),
    "a claimed result mid-sentence": block("a = 1") + "Running it, the output is 1.\n",
    "a fence in a string": block('s = "```"\nt = """\n```python\n"""') + block("u = s"),
}
CUTS = {
    "a long preamble, then blocks": None,
    "blocks joined by short prose": len(REPLIES["blocks joined by short prose"]) - 1,  # FINAL
    "an indented fence after prose at the bound": None,
    "prose past the bound": len(block("a = 1")) - 1,
    "an Out[ line": len(block("a = 1")) - 1,
    "a claimed result mid-sentence": len(block("a = 1")) - 1,
    "a fence in a string": None,
}


@pytest.mark.parametrize("name", REPLIES)
@pytest.mark.parametrize("piece", [1, 3, 64, 100_000])
def test_the_cut_is_the_same_whatever_the_pieces(name: str, piece: int) -> None:
    assert cut_of(REPLIES[name], piece) == CUTS[name]


def test_the_first_block_rule_cuts_at_the_first_closing_fence() -> None:
    reply = "Look.\n" + block("a = 1") + "then\n" + block("b = 2")
    assert cut_of(reply, 5, FIRST_BLOCK) == len("Look.\n" + block("a = 1")) - 1


def test_a_rule_that_is_not_a_choice_is_refused() -> None:
    with pytest.raises(ValueError, match="code_stop must be 'after-code' or 'first-block'"):
        CodeStop("whole-reply")


@pytest.mark.parametrize("submits", ["FINAL(a)", "FINAL_VAR('a')", 'answer["ready"] = True'])
def test_a_block_that_submits_the_answer_is_the_last_read(submits: str) -> None:
    reply = block(f"a = 1\n{submits}") + "Done, the answer is 1.\n" + block("print(a)")
    assert cut_of(reply, 3) == len(block(f"a = 1\n{submits}")) - 1
    indented = block(f"if a:\n    {submits}") + "then\n" + block("print(a)")
    assert cut_of(indented, 3) is None
