"""The timeline plot: a `Timeline`'s bars drawn with pyqtgraph, a few items for any number of calls.

The bars of one colour (one kind and status) are one `BarGraphItem`, and so are the cells, so a
run of 10,000 calls is a handful of items. Time runs left to right in seconds since the run
started, calls top to bottom in the tree's order. The wheel zooms, dragging pans; hovering tells
a call's tokens, cost and latency; clicking a bar emits `call_clicked` with its call.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TypeVar

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt, Signal
from PySide6.QtGui import QColor, QCursor, QPalette
from PySide6.QtWidgets import QToolTip, QVBoxLayout, QWidget

from rlm_desktop import formatting as fmt
from rlm_desktop.review.call_tree import CallNode
from rlm_desktop.review.timeline import BAR_HEIGHT, CELL_HEIGHT, Bar, CellBar, Timeline
from rlm_desktop.ui.appearance.theme import DARK, colors

HIT_SLACK_PX = 3
"""A bar narrower than this many pixels can still be pointed at."""
ZOOM_STEP = 1.5
LLM_COLOR = {"light": "#2a9d8f", "dark": "#4cc9b0"}
"""Plain LLM calls' colour; RLM calls take the theme's accent."""

Rect = tuple[float, float, float, float]
Key = TypeVar("Key")


def kind_color(kind: str) -> QColor:
    """The colour of a call of `kind` that ended well."""
    if kind == "rlm":
        return QColor(colors().accent)
    return QColor(LLM_COLOR["dark" if colors() is DARK else "light"])


def bar_color(kind: str, tone: str) -> QColor:
    """The colour of a call's bar by its kind and how its status reads (`status_tone`)."""
    palette = colors()
    if tone == "error":
        return QColor(palette.error)
    if tone == "limit":
        return QColor(palette.warning)
    if tone == "stopped":
        return QColor(palette.muted)
    color = kind_color(kind)
    if tone == "running":
        color.setAlpha(120)
    return color


LABELLED_ROWS = 80
"""Up to this many rows, each is labelled with its call; beyond, every n-th, so labels stay
legible and cheap."""


