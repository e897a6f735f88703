"""The code/observation console: one card per turn of the selected RLM call.

A card holds the model's prose, then each code cell (highlighted) with its stdout, stderr and
traceback. Cards are updated in place as events arrive, so a live call grows without rebuilding.
An LLM call shows its prompt and response instead. A bar above the cards jumps to a turn and
wraps long code lines. While the shown call runs, the console keeps its newest output in sight,
until the user scrolls away from the bottom (and again once they scroll back).
"""

from __future__ import annotations

import shiboken6
from PySide6.QtCore import QPoint, Qt, QTimer
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QAbstractSlider,
    QCheckBox,
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from rlm_desktop import formatting as fmt
from rlm_desktop.engine.config import RunConfig
from rlm_desktop.engine.parsing import code_being_written, prose_without_code
from rlm_desktop.review.call_tree import CallNode, Turn
from rlm_desktop.ui.appearance.theme import monospace_font, repolish
from rlm_desktop.ui.console.blocks import CellView, CodeView, OutputBlock
from rlm_desktop.ui.shared.widgets import tool_button

DEFAULT_LIMIT = RunConfig.output_limit_chars
"""Output shown as the model saw it, until a run's own limit arrives with its first event."""
BOTTOM_SLACK = 4
"""Pixels from the bottom that still count as "at the bottom"."""


def _label(text: str, name: str = "", selectable: bool = True) -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.PlainText)
    if name:
        label.setObjectName(name)
    if selectable:
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


def _tone_label(status: str) -> str:
    """The object name that colours a line about a call's ending."""
    tone = fmt.status_tone(status)
    return {"error": "errorLabel", "limit": "warningLabel", "stopped": "warningLabel"}.get(
        tone, "muted"
    )


