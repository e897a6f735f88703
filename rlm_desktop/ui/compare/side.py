"""One run of a comparison: a caption, its call tree and its timeline, read-only.

The saved events are fed through the same item model, tree panel and timeline pane as a live run;
selecting a call in the tree outlines its bar, and clicking a bar selects the call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QSplitter, QVBoxLayout, QWidget

from rlm_desktop import formatting as fmt
from rlm_desktop.review.call_tree import CallNode
from rlm_desktop.store.detail import SessionDetail
from rlm_desktop.ui.shared.widgets import plain_label
from rlm_desktop.ui.timeline.pane import TimelinePane
from rlm_desktop.ui.tree.model import CallTreeModel
from rlm_desktop.ui.tree.panel import TreePanel

if TYPE_CHECKING:
    from rlm_desktop.store import Store


def caption(detail: SessionDetail) -> str:
    """How a compared run is named: its short id, date, model and question."""
    session = detail.session
    return (
        f"{fmt.short_session_id(detail.session_id)} · {fmt.when(session['started_at'])} · "
        f"{fmt.model_name(session['model'] or '')} · {fmt.one_line(session['query'], 80)}"
    )


class RunSide(QWidget):
    """A saved run's tree above its timeline."""

    def __init__(self, store: Store, detail: SessionDetail, parent: QWidget | None = None):
        super().__init__(parent)
        self.title = plain_label(caption(detail))
        self.title.setObjectName("cardTitle")
        self.title.setWordWrap(True)  # two runs side by side fit a 1024-pixel-wide screen
        self.title.setToolTip(detail.session["query"] or "")
        self.model = CallTreeModel(self)
        self.tree = TreePanel(self.model)
        self.timeline = TimelinePane(self.model)
        self.model.apply_events(list(store.replay(detail.session_id)))
        if self.model.tree.run.finished is None:
            self.model.close_unfinished()
        self.tree.expand_all()
        self.tree.call_selected.connect(self._selected)
        self.timeline.call_clicked.connect(self._clicked)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.tree)
        split.addWidget(self.timeline)
        split.setSizes([300, 220])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.title)
        layout.addWidget(split, 1)

    def _selected(self, node: CallNode | None) -> None:
        self.timeline.highlight(node)

    def _clicked(self, node: CallNode) -> None:
        self.tree.select(node)
