"""The code/observation console: one card per turn of the selected RLM call.

A card holds the model's prose, then each code cell (highlighted) with its stdout, stderr and
traceback. Cards are updated in place as events arrive, so a live call grows without rebuilding.
An LLM call shows its prompt and response instead.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QScrollArea, QVBoxLayout, QWidget

from rlm_desktop import formatting as fmt
from rlm_desktop.engine.config import RunConfig
from rlm_desktop.engine.parsing import prose_without_code
from rlm_desktop.review.call_tree import CallNode, Turn
from rlm_desktop.ui.console.blocks import CellView, OutputBlock
from rlm_desktop.ui.theme import monospace_font

DEFAULT_LIMIT = RunConfig.output_limit_chars
"""Output shown as the model saw it, until a run's own limit arrives with its first event."""


def _label(text: str, name: str = "", selectable: bool = True) -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.PlainText)
    if name:
        label.setObjectName(name)
    if selectable:
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


class TurnCard(QFrame):
    """A card for one turn; `update_from` adds what is new since the last call."""

    def __init__(self, index: int, limit: int, font: QFont) -> None:
        super().__init__()
        self.setObjectName("card")
        self._limit, self._font = limit, font
        self.cells: list[CellView] = []
        layout = QVBoxLayout(self)
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
        self.cells_box = QVBoxLayout()
        layout.addLayout(self.cells_box)
        self.pending = _label("waiting for the model…", "muted", selectable=False)
        layout.addWidget(self.pending)

    def update_from(self, turn: Turn) -> None:
        """Show the turn's reply, any new cells, and its duration once it finished."""
        prose = prose_without_code(turn.reply)
        self.prose.setText(prose)
        self.prose.setVisible(bool(prose))
        for cell in turn.cells[len(self.cells) :]:
            view = CellView(cell, self._limit, self._font)
            self.cells.append(view)
            self.cells_box.addWidget(view)
        meta = [f"{len(turn.cells)} cell{'s' if len(turn.cells) != 1 else ''}"]
        if turn.finished:
            meta.append(fmt.seconds(turn.duration_s))
        if turn.truncated:
            meta.append("reply cut at the output-token limit")
        self.meta.setText(" · ".join(meta))
        if turn.finished:
            self.pending.hide()
            if len(self.cells) > 1:
                share = max(200, self._limit // len(self.cells))
                for view in self.cells:
                    for block in view.outputs:
                        block.set_limit(share)
        else:
            self.pending.setText("running code…" if turn.reply else "waiting for the model…")


class ConsoleView(QScrollArea):
    """Shows the turns of one call; `show_call` picks the call, `refresh` adds what is new."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWidgetResizable(True)
        self.setAccessibleName("Code and observation console")
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.node: CallNode | None = None
        self.limit = DEFAULT_LIMIT
        self.code_font = monospace_font()
        self.cards: list[TurnCard] = []
        self._llm_shown = False
        self._answer_shown = False
        self._build_empty()

    def _build_empty(self) -> None:
        body = QWidget()
        self._layout = QVBoxLayout(body)
        self._layout.setContentsMargins(8, 8, 8, 8)
        self._layout.setSpacing(8)
        self.header = _label("Select a call in the tree to see its code and output.", "muted")
        self._layout.addWidget(self.header)
        self._layout.addStretch(1)
        self.setWidget(body)
        self.cards = []
        self._llm_shown = False
        self._answer_shown = False

    def _add(self, widget: QWidget) -> None:
        self._layout.insertWidget(self._layout.count() - 1, widget)

    def show_call(self, node: CallNode | None) -> None:
        """Show `node`'s turns (or clear the console for None)."""
        self.node = node
        self._build_empty()
        if node is not None:
            self.header.setText(
                f"{node.kind.upper()} call {fmt.short_id(node.call_id)} · {node.model} · "
                f"depth {node.depth}\n{fmt.one_line(node.prompt, 300)}"
            )
            self.refresh()

    def refresh(self) -> None:
        """Bring the console up to date with the shown call, keeping the scroll position
        pinned to the bottom when it was there."""
        node = self.node
        if node is None:
            return
        bar = self.verticalScrollBar()
        at_bottom = bar.value() >= bar.maximum() - 4
        if node.kind == "llm":
            self._refresh_llm(node)
        else:
            for turn in node.turns:
                if turn.index >= len(self.cards):
                    card = TurnCard(turn.index, self.limit, self.code_font)
                    self.cards.append(card)
                    self._add(card)
                self.cards[turn.index].update_from(turn)
        if node.answer is not None and not self._answer_shown:
            self._answer_shown = True
            self._add(self._answer_card(node))
        if at_bottom and len(self.cards) > 1:
            QTimer.singleShot(0, lambda: bar.setValue(bar.maximum()))

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

    def _answer_card(self, node: CallNode) -> QFrame:
        card = QFrame()
        card.setObjectName("answerCard")
        layout = QVBoxLayout(card)
        source = f" (via {node.answer_source})" if node.answer_source else ""
        layout.addWidget(_label(f"Answer{source}", "answerTitle", selectable=False))
        answer = _label(node.answer or "")
        answer.setAccessibleName("Call answer")
        layout.addWidget(answer)
        return card

    def cell_views(self) -> list[CellView]:
        """Every cell currently shown, in order."""
        return [cell for card in self.cards for cell in card.cells]