class TurnCard(QFrame):
    """A card for one turn; `update_from` adds what is new since the last call."""

    def __init__(self, index: int, limit: int, font: QFont, wrap: bool = False) -> None:
        super().__init__()
        self.setObjectName("card")
        self.index = index
        self._limit, self._font, self._wrap = limit, font, wrap
        self.cells: list[CellView] = []
        layout = self._column = QVBoxLayout(self)
        layout.setContentsMargins(10, 8, 10, 8)
        header = QHBoxLayout()
        header.addWidget(_label(f"Turn {index + 1}", "cardTitle", selectable=False))
        header.addStretch(1)
        self.meta = _label("", "muted", selectable=False)
        header.addWidget(self.meta)
        layout.addLayout(header)
        self.prose = _label("")
        self.prose.setAccessibleName(f"Turn {index + 1} reply")
        layout.addWidget(self.prose)
        self.live_code: CodeView | None = None
        """The code of the block the model is writing, then of the block whose cell runs."""
        self.cells_box = QVBoxLayout()
        layout.addLayout(self.cells_box)
        self.pending = _label("waiting for the model…", "muted", selectable=False)
        self.pending.setAccessibleName(f"Turn {index + 1} progress")
        layout.addWidget(self.pending)

    def update_from(self, turn: Turn, error: str | None = None) -> None:
        """Show the turn's reply, any new cells, and its duration once it finished.

        `error` is the call's, shown when the call ended before the turn did.
        """
        written = turn.reply or turn.streaming
        prose = prose_without_code(written)
        self.prose.setText(prose)
        self.prose.setVisible(bool(prose))
        running = len(turn.cells) if turn.reply else None  # the reply is whole: its cells run
        self._show_live_code("" if turn.finished else code_being_written(written, running))
        for position in range(len(self.cells), len(turn.cells)):
            number = (
                turn.cell_numbers[position] if position < len(turn.cell_numbers) else position + 1
            )
            view = CellView(turn.cells[position], number, self._limit, self._font, self._wrap)
            self.cells.append(view)
            self.cells_box.addWidget(view)
        self.meta.setText(turn.summary())
        if turn.finished:
            self.pending.hide()
            if len(self.cells) > 1:
                share = max(200, self._limit // len(self.cells))
                for view in self.cells:
                    for block in view.outputs:
                        block.set_limit(share)
        else:
            self.pending.setText(turn.progress(error))
            name = _tone_label(turn.closed) if turn.closed else "muted"
            if self.pending.objectName() != name:
                self.pending.setObjectName(name)
                repolish(self.pending)

    def _show_live_code(self, code: str) -> None:
        if not code:
            if self.live_code is not None:
                self.live_code.hide()
            return
        if self.live_code is None:
            self.live_code = CodeView(code, self._font, self._wrap)
            self.live_code.setAccessibleName(f"Turn {self.index + 1} code as it is written")
            self._column.insertWidget(self._column.indexOf(self.pending), self.live_code)
        elif self.live_code.toPlainText() != code:
            self.live_code.setPlainText(code)
        self.live_code.refit()
        self.live_code.show()

    def set_wrap(self, wrap: bool) -> None:
        """Wrap long code lines (or not) in this card's cells."""
        self._wrap = wrap
        for view in self.cells:
            view.code.set_wrap(wrap)


class ConsoleView(QWidget):
    """Shows the turns of one call; `show_call` picks the call, `refresh` adds what is new."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Code and observation console")
        self.node: CallNode | None = None
        self.limit = DEFAULT_LIMIT
        self.code_font = monospace_font()
        self.cards: list[TurnCard] = []
        self.following = False
        self._anchor: QWidget | None = None
        self._llm_shown = False
        self.answer_card: QFrame | None = None
        """The card with the call's answer, once it submitted one."""
        self._answer_title: QLabel | None = None

        self.turns = QComboBox()
        self.turns.setAccessibleName("Jump to turn")
        self.turns.setToolTip("Jump to a turn of this call")
        self.turns.setPlaceholderText("Jump to turn…")
        self.turns.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.turns.activated.connect(self._jump)
        self.wrap = QCheckBox("Wrap code")
        self.wrap.setToolTip("Wrap long code lines instead of scrolling sideways")
        self.wrap.toggled.connect(self._set_wrap)
        self.follow_button = tool_button(
            "Follow the run", "Scroll to the newest output and keep it in sight", self.follow
        )
        self.follow_button.hide()
        bar = QHBoxLayout()
        bar.setContentsMargins(0, 0, 0, 0)
        bar.addWidget(self.turns)
        bar.addWidget(self.follow_button)
        bar.addStretch(1)
        bar.addWidget(self.wrap)

        self.area = QScrollArea()
        self.area.setWidgetResizable(True)
        self.area.setFrameShape(QFrame.Shape.NoFrame)
        self.area.setAccessibleName("Turns")
        scroll_bar = self.area.verticalScrollBar()
        scroll_bar.rangeChanged.connect(self._on_range)
        scroll_bar.actionTriggered.connect(self._on_user_scroll)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(bar)
        layout.addWidget(self.area, 1)
        self._build_empty()

    def _build_empty(self) -> None:
        body = QWidget()
        self._layout = QVBoxLayout(body)
        self._layout.setContentsMargins(8, 8, 8, 8)
        self._layout.setSpacing(8)
        self.header = _label("Select a call in the tree to see its code and output.", "muted")
        self._layout.addWidget(self.header)
        self._layout.addStretch(1)
        self.area.setWidget(body)
        self.cards = []
        self._llm_shown = False
        self.answer_card = self._answer_title = None
        self.turns.clear()
        self.turns.hide()

    def _add(self, widget: QWidget) -> None:
        self._layout.insertWidget(self._layout.count() - 1, widget)

    def show_call(self, node: CallNode | None) -> None:
        """Show `node`'s turns (or clear the console for None).

        A running call is followed from its newest output; a finished one opens at its top.
        """
        self.node = node
        self._build_empty()
        self.following = node is not None and node.running
        self._anchor = None
        if node is not None:
            self.header.setText(
                f"{node.kind.upper()} call {fmt.short_id(node.call_id)} · {node.model} · "
                f"depth {node.depth}\n{fmt.one_line(node.prompt, 300)}"
            )
            self.refresh()
        self._show_follow()

    def refresh(self) -> None:
        """Bring the console up to date with the shown call."""
        node = self.node
        if node is None:
            return
        if node.kind == "llm":
            self._refresh_llm(node)
        else:
            for turn in node.turns:
                if turn.index >= len(self.cards):
                    card = TurnCard(turn.index, self.limit, self.code_font, self.wrap.isChecked())
                    self.cards.append(card)
                    self._add(card)
                    self.turns.addItem("")
                    self.turns.setCurrentIndex(-1)
                self.cards[turn.index].update_from(turn, node.error)
                self.turns.setItemText(turn.index, f"Turn {turn.index + 1}: {card_line(turn)}")
            self.turns.setVisible(len(self.cards) > 1)
        if node.answer is not None:
            self._show_answer(node)
        self._show_follow()

    def _refresh_llm(self, node: CallNode) -> None:
        if self._llm_shown or node.running:
            return
        self._llm_shown = True
        card = QFrame()
        card.setObjectName("card")
        layout = QVBoxLayout(card)
        layout.addWidget(_label("LLM call: no code runs here.", "cardTitle", selectable=False))
        layout.addWidget(OutputBlock("prompt", node.prompt, self.limit, self.code_font))
        if node.error:
            layout.addWidget(OutputBlock("traceback", node.error, self.limit, self.code_font))
        layout.addWidget(OutputBlock("response", node.response, self.limit, self.code_font))
        self._add(card)

    def _show_answer(self, node: CallNode) -> None:
        if self.answer_card is None:
            card = self.answer_card = QFrame()
            card.setObjectName("answerCard")
            layout = QVBoxLayout(card)
            self._answer_title = _label("", "answerTitle", selectable=False)
            layout.addWidget(self._answer_title)
            answer = _label(node.answer or "")
            answer.setAccessibleName("Call answer")
            layout.addWidget(answer)
            self._add(card)
        assert self._answer_title is not None
        tone = "ok" if node.running else fmt.status_tone(node.status)
        if node.answer_source == "partial" or tone != "ok":
            title = fmt.ending_title(node.status, answered=False)
        else:
            title = f"Answer (via {node.answer_source})" if node.answer_source else "Answer"
        self._answer_title.setText(title)
        for widget in (self.answer_card, self._answer_title):
            if widget.property("tone") != tone:
                widget.setProperty("tone", tone)
                repolish(widget)

    def _on_range(self, _minimum: int, maximum: int) -> None:
        if self.following:
            self.area.verticalScrollBar().setValue(maximum)
        elif self._anchor is not None:
            self._scroll_to_anchor()

    def _on_user_scroll(self, action: int) -> None:
        if action == QAbstractSlider.SliderAction.SliderNoAction.value:
            return
        # The slider already sits where the action puts it; its value follows after this signal.
        bar = self.area.verticalScrollBar()
        self.following = bar.sliderPosition() >= bar.maximum() - BOTTOM_SLACK
        self._anchor = None
        self._show_follow()

    def _show_follow(self) -> None:
        running = self.node is not None and self.node.running
        self.follow_button.setVisible(running and not self.following)

    def follow(self) -> None:
        """Scroll to the newest output and keep it in sight as the call grows."""
        self.following, self._anchor = True, None
        bar = self.area.verticalScrollBar()
        bar.setValue(bar.maximum())
        self._show_follow()

    def _jump(self, index: int) -> None:
        self.turns.setCurrentIndex(-1)
        if 0 <= index < len(self.cards):
            self.reveal(self.cards[index])

    def reveal(self, widget: QWidget) -> None:
        """Scroll until `widget`'s top is at the top, and keep it there while the cards settle
        (boxes fit their text once laid out), until the user scrolls; stops following."""
        self.following, self._anchor = False, widget
        self._show_follow()
        QTimer.singleShot(0, self, self._scroll_to_anchor)

    def _scroll_to_anchor(self) -> None:
        widget, body = self._anchor, self.area.widget()
        if widget is None or body is None:
            return
        if not shiboken6.isValid(widget) or not body.isAncestorOf(widget):
            self._anchor = None  # another call is shown by now
            return
        self.area.verticalScrollBar().setValue(widget.mapTo(body, QPoint(0, 0)).y())

    def reveal_error(self, node: CallNode | None = None) -> bool:
        """Scroll to the first cell of the shown call that raised; False when none did."""
        if node is not None and node is not self.node:
            return False
        failed = next((cell for cell in self.cell_views() if cell.failed), None)
        if failed is None:
            return False
        self.reveal(failed)
        return True

    def _set_wrap(self, wrap: bool) -> None:
        for card in self.cards:
            card.set_wrap(wrap)

    def cell_views(self) -> list[CellView]:
        """Every cell currently shown, in order."""
        return [cell for card in self.cards for cell in card.cells]


def card_line(turn: Turn) -> str:
    """A turn in the jump list: its cells and errors, or what it is doing."""
    if turn.finished or turn.closed:
        return turn.summary()
    return turn.progress()
