"""The timeline pane (a tab beside the call tree): its tools, a legend, and the plot.

The plot (pyqtgraph, slow to import) is made the first time the pane is shown, so the window
starts as fast without it. While shown, the pane redraws from the call tree a moment after it
changes, at most a few times a second however fast events come (less often for huge runs).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from PySide6.QtCore import QTimer, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSizePolicy, QSplitter, QVBoxLayout, QWidget

from rlm_desktop.review.call_tree import CallNode
from rlm_desktop.review.timeline import layout
from rlm_desktop.ui.shared.widgets import tool_button
from rlm_desktop.ui.tree.model import CallTreeModel

if TYPE_CHECKING:
    from rlm_desktop.ui.timeline.view import TimelineView

FIRST_SHARE = 0.3
"""The least share of the run area's height the timeline opens at."""
REFRESH_MS = 250
"""The shortest pause between two redraws."""
BUSY_SHARE = 10
"""A redraw waits at least this many times as long as the last one took, so a huge run's timeline
never takes more than a tenth of the window's time."""


class TimelinePane(QWidget):
    """The run's timeline over `model`'s tree; `call_clicked(CallNode)` when a bar is clicked."""

    call_clicked = Signal(object)

    def __init__(self, model: CallTreeModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Timeline")
        self.model = model
        self.view: TimelineView | None = None
        self._selected: CallNode | None = None
        self._refresh_timer = QTimer(self)
        self._refresh_timer.setSingleShot(True)
        self._refresh_timer.setInterval(REFRESH_MS)
        self._refresh_timer.timeout.connect(self.refresh)
        self.title = QLabel("Timeline")
        self.title.setObjectName("cardTitle")
        self.legend = QLabel()
        self.legend.setObjectName("muted")
        self.legend.setWordWrap(True)  # on a narrow pane (two runs compared) it takes two lines
        # Its own line, as wide as the pane lets it be: it never sets the window's least width.
        self.legend.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.zoom_in_button = tool_button(
            "Zoom in", "Zoom into the time axis", self.zoom_in, mark="+"
        )
        self.zoom_out_button = tool_button(
            "Zoom out", "Zoom out of the time axis", self.zoom_out, mark="−"
        )
        self.fit_button = tool_button("Fit", "Show the whole run", self.fit)
        tools = QHBoxLayout()
        tools.setContentsMargins(0, 0, 0, 0)
        tools.addWidget(self.title)
        tools.addStretch(1)
        for button in (self.zoom_in_button, self.zoom_out_button, self.fit_button):
            tools.addWidget(button)
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.addLayout(tools)
        self._layout.addWidget(self.legend)
        model.changed.connect(self.schedule)
        model.modelReset.connect(self.schedule)

    def showEvent(self, event: QShowEvent) -> None:
        """Make the plot on first showing, then draw."""
        super().showEvent(event)
        self.ensure_view()
        self.refresh()

    def ensure_view(self) -> TimelineView:
        """The plot, made now if it was not yet."""
        if self.view is None:
            from rlm_desktop.ui.timeline.view import TimelineView, legend_html

            self.view = TimelineView()
            self.view.call_clicked.connect(self.call_clicked)
            self._layout.addWidget(self.view, 1)
            self.legend.setText(legend_html())
        return self.view

    def schedule(self, *_args: object) -> None:
        """Redraw soon (changes that come meanwhile are drawn together)."""
        if self.isVisible() and not self._refresh_timer.isActive():
            self._refresh_timer.start()

    def refresh(self) -> None:
        """Draw the tree as it stands now."""
        self._refresh_timer.stop()
        if self.view is None or not self.isVisible():
            return
        started = time.perf_counter()
        self.view.show_timeline(layout(self.model.tree))
        self.view.highlight(self._selected)
        took_ms = (time.perf_counter() - started) * 1000
        self._refresh_timer.setInterval(max(REFRESH_MS, int(took_ms * BUSY_SHARE)))

    def highlight(self, node: CallNode | None) -> None:
        """Outline the call selected in the tree."""
        self._selected = node
        if self.view is not None:
            self.view.highlight(node)

    def toggle(self) -> None:
        """Show the pane if hidden, hide it if shown; shown, it takes at least `FIRST_SHARE`
        of its splitter's height (a pane dragged thin, or never sized, would be a strip)."""
        self.setVisible(not self.isVisible())
        parent = self.parentWidget()
        if self.isVisible() and isinstance(parent, QSplitter):
            sizes = parent.sizes()
            index = parent.indexOf(self)
            total = sum(sizes)
            wanted = max(self.minimumSizeHint().height(), round(total * FIRST_SHARE))
            if sizes[index] < wanted:
                others = total - wanted
                rest = sum(size for i, size in enumerate(sizes) if i != index) or 1
                parent.setSizes(
                    [
                        wanted if i == index else size * others // rest
                        for i, size in enumerate(sizes)
                    ]
                )

    def zoom_in(self) -> None:
        """Twice as much detail on the time axis."""
        self.ensure_view().zoom(2)

    def zoom_out(self) -> None:
        """Twice as much time in view."""
        self.ensure_view().zoom(0.5)

    def fit(self) -> None:
        """Show the whole run."""
        self.ensure_view().fit()
