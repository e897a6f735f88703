"""One measure's spread over the saved runs as a histogram (pyqtgraph), with the median, p90,
p99 and max marked by labelled vertical lines."""

from __future__ import annotations

from collections.abc import Callable

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QVBoxLayout, QWidget

from rlm_desktop.review.history import Distribution
from rlm_desktop.ui.appearance.theme import colors

LABEL_ROOM = 0.2
"""Room right of the last bar, as a share of the bars' width, for the labels of p99 and max."""
LABEL_HEIGHT = {"median": 0.95, "p90": 0.83, "p99": 0.71, "max": 0.59}
"""Where each mark's label sits up its line, staggered so close marks stay readable."""
MARK_STYLE = {
    "median": Qt.PenStyle.SolidLine,
    "p90": Qt.PenStyle.DashLine,
    "p99": Qt.PenStyle.DashDotLine,
    "max": Qt.PenStyle.DotLine,
}


class HistogramPlot(QWidget):
    """A histogram of a `Distribution`; `show_distribution` redraws it. `marks` holds the
    lines drawn for the median, p90, p99 and max, by name."""

    def __init__(self, x_label: str, show: Callable[[float], str], parent: QWidget | None = None):
        super().__init__(parent)
        self.show_value = show
        self.plot = pg.PlotWidget(background=self.palette().color(QPalette.ColorRole.Base))
        self.plot.setAccessibleName(f"Histogram of {x_label}")
        item = self.plot.getPlotItem()
        item.hideButtons()
        item.setLabel("bottom", x_label)
        item.setLabel("left", "runs")
        item.setMenuEnabled(False)
        item.getViewBox().setMouseEnabled(x=True, y=False)
        self.bars: pg.BarGraphItem | None = None
        self.marks: dict[str, pg.InfiniteLine] = {}
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.plot)

    def show_distribution(self, spread: Distribution | None) -> None:
        """Draw `spread` (an empty plot for None)."""
        self.plot.clear()
        self.bars, self.marks = None, {}
        if spread is None:
            return
        edges, counts = spread.edges, spread.counts
        widths = [high - low for low, high in zip(edges, edges[1:], strict=False)]
        self.bars = pg.BarGraphItem(
            x0=edges[:-1],
            width=widths,
            height=counts,
            brush=QColor(colors().accent).lighter(130),
            pen=QColor(colors().accent),
        )
        self.plot.addItem(self.bars)
        ink = self.palette().color(QPalette.ColorRole.Text)
        for name, value in spread.marks():
            colour = QColor(colors().warning if name in ("p99", "max") else ink)
            line = pg.InfiniteLine(
                pos=value,
                angle=90,
                pen=pg.mkPen(colour, width=1.5, style=MARK_STYLE[name]),
                label=f"{name} {self.show_value(value)}",
                labelOpts={
                    "position": LABEL_HEIGHT[name],
                    "color": colour,
                    "anchors": [(0, 0.5), (0, 0.5)],
                },
            )
            line.setToolTip(f"{name}: {self.show_value(value)}")
            self.plot.addItem(line)
            self.marks[name] = line
        view = self.plot.getPlotItem().getViewBox()
        view.autoRange(items=[self.bars])
        low, high = edges[0], edges[-1]
        view.setXRange(low, high + (high - low) * LABEL_ROOM, padding=0.02)

    def mark_values(self) -> dict[str, float]:
        """Where each mark is drawn, by name."""
        return {name: float(line.value()) for name, line in self.marks.items()}

    def bar_heights(self) -> list[int]:
        """The drawn bars' heights (runs per bin)."""
        if self.bars is None:
            return []
        return [int(height) for height in self.bars.opts["height"]]
