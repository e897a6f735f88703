"""The console shows a call's turns: prose, highlighted code, output, errors, the answer."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QGuiApplication
from pytestqt.qtbot import QtBot

from rlm_desktop.engine import events as ev
from rlm_desktop.review.call_tree import CallTree, Turn
from rlm_desktop.ui.console.blocks import CodeView
from rlm_desktop.ui.console.view import ConsoleView, TurnCard
from rlm_desktop.ui.theme import monospace_font
from tests.synthetic_events import call_finished, call_started
from tests.ui.synthetic import rlm_call_end, rlm_call_start


@pytest.fixture
def console(qtbot: QtBot) -> ConsoleView:
    view = ConsoleView()
    qtbot.addWidget(view)
    view.resize(700, 600)
    view.show()
    return view


def _formats(code: CodeView) -> list[str]:
    """Foreground colours the highlighter put on the first line."""
    block = code.document().firstBlock()
    return [r.format.foreground().color().name() for r in block.layout().formats()]


@pytest.mark.parametrize(
    ("reply", "prose"),
    [
        ("Look at it.\n```repl\nprint(1)\n```\n\n\nThen answer.", "Look at it.\n\nThen answer."),
        ("Counting first.\n```python\nlen(context", "Counting first."),
        ('The data:\n```json\n{"a": 1}\n```', 'The data:\n```json\n{"a": 1}\n```'),
    ],
    ids=["run-block", "block-cut-off", "other-fence"],
)
def test_a_turn_shows_the_words_around_the_code_it_runs(
    qtbot: QtBot, reply: str, prose: str
) -> None:
    card = TurnCard(0, 1000, monospace_font())
    qtbot.addWidget(card)
    card.update_from(Turn(index=0, reply=reply))
    assert card.prose.text() == prose


def test_code_is_highlighted_with_pygments(qtbot: QtBot) -> None:
    code = CodeView('def f(x):\n    return "a" + str(x)  # note\n', monospace_font())
    qtbot.addWidget(code)
    colours = _formats(code)
    assert len(colours) >= 2
    assert len(set(colours)) >= 2


def test_multiline_strings_keep_their_colour_across_lines(qtbot: QtBot) -> None:
    code = CodeView('x = """first\nsecond line\n"""\n', monospace_font())
    qtbot.addWidget(code)
    second = code.document().findBlockByNumber(1)
    assert second.layout().formats(), "the second line of the string is coloured too"


def test_turns_grow_live_and_show_outputs(console: ConsoleView) -> None:
    tree = CallTree()
    call_id, opening = rlm_call_start("r", None, 0, 1.0)
    tree.apply(opening)
    console.show_call(tree.nodes[call_id])
    assert len(console.cards) == 1
    assert not console.cards[0].pending.isHidden()
    assert console.cell_views() == []
    tree.apply(
        rlm_call_end(
            "r",
            call_id,
            2.0,
            "42",
            stderr="warning: careful",
            error="Traceback (most recent call last):\nValueError: bad",
        )
    )
    console.refresh()
    cells = console.cell_views()
    assert len(cells) == 1
    kinds = [block.kind for block in cells[0].outputs]
    assert kinds == ["stdout", "stderr", "traceback"]
    assert cells[0].outputs[0].view.toPlainText() == "3\n"
    assert cells[0].outputs[1].view.objectName() == "stderr"
    assert console.cards[0].pending.isHidden()
    assert console._answer_shown


def test_long_output_is_cut_like_the_model_saw_it(console: ConsoleView) -> None:
    tree = CallTree()
    call_id, opening = rlm_call_start("r", None, 0, 1.0)
    tree.apply(opening)
    long_text = "".join(f"line {n}\n" for n in range(10_000))
    tree.apply(
        [
            ev.CellExecuted(
                run_id="r",
                call_id=call_id,
                turn=0,
                index=0,
                code="print(x)",
                stdout=long_text,
                stderr="",
                error=None,
                duration_s=0.1,
            )
        ]
    )
    console.limit = 1000
    console.show_call(tree.nodes[call_id])
    block = console.cell_views()[0].outputs[0]
    assert block.truncated
    shown = block.view.toPlainText()
    assert shown.startswith("line 0\n")
    assert shown.rstrip().endswith("line 9999")
    assert "characters cut" in shown
    assert len(shown) < 1100
    assert block.show_all_button is not None
    block.show_all_button.click()
    assert block.view.toPlainText() == long_text
    block.copy_button.click()
    assert QGuiApplication.clipboard().text() == long_text


def test_llm_call_shows_prompt_and_response(console: ConsoleView) -> None:
    tree = CallTree()
    tree.apply(
        [
            call_started("r", "c", None, prompt="Summarise this", model="m"),
            call_finished(
                "r", "c", response="A summary", input_tokens=1, output_tokens=1, cost_usd=0.0
            ),
        ]
    )
    console.show_call(tree.nodes["c"])
    assert console._llm_shown