def row_labels(timeline: Timeline, least_step: int = 1) -> list[tuple[int, str]]:
    """The left axis's labels: each row's call id (of a large run, or rows lower than a line of
    text, every n-th row's, n being at least `least_step`)."""
    bars = timeline.bars
    step = max(least_step, -(-len(bars) // LABELLED_ROWS))
    return [(bar.row, fmt.short_id(bar.node.call_id)) for bar in bars[::step]]


def label_step(rows_in_view: float, pixels: float, line: float) -> int:
    """Label every n-th row so that two labels are at least a `line` of text apart, when
    `rows_in_view` rows share `pixels` of height."""
    if rows_in_view <= 0 or pixels <= 0:
        return 1
    return max(1, math.ceil(line * rows_in_view / pixels))


def legend_html() -> str:
    """What the colours mean, as rich text for a label."""
    entries = [
        (bar_color("rlm", "ok"), "RLM call"),
        (bar_color("llm", "ok"), "LLM call"),
        (bar_color("rlm", "error"), "failed"),
        (bar_color("rlm", "limit"), "over a limit"),
        (bar_color("rlm", "stopped"), "stopped"),
        (kind_color("rlm").darker(160), "code cell"),
    ]
    marks = [  # a swatch and its words stay on one line when the legend wraps
        f'<span style="color:{color.name()}">■</span>&nbsp;{text.replace(" ", "&nbsp;")}'
        for color, text in entries
    ]
    return " &nbsp; ".join(marks) + " &nbsp; (faint while running)"


def _bar_item(
    rects: Sequence[Rect], color: QColor, outline: QColor | None = None
) -> pg.BarGraphItem:
    x0, y0, x1, y1 = _columns(rects)
    return pg.BarGraphItem(
        x0=x0, x1=x1, y0=y0, y1=y1, brush=pg.mkBrush(color), pen=pg.mkPen(outline or color)
    )


def _columns(rects: Sequence[Rect]) -> tuple[np.ndarray, ...]:
    array = np.array(rects, dtype=np.float64).reshape(-1, 4)
    return array[:, 0], array[:, 1], array[:, 2], array[:, 3]


def bar_rect(bar: Bar) -> Rect:
    """(left, top, right, bottom) of a call's bar in plot coordinates."""
    return (bar.start, bar.top, bar.end, bar.top + BAR_HEIGHT)


def cell_rect(cell: CellBar) -> Rect:
    """(left, top, right, bottom) of a cell's bar in plot coordinates."""
    return (cell.start, cell.top, cell.end, cell.top + CELL_HEIGHT)


class TimelineView(QWidget):
    """Draws a `Timeline`; `call_clicked(CallNode)` when a bar or cell is clicked."""

    call_clicked = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.timeline = Timeline()
        self.items: dict[tuple[str, str], pg.BarGraphItem] = {}
        """The bars of each (kind, tone), one item per colour."""
        self.cell_items: dict[bool, pg.BarGraphItem] = {}
        """The cells, one item for those that ran and one for those that raised."""
        self.hover_text = ""
        self.followed = True
        """True until the user zooms or pans: new bars then keep the whole run in view."""
        self.plot = pg.PlotWidget(background=self.palette().color(QPalette.ColorRole.Base))
        self.plot.setAccessibleName("Timeline plot")
        item = self.plot.getPlotItem()
        item.hideButtons()
        self.rows_axis = item.getAxis("left")
        self.rows_axis.setStyle(tickLength=0)
        item.setLabel("bottom", "seconds since the run started")
        item.getAxis("bottom").enableAutoSIPrefix(False)  # not "(x0.001)" on a short run
        item.showGrid(x=True, y=False, alpha=0.2)
        self.box = item.getViewBox()
        self.box.invertY(True)
        self.box.setMenuEnabled(False)
        self.box.sigRangeChangedManually.connect(self._range_changed)
        self._step = 0
        self._labelled: Timeline | None = None
        self.box.sigRangeChanged.connect(self._label_rows)
        self.box.sigResized.connect(self._label_rows)
        self.selection = _bar_item([], QColor(Qt.GlobalColor.transparent), self._ink())
        self.selection.setZValue(10)
        self.plot.addItem(self.selection)
        scene = self.plot.scene()
        scene.sigMouseMoved.connect(self._hover)
        scene.sigMouseClicked.connect(self._click)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.plot)

    def _ink(self) -> QColor:
        return self.palette().color(QPalette.ColorRole.Text)

    def show_timeline(self, timeline: Timeline) -> None:
        """Draw `timeline` in place of what was shown."""
        self.timeline = timeline
        groups = timeline.groups()
        for key in set(self.items) | set(groups):
            rects = [bar_rect(bar) for bar in groups.get(key, [])]
            self._draw(self.items, key, rects, bar_color(*key))
        cells: dict[bool, list[Rect]] = {False: [], True: []}
        for cell in timeline.cells:
            cells[cell.failed].append(cell_rect(cell))
        for failed, rects in cells.items():
            color = QColor(colors().error) if failed else kind_color("rlm").darker(160)
            self._draw(self.cell_items, failed, rects, color, z=5)
        if self.followed:
            self.fit()
        self._label_rows()

    def _label_rows(self, *_args: object) -> None:
        """Label as many rows as their height lets be read (at a large type size, or with many
        rows in a short pane, labels of every row would print over each other)."""
        _times, (top, bottom) = self.box.viewRange()
        step = label_step(bottom - top, self.box.height(), self.fontMetrics().height())
        if step != self._step or self.timeline is not self._labelled:
            self._step, self._labelled = step, self.timeline
            self.rows_axis.setTicks([row_labels(self.timeline, step)])

    def _draw(
        self,
        items: dict[Key, pg.BarGraphItem],
        key: Key,
        rects: list[Rect],
        color: QColor,
        z: int = 0,
    ) -> None:
        item = items.get(key)
        if item is None:
            if not rects:
                return
            item = items[key] = _bar_item(rects, color)
            item.setZValue(z)
            self.plot.addItem(item)
            return
        x0, y0, x1, y1 = _columns(rects)
        item.setOpts(x0=x0, x1=x1, y0=y0, y1=y1)

    def highlight(self, node: CallNode | None) -> None:
        """Outline the bar of `node` (nothing for None or a call not laid out)."""
        row = self.timeline.row_of(node.call_id) if node is not None else None
        rects = [bar_rect(self.timeline.bars[row])] if row is not None else []
        x0, y0, x1, y1 = _columns(rects)
        self.selection.setOpts(x0=x0, x1=x1, y0=y0, y1=y1)

    def fit(self) -> None:
        """Show the whole run, every call."""
        rows = max(1, len(self.timeline.bars))
        length = max(self.timeline.length, 1e-3)
        self.box.setLimits(
            xMin=-length, xMax=length * 2, yMin=-1.0, yMax=rows + 1.0, minXRange=length * 1e-4
        )
        self.box.setRange(xRange=(0.0, length), yRange=(-0.5, rows - 0.5), padding=0.02)
        self.followed = True

    def zoom(self, factor: float) -> None:
        """Zoom the time axis by `factor` (above 1 zooms in) around the middle of the view."""
        self.box.scaleBy(x=1 / factor, y=1.0)
        self.followed = False

    def visible_range(self) -> tuple[tuple[float, float], tuple[float, float]]:
        """The ((left, right), (top, bottom)) of the plot shown."""
        (left, right), (top, bottom) = self.box.viewRange()
        return (float(left), float(right)), (float(top), float(bottom))

    def hit_at(self, point: QPointF) -> Bar | CellBar | None:
        """The cell or bar under `point` (plot coordinates)."""
        slack = float(self.box.viewPixelSize()[0]) * HIT_SLACK_PX
        return self.timeline.hit(point.x(), point.y(), slack)

    def _range_changed(self, _mask: object) -> None:
        self.followed = False

    def _hover(self, scene_pos: QPointF) -> None:
        found = self.hit_at(self.box.mapSceneToView(scene_pos))
        self.hover_text = found.describe() if found is not None else ""
        if self.hover_text:
            QToolTip.showText(QCursor.pos(), self.hover_text, self.plot)
        else:
            QToolTip.hideText()

    def _click(self, event: object) -> None:
        if event.button() != Qt.MouseButton.LeftButton:  # type: ignore[attr-defined]
            return
        point = self.box.mapSceneToView(event.scenePos())  # type: ignore[attr-defined]
        found = self.hit_at(point)
        if isinstance(found, CellBar):
            found = self.timeline.bars[found.row]
        if found is not None:
            self.call_clicked.emit(found.node)
