"""Score against cost, one point per setting with its 95% interval as a vertical bar."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QVBoxLayout, QWidget

from rlm_desktop.evaluation.summary import SettingSummary


class ScoreCostPlot(QWidget):
    """`show_summaries` redraws the plot; `points` maps each setting drawn to (cost, score)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.plot = pg.PlotWidget(background=self.palette().color(QPalette.ColorRole.Base))
        self.plot.setAccessibleName("Score against cost per setting")
        item = self.plot.getPlotItem()
        item.hideButtons()
        item.setMenuEnabled(False)
        item.setLabel("bottom", "mean cost per run (USD)")
        item.setLabel("left", "mean score")
        item.setYRange(0, 1.05)
        self.points: dict[str, tuple[float, float]] = {}
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.plot)

    def show_summaries(self, summaries: Sequence[SettingSummary]) -> None:
        """Draw one point (and interval) per setting that has runs."""
        self.plot.clear()
        self.points = {}
        drawn = [s for s in summaries if s.runs]
        for index, summary in enumerate(drawn):
            color = pg.intColor(index, hues=max(len(drawn), 1))
            x, y = summary.cost_mean, summary.score_mean
            self.points[summary.name] = (x, y)
            low, high = summary.score_ci95
            bar = pg.ErrorBarItem(  # arrays: pyqtgraph subtracts them when it draws
                x=np.array([x]), y=np.array([y]), top=np.array([high - y]),
                bottom=np.array([y - low]), beam=0, pen=pg.mkPen(color),
            )  # fmt: skip
            self.plot.addItem(bar)
            self.plot.addItem(pg.ScatterPlotItem([x], [y], size=10, brush=pg.mkBrush(color)))
            label = pg.TextItem(summary.name, color=color, anchor=(0, 1))
            label.setPos(x, y)
            self.plot.addItem(label)
