"""The console shows a call's turns: prose, highlighted code, output, errors, the answer."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QGuiApplication, QWheelEvent
from PySide6.QtWidgets import QApplication, QLabel, QPlainTextEdit, QWidget
from pytestqt.qtbot import QtBot

from rlm_desktop.engine import events as ev
from rlm_desktop.review.call_tree import CallTree, Turn
from rlm_desktop.ui.appearance.theme import monospace_font
from rlm_desktop.ui.console.blocks import CodeView, OutputBlock
from rlm_desktop.ui.console.view import ConsoleView, TurnCard
from tests.synthetic_events import call_finished, call_started, failed_call
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
    assert cells[0].outputs[0].view.toPlainText() == "3"
    assert cells[0].outputs[1].view.objectName() == "stderr"
    assert console.cards[0].pending.isHidden()
    assert console.answer_card is not None


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
    assert block.view.toPlainText() == long_text.removesuffix("\n")
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


def _cell(call_id: str, turn: int, index: int, **fields: object) -> ev.CellExecuted:
    values: dict[str, object] = {
        "code": f"step({turn}, {index})",
        "stdout": "",
        "stderr": "",
        "error": None,
        "duration_s": 0.01,
        **fields,
    }
    return ev.CellExecuted(run_id="r", call_id=call_id, turn=turn, index=index, **values)  # type: ignore[arg-type]


def _turn(call_id: str, turn: int, cells: list[ev.CellExecuted]) -> list[ev.Event]:
    return [
        ev.TurnStarted(run_id="r", call_id=call_id, index=turn),
        *cells,
        ev.TurnExecuted(
            run_id="r",
            call_id=call_id,
            index=turn,
            reply=f"Turn {turn}.",
            code_blocks=len(cells),
            observation="",
            duration_s=0.1,
        ),
    ]


def _lines(n: int) -> str:
    return "".join(f"line {i}\n" for i in range(n))


def _wheel(widget: QWidget, up: bool) -> None:
    """A vertical wheel notch over the middle of `widget`, delivered as Qt delivers one."""
    pos = QPointF(widget.rect().center())
    event = QWheelEvent(
        pos,
        QPointF(widget.mapToGlobal(pos.toPoint())),
        QPoint(0, 0),
        QPoint(0, 120 if up else -120),
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
        Qt.ScrollPhase.NoScrollPhase,
        False,
    )
    QApplication.sendEvent(widget, event)


def test_cell_numbers_match_the_names_in_tracebacks(console: ConsoleView) -> None:
    tree = CallTree()
    call_id, opening = rlm_call_start("r", None, 1, 1.0)
    tree.apply(opening[:1])
    tree.apply(_turn(call_id, 0, [_cell(call_id, 0, 0)]))
    traceback = 'Traceback (most recent call last):\n  File "<cell 3>", line 1\nNameError: x'
    tree.apply(_turn(call_id, 1, [_cell(call_id, 1, 0), _cell(call_id, 1, 1, error=traceback)]))
    console.show_call(tree.nodes[call_id])
    cells = console.cell_views()
    assert [cell.number for cell in cells] == [1, 2, 3]
    assert [cell.failed for cell in cells] == [False, False, True]
    assert f'"<cell {cells[2].number}>"' in cells[2].outputs[0].view.toPlainText()


def test_a_turn_cut_short_says_so(console: ConsoleView) -> None:
    tree = CallTree()
    call_id, opening = rlm_call_start("r", None, 1, 1.0)
    tree.apply(opening)
    console.show_call(tree.nodes[call_id])
    pending = console.cards[0].pending
    assert pending.text() == "running code…"
    tree.apply([call_finished("r", call_id, status="cancelled", error="cancelled")])
    console.refresh()
    assert pending.text() == "Stopped while its code ran: cancelled"
    assert pending.objectName() == "warningLabel"
    assert "cancelled" in console.cards[0].meta.text()


def test_prompts_and_responses_are_not_styled_as_errors(console: ConsoleView) -> None:
    tree = CallTree()
    tree.apply(failed_call("r", "c", "parent", "RateLimitError: slow down"))
    tree.apply([call_started("r", "ok", None, prompt="Summarise"), call_finished("r", "ok")])
    console.show_call(tree.nodes["ok"])
    views = console.findChildren(OutputBlock)
    assert {(b.kind, b.view.objectName()) for b in views} == {
        ("prompt", "stdout"),
        ("response", "stdout"),
    }


def test_the_wheel_over_an_output_box_scrolls_the_console(
    console: ConsoleView, qtbot: QtBot
) -> None:
    tree = CallTree()
    call_id, opening = rlm_call_start("r", None, 1, 1.0)
    tree.apply(opening[:1])
    for turn in range(3):
        tree.apply(_turn(call_id, turn, [_cell(call_id, turn, 0, stdout=_lines(200))]))
    console.resize(600, 400)
    console.show_call(tree.nodes[call_id])
    outer = console.area.verticalScrollBar()
    box = console.cell_views()[0].outputs[0].view
    inner = box.verticalScrollBar()
    qtbot.waitUntil(lambda: outer.maximum() > 0 and inner.maximum() > 0, timeout=2000)
    _wheel(box.viewport(), up=False)
    assert outer.value() > 0
    assert inner.value() == 0
    qtbot.mouseClick(box.viewport(), Qt.MouseButton.LeftButton)
    assert box.hasFocus()
    before = outer.value()
    _wheel(box.viewport(), up=False)
    assert inner.value() > 0, "a box the user clicked into scrolls itself"
    assert outer.value() == before


def test_the_console_follows_a_live_call_until_the_user_scrolls_away(
    console: ConsoleView, qtbot: QtBot
) -> None:
    tree = CallTree()
    call_id, opening = rlm_call_start("r", None, 1, 1.0)
    tree.apply(opening[:1])
    console.resize(600, 300)
    console.show_call(tree.nodes[call_id])
    bar = console.area.verticalScrollBar()
    assert console.following
    for turn in range(3):
        tree.apply(_turn(call_id, turn, [_cell(call_id, turn, 0, stdout=_lines(12))]))
        console.refresh()
    qtbot.waitUntil(lambda: bar.maximum() > 0 and bar.value() == bar.maximum(), timeout=2000)
    _wheel(console.area.viewport(), up=True)
    assert bar.value() < bar.maximum()
    assert not console.following
    assert console.follow_button.isVisible()
    held = bar.value()
    tree.apply(_turn(call_id, 3, [_cell(call_id, 3, 0, stdout=_lines(12))]))
    console.refresh()
    qtbot.waitUntil(lambda: len(console.cell_views()) == 4, timeout=2000)
    QApplication.processEvents()
    assert bar.value() == held
    console.follow_button.click()
    tree.apply(_turn(call_id, 4, [_cell(call_id, 4, 0, stdout=_lines(12))]))
    console.refresh()
    qtbot.waitUntil(lambda: bar.value() == bar.maximum(), timeout=2000)
    assert console.following
    assert not console.follow_button.isVisible()


def test_jump_to_a_turn(console: ConsoleView, qtbot: QtBot) -> None:
    tree = CallTree()
    call_id, opening = rlm_call_start("r", None, 1, 1.0)
    tree.apply(opening[:1])
    for turn in range(4):
        tree.apply(_turn(call_id, turn, [_cell(call_id, turn, 0, stdout=_lines(15))]))
    tree.apply([_cell(call_id, 3, 1, error="ValueError: no")])
    console.resize(600, 300)
    console.show_call(tree.nodes[call_id])
    assert console.turns.isVisible()
    assert console.turns.count() == 4
    assert console.turns.itemText(3) == "Turn 4: 2 cells · 1 raised · 0.10 s"
    bar = console.area.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0, timeout=2000)
    body = console.area.widget()
    assert body is not None
    top = console.cards[2].mapTo(body, QPoint(0, 0)).y()
    assert 0 < top < bar.maximum()
    console.turns.activated.emit(2)
    qtbot.waitUntil(lambda: bar.value() == top, timeout=2000)
    assert console.turns.currentIndex() == -1


def test_wrap_toggle_wraps_long_code_lines(console: ConsoleView) -> None:
    tree = CallTree()
    call_id, opening = rlm_call_start("r", None, 1, 1.0)
    tree.apply(opening[:1])
    long_line = "rows = [" + ", ".join(f"'item {i}'" for i in range(40)) + "]"
    tree.apply(_turn(call_id, 0, [_cell(call_id, 0, 0, code=long_line)]))
    console.show_call(tree.nodes[call_id])
    code = console.cell_views()[0].code
    unwrapped = code.height()
    assert code.lineWrapMode() == QPlainTextEdit.LineWrapMode.NoWrap
    console.wrap.setChecked(True)
    assert code.lineWrapMode() == QPlainTextEdit.LineWrapMode.WidgetWidth
    assert code.height() > unwrapped
    tree.apply(_turn(call_id, 1, [_cell(call_id, 1, 0, code=long_line)]))
    console.refresh()
    later = console.cell_views()[1].code
    assert later.lineWrapMode() == QPlainTextEdit.LineWrapMode.WidgetWidth


def test_show_all_says_what_is_shown(qtbot: QtBot) -> None:
    block = OutputBlock("stdout", _lines(500), 1000, monospace_font())
    qtbot.addWidget(block)
    assert (
        block.note.text() == f"cut to 1,000 of {len(_lines(500)):,} characters, as the model saw it"
    )
    block.show_all_button.click()
    assert block.show_all_button.text() == "Show less"
    assert block.show_all_button.accessibleName() == "Show less stdout"
    assert block.note.text() == f"all {len(_lines(500)):,} characters; the model saw 1,000"
    block.show_all_button.click()
    assert block.show_all_button.text() == "Show all"
    assert block.note.text().startswith("cut to 1,000")

    short = OutputBlock("stdout", _lines(50), 1000, monospace_font())
    qtbot.addWidget(short)
    assert short.show_all_button.isHidden()
    short.set_limit(200)
    assert not short.show_all_button.isHidden()
    assert short.view.toPlainText() != _lines(50).removesuffix("\n")
    assert short.note.text().startswith("cut to 200 of")


def test_a_partial_answer_is_not_shown_as_a_full_one(console: ConsoleView) -> None:
    tree = CallTree()
    call_id, opening = rlm_call_start("r", None, 1, 1.0)
    tree.apply(opening)
    tree.apply(
        [
            ev.AnswerSubmitted(run_id="r", call_id=call_id, answer="maybe 42", source="partial"),
            call_finished("r", call_id, status="max_turns", error="no answer within 1 turns"),
        ]
    )
    console.show_call(tree.nodes[call_id])
    card = console.answer_card
    assert card is not None
    assert card.property("tone") == "limit"
    titles = [label.text() for label in card.findChildren(QLabel)]
    assert "No answer (turn limit)" in titles
