"""One run of a comparison: a caption, its call tree and its timeline, read-only.

The saved events are fed through the same item model, tree panel and timeline pane as a live run;
selecting a call in the tree outlines its bar, and clicking a bar selects the call. Both runs'
timelines can share one time scale (`share_scale`), so their lengths compare truthfully.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QSplitter, QVBoxLayout, QWidget

from rlm_desktop import formatting as fmt
from rlm_desktop.review.call_tree import CallNode
from rlm_desktop.review.timeline import layout
from rlm_desktop.store.detail import SessionDetail
from rlm_desktop.ui.shared.widgets import note_label, plain_label
from rlm_desktop.ui.timeline.pane import TimelinePane
from rlm_desktop.ui.tree.model import CallTreeModel
from rlm_desktop.ui.tree.panel import TreePanel

if TYPE_CHECKING:
    import pyqtgraph as pg

    from rlm_desktop.store import Store


def caption(detail: SessionDetail) -> str:
    """How a compared run is named: its short id, date, model and question."""
    session = detail.session
    return (
        f"{fmt.short_session_id(detail.session_id)} · {fmt.when(session['started_at'])} · "
        f"{fmt.model_name(session['model'] or '')} · {fmt.one_line(session['query'], 80)}"
    )


def scale_note(length: float, span: float | None) -> str:
    """What a compared timeline says of its scale: how long the run took and, on a scale longer
    than the run, which share of it the run fills."""
    took = f"Took {fmt.seconds(length) or '0.00 s'}"
    if span is None:
        return f"{took} · on its own time scale"
    if span <= length:
        return f"{took} · the time scale both share"
    return f"{took} · {length / span:.0%} of the longer run's {fmt.seconds(span)}"


class ScaledTimeline(TimelinePane):
    """A timeline pane whose time axis spans at least `span` seconds (None: the run's own
    length), with a line where its run ended when that comes before the end of the axis."""

    def __init__(self, model: CallTreeModel, parent: QWidget | None = None) -> None:
        super().__init__(model, parent)
        self.span: float | None = None
        self.end_line: pg.InfiniteLine | None = None

    def share_scale(self, span: float | None) -> None:
        """Draw on a time axis of `span` seconds (None: the run's own), fitted anew."""
        self.span = span
        view = self.ensure_view()
        view.followed = True
        self.refresh()
        if not self.isVisible():  # drawn when first shown; until then, scaled now
            self._scale()

    def refresh(self) -> None:
        """Draw the tree as it stands, on the shared scale."""
        super().refresh()
        if self.isVisible():
            self._scale()

    def _scale(self) -> None:
        view = self.view
        if view is None:
            return
        own = layout(self.model.tree)
        length = max(own.length, self.span or 0.0)
        if view.timeline.length != length or not view.timeline.bars:
            view.show_timeline(replace(own, length=length))
        self._mark_end(own.length, length)

    def _mark_end(self, ended: float, length: float) -> None:
        """A dashed line where the run ended, when the axis goes on past it."""
        import pyqtgraph as pg

        view = self.view
        if view is None:
            return
        if self.end_line is None:
            ink = view.palette().color(QPalette.ColorRole.Text)
            self.end_line = pg.InfiniteLine(
                angle=90,
                movable=False,
                pen=pg.mkPen(ink, width=1.5, style=Qt.PenStyle.DashLine),
                label="ended",
                labelOpts={"position": 0.06, "color": ink, "anchors": [(0, 0.5), (0, 0.5)]},
            )
            self.end_line.setZValue(20)
            view.plot.addItem(self.end_line)
        self.end_line.setPos(ended)
        self.end_line.label.setFormat(f"ended {fmt.seconds(ended)}")
        self.end_line.setToolTip(f"The run ended at {fmt.seconds(ended)}")
        self.end_line.setVisible(ended < length * 0.999)


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
        self.timeline = ScaledTimeline(self.model)
        self.model.apply_events(list(store.replay(detail.session_id)))
        if self.model.tree.run.finished is None:
            self.model.close_unfinished()
        self.tree.expand_all()
        self.tree.call_selected.connect(self._selected)
        self.timeline.call_clicked.connect(self._clicked)
        self.scale_note = note_label(scale_note(self.length, None))
        self.scale_note.setAccessibleName("Time scale")
        self.scale_note.setToolTip(
            "With one time scale, zooming or panning either timeline moves both (Fit shows the"
            " whole longer run)"
        )
        timeline_box = QWidget()
        timeline_layout = QVBoxLayout(timeline_box)
        timeline_layout.setContentsMargins(0, 0, 0, 0)
        timeline_layout.addWidget(self.timeline, 1)
        timeline_layout.addWidget(self.scale_note)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.tree)
        split.addWidget(timeline_box)
        split.setSizes([240, 280])
        layout_ = QVBoxLayout(self)
        layout_.setContentsMargins(0, 0, 0, 0)
        layout_.addWidget(self.title)
        layout_.addWidget(split, 1)

    @property
    def length(self) -> float:
        """How long the run took, in the seconds its timeline plots."""
        return layout(self.model.tree).length

    def share_scale(self, span: float | None) -> None:
        """Put the timeline on a time axis of `span` seconds (None: the run's own length)."""
        self.timeline.share_scale(span)
        self.scale_note.setText(scale_note(self.length, span))

    def _selected(self, node: CallNode | None) -> None:
        self.timeline.highlight(node)

    def _clicked(self, node: CallNode) -> None:
        self.tree.select(node)
