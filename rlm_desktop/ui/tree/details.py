"""The detail panel: everything about the selected call, with its full prompt and response."""

from __future__ import annotations

import time
from collections.abc import Callable
from html import escape

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import (
    QLabel,
    QPlainTextEdit,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from rlm_desktop import formatting as fmt
from rlm_desktop.review.call_tree import CallNode
from rlm_desktop.ui.appearance.theme import monospace_font

TEXT_LEAST_LINES = 2
"""Lines a tab's text keeps when the window is short (the tree and console need the room)."""


class _TextTab(QPlainTextEdit):
    """A tab's read-only text, as low as `TEXT_LEAST_LINES` lines when room is short."""

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        """`TEXT_LEAST_LINES` lines and the frame (Qt's own takes room for two scroll bars)."""
        least = super().minimumSizeHint()
        lines = self.fontMetrics().lineSpacing() * TEXT_LEAST_LINES
        return QSize(least.width(), min(least.height(), lines + 2 * self.frameWidth() + 4))


def _text_tab(name: str) -> QPlainTextEdit:
    edit = _TextTab()
    edit.setReadOnly(True)
    edit.setAccessibleName(name)
    edit.setFont(monospace_font())
    return edit


class DetailPanel(QWidget):
    """Facts about one call and tabs with its prompt, response and error, and the exact messages
    each of its requests sent (*Messages*, read from the store through `trace_source`, a call
    id to the trace's text, when that tab is shown)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.node: CallNode | None = None
        self.clock = time.time
        self.run_elapsed: Callable[[], float] | None = None
        """The run's wall time so far, which the root call's own is compared with."""
        self.trace_source: Callable[[str], str] | None = None
        self.summary = QLabel("No call selected.")
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.summary.setObjectName("muted")
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.summary.setAccessibleName("Call summary")
        self.prompt = _text_tab("Prompt")
        self.response = _text_tab("Response")
        self.error = _text_tab("Error")
        self.messages = _text_tab("Messages sent")
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.prompt, "Prompt")
        self.tabs.addTab(self.response, "Response")
        self.tabs.addTab(self.error, "Error")
        self.tabs.addTab(self.messages, "Messages")
        self.tabs.setTabToolTip(
            3, "Every request of the call: the messages it sent, with their tokens, and its reply"
        )
        self.tabs.currentChanged.connect(lambda _index: self.show_trace())
        self.tabs.setAccessibleName("Call details")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.addWidget(self.summary)
        layout.addWidget(self.tabs, 1)

    def show_call(self, node: CallNode | None) -> None:
        """Show `node` (or nothing)."""
        self.node = node
        if node is None:
            self.summary.setText("No call selected.")
            for edit in (self.prompt, self.response, self.error, self.messages):
                edit.clear()
            return
        self.prompt.setPlainText(node.prompt)
        self.refresh()
        self.show_trace()

    def show_trace(self) -> None:
        """Read the shown call's trace into *Messages*, when that tab is the one in view."""
        if self.tabs.currentWidget() is not self.messages or self.node is None:
            return
        if self.trace_source is None:
            self.messages.setPlainText("No session to read the messages from.")
            return
        self.messages.setPlainText(self.trace_source(self.node.call_id))

    def _run_wall(self, node: CallNode) -> str:
        """For the root: the run's time beside it (the answer card's figure, which counts the
        run's start-up too, so the two differ)."""
        if node.parent is not None or self.run_elapsed is None:
            return ""
        return f" (the run: {fmt.seconds(self.run_elapsed())} in all, its start-up included)"

    def refresh(self) -> None:
        """Update the facts, response and error of the shown call."""
        node = self.node
        if node is None:
            return
        s = node.subtree
        facts = [
            f"<b>{node.kind.upper()}</b> {escape(node.call_id)}",
            f"model {escape(fmt.model_and_id(node.model))}",  # a saved session's names are data
            f"status <b>{fmt.status_text(node.status)}</b>",
            f"depth {node.depth}",
            *(
                [f"made by {escape(node.parent.call_id)}'s {node.spawned_by}"]
                if node.parent is not None and node.spawned_by
                else []
            ),
            f"{fmt.tokens(node.input_tokens)} in / {fmt.tokens(node.output_tokens)} out",
            node.cost_text,
            f"{fmt.seconds(node.duration(self.clock()))} wall" + self._run_wall(node),
            f"{fmt.seconds(node.provider_wait_s)} waiting for the model",
            f"{node.requests} request{'s' if node.requests != 1 else ''}",
        ]
        if node.retries:
            facts.append(f"{node.retries} retries")
        if node.cell_errors:
            facts.append(f"<b>{fmt.plural(node.cell_errors, 'cell')} raised</b>")
        if node.worker_restarts:
            facts.append(f"worker restarted {node.worker_restarts}×")
        if node.compactions:
            facts.append(f"history compacted {node.compactions}×")
        if node.children:
            facts.append(f"subtree: {s.summary()}")
        self.summary.setText(" · ".join(facts))
        response = node.answer if node.answer is not None else node.response
        if response != self.response.toPlainText():
            self.response.setPlainText(response)
        error = node.error or ""
        if error != self.error.toPlainText():
            self.error.setPlainText(error)
        self.tabs.setTabText(2, "Error ●" if error else "Error")
