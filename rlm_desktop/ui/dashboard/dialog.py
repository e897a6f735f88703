"""The history dashboard: how cost, tokens, wall time and sub-calls spread over all saved runs,
what each model, depth setting and profile cost or took, and the runs in the tail, one
double-click from opening. The measure is chosen by tab; a history in which no run cost anything
(local models) opens on tokens. Everything it shows is computed by `review.history`; this
window only draws it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from rlm_desktop import formatting as fmt
from rlm_desktop.review.history import History, load_history
from rlm_desktop.ui.dashboard.filters import FilterBar
from rlm_desktop.ui.dashboard.histogram import HistogramPlot
from rlm_desktop.ui.dashboard.tables import (
    breakdown_table,
    selected_id,
    show_groups,
    show_runs,
    tail_table,
)
from rlm_desktop.ui.shared.widgets import dialog_buttons, resize_within_screen

if TYPE_CHECKING:
    from rlm_desktop.store import Store


def _whole(n: float) -> str:
    return f"{n:,.0f}"


@dataclass(frozen=True)
class Measure:
    """One measure the dashboard can show: its tab's title, its axis's label, how a value
    reads, what the breakdowns call it, and whether it counts (ticks on whole numbers)."""

    metric: str
    title: str
    axis: str
    show: Callable[[float], str]
    noun: str
    whole: bool = False


MEASURES = [
    Measure("cost_usd", "Cost per run", "cost per run (USD, priced runs)", fmt.dollars, "cost"),
    Measure(
        "tokens",
        "Tokens per run",
        "tokens per run (in and out)",
        lambda n: fmt.tokens(round(n)),
        "tokens",
        whole=True,
    ),
    Measure("wall_s", "Wall time", "wall time per run (latency)", fmt.seconds, "wall time"),
    Measure("sub_calls", "Sub-calls", "sub-calls per run", _whole, "sub-calls", whole=True),
]
"""The measures, in the order of their tabs."""
FREE_METRIC = "tokens"
"""The measure shown first when no run in view cost anything."""


class _MeasureTab(QWidget):
    """One measure: its histogram, its figures in a line, and the runs in its tail."""

    def __init__(self, measure: Measure) -> None:
        super().__init__()
        self.measure = measure
        self.show_value = measure.show
        self.histogram = HistogramPlot(measure.axis, measure.show, whole=measure.whole)
        self.summary = QLabel()
        self.summary.setObjectName("muted")
        self.tail = tail_table()
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.histogram)
        tail_box = QWidget()
        tail_layout = QVBoxLayout(tail_box)
        tail_layout.setContentsMargins(0, 0, 0, 0)
        tail_layout.addWidget(QLabel("Runs at or above p90 (double-click to open)"))
        tail_layout.addWidget(self.tail)
        split.addWidget(tail_box)
        split.setSizes([560, 520])
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addWidget(split, 1)


class DashboardDialog(QDialog):
    """The history of saved runs; `open_session(id, "")` asks the window to open one."""

    open_session = Signal(str, str)

    def __init__(self, store: Store, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.store = store
        self.history: History | None = None
        self.setWindowTitle("History")
        self.setAccessibleName("History dashboard")
        self.filters = FilterBar()
        self.filters.changed.connect(self.reload)
        self.count = QLabel()
        self.count.setObjectName("muted")
        self.tabs = QTabWidget()
        self.tabs.setAccessibleName("Measure")
        self.measures: dict[str, _MeasureTab] = {}
        for measure in MEASURES:
            tab = _MeasureTab(measure)
            tab.tail.itemDoubleClicked.connect(lambda _item, t=tab.tail: self.open_from(t))
            self.measures[measure.metric] = tab
            self.tabs.addTab(tab, measure.title)
        self.chosen = False
        """True once the user picks a measure: reloads then leave it in view."""
        self._choosing = False
        self.tabs.currentChanged.connect(self._measure_changed)
        self.by_model = breakdown_table("Model")
        self.by_depth = breakdown_table("Depth")
        self.by_profile = breakdown_table("Profile")
        breakdowns = QHBoxLayout()
        for table in (self.by_model, self.by_depth, self.by_profile):
            breakdowns.addWidget(table)
        self.open_button = QPushButton("Open run")
        self.open_button.setObjectName("primary")
        self.open_button.clicked.connect(lambda: self.open_from(self.current_tail()))
        buttons = dialog_buttons(self, [self.open_button])
        layout = QVBoxLayout(self)
        layout.addWidget(self.filters)
        layout.addWidget(self.count)
        layout.addWidget(self.tabs, 3)
        self.breakdowns_title = QLabel()
        layout.addWidget(self.breakdowns_title)
        layout.addLayout(breakdowns, 1)
        layout.addLayout(buttons)
        resize_within_screen(self, 1180, 760)
        self.reload()

    def reload(self) -> None:
        """Read the runs the filters let through and redraw everything."""
        history = load_history(self.store, self.filters.current())
        self.history = history
        self.filters.offer(history.choices)
        for metric, tab in self.measures.items():
            spread = history.distributions[metric]
            tab.histogram.show_distribution(spread)
            show_runs(tab.tail, history.tail(metric))
            if spread is None:
                tab.summary.setText("No run to show.")
                continue
            figures = " · ".join(f"{name} {tab.show_value(v)}" for name, v in spread.marks())
            tab.summary.setText(f"{figures} — over {fmt.plural(len(spread.values), 'run')}")
        free = bool(history.runs) and not history.costs_anything
        if free:
            priced = history.distributions["cost_usd"] is not None
            self.measures["cost_usd"].summary.setText(
                (
                    "Every priced run here cost $0 (local models)"
                    if priced
                    else "No run here has a price"
                )
                + ": see Tokens per run and Wall time."
            )
        unpriced = history.unpriced_runs
        self.count.setText(
            fmt.plural(len(history.runs), "run")
            + (f" ({unpriced:,} with unpriced calls, left out of cost)" if unpriced else "")
        )
        if not self.chosen:
            self._choosing = True
            self.tabs.setCurrentWidget(self.measures[FREE_METRIC if free else "cost_usd"])
            self._choosing = False
        self.show_breakdowns()
        self.open_button.setEnabled(bool(history.runs))

    def current_measure(self) -> Measure:
        """The measure on show."""
        tab = self.tabs.currentWidget()
        assert isinstance(tab, _MeasureTab)
        return tab.measure

    def show_breakdowns(self) -> None:
        """The measure on show per model, depth setting and profile."""
        if self.history is None:
            return
        measure = self.current_measure()
        self.breakdowns_title.setText(
            f"{measure.noun.capitalize()} by model, by depth setting and by profile"
        )
        for table, groups in (
            (self.by_model, self.history.by_model(measure.metric)),
            (self.by_depth, self.history.by_depth(measure.metric)),
            (self.by_profile, self.history.by_profile(measure.metric)),
        ):
            show_groups(table, groups, measure.noun, measure.show)

    def _measure_changed(self, _index: int) -> None:
        if not self._choosing:
            self.chosen = True
        self.show_breakdowns()

    def current_tail(self) -> QTableWidget:
        """The tail table of the measure on show."""
        tab = self.tabs.currentWidget()
        assert isinstance(tab, _MeasureTab)
        return tab.tail

    def open_from(self, table: QTableWidget) -> None:
        """Open the run selected in `table` in the window, and close the dashboard."""
        session_id = selected_id(table)
        if session_id is not None:
            self.open_session.emit(session_id, "")
            self.accept()
