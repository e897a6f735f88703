"""One measure's spread over the saved runs as a histogram (pyqtgraph), with the median, p90,
p99 and max marked by labelled vertical lines, on an axis that reads in the measure's units."""

from __future__ import annotations

import math
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


def _count(n: float) -> str:
    return f"{n:,.0f}"


class UnitAxis(pg.AxisItem):  # type: ignore[misc]  # pyqtgraph has no type hints
    """An axis whose ticks read as the app writes its measure (`$0.020`, `1,234`, `2.50 s`),
    never scaled by an SI prefix ("(x1e-09)"); no tick below zero (no measure goes there), and
    for a count (`whole`) whole numbers only."""

    def __init__(self, orientation: str, show: Callable[[float], str], whole: bool = False):
        super().__init__(orientation)
        self.show_value = show
        self.whole = whole
        self.enableAutoSIPrefix(False)

    def tickValues(  # noqa: N802 (pyqtgraph's name)
        self,
        minVal: float,  # noqa: N803
        maxVal: float,  # noqa: N803
        size: float,
    ) -> list[tuple[float, list[float]]]:
        """pyqtgraph's ticks, less those the measure cannot take."""
        levels = super().tickValues(minVal, maxVal, size)
        kept = [
            (spacing, [value for value in values if value >= -spacing * 1e-6])
            for spacing, values in levels
            if not (self.whole and spacing < 1)
        ]
        if self.whole and not kept:  # a range narrower than one: the whole numbers in it
            first, last = max(0, math.ceil(minVal)), math.floor(maxVal)
            kept = [(1.0, [float(n) for n in range(first, last + 1)])]
        return kept

    def tickStrings(  # noqa: N802 (pyqtgraph's name)
        self, values: list[float], scale: float, spacing: float
    ) -> list[str]:
        """Each tick in the measure's words."""
        return [self.show_value(max(0.0, value * scale)) for value in values]


class HistogramPlot(QWidget):
    """A histogram of a `Distribution`; `show_distribution` redraws it. `marks` holds the
    lines drawn for the median, p90, p99 and max, by name."""

    def __init__(
        self,
        x_label: str,
        show: Callable[[float], str],
        whole: bool = False,
        parent: QWidget | None = None,
    ):
        super().__init__(parent)
        self.show_value = show
        self.axis = UnitAxis("bottom", show, whole=whole)
        """The measure's axis (`whole` for a count: ticks on whole numbers only)."""
        self.plot = pg.PlotWidget(
            background=self.palette().color(QPalette.ColorRole.Base),
            axisItems={"bottom": self.axis, "left": UnitAxis("left", _count, whole=True)},
        )
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
        if len(counts) == 1:  # every run the same: one bar, with room to tell it is one value
            low, high = low - (high - low) * 2, high + (high - low) * 2
        view.setXRange(low, high + (high - low) * LABEL_ROOM, padding=0.02)

    def mark_values(self) -> dict[str, float]:
        """Where each mark is drawn, by name."""
        return {name: float(line.value()) for name, line in self.marks.items()}

    def bar_heights(self) -> list[int]:
        """The drawn bars' heights (runs per bin)."""
        if self.bars is None:
            return []
        return [int(height) for height in self.bars.opts["height"]]
