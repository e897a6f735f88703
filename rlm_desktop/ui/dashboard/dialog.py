"""The history dashboard: how cost, wall time and sub-calls spread over all saved runs, what
each model, depth setting and profile cost, and the runs in the tail, one double-click from
opening. Everything it shows is computed by `review.history`; this window only draws it."""

from __future__ import annotations

from collections.abc import Callable
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

MEASURES: list[tuple[str, str, str, Callable[[float], str]]] = [
    ("cost_usd", "Cost per run", "cost per run (USD, priced runs)", fmt.dollars),
    ("wall_s", "Wall time", "wall time (seconds)", fmt.seconds),
    ("sub_calls", "Sub-calls", "sub-calls per run", lambda n: f"{n:,.0f}"),
]
"""(metric, tab title, axis label, how a value reads)."""


class _MeasureTab(QWidget):
    """One measure: its histogram, its figures in a line, and the runs in its tail."""

    def __init__(self, label: str, show: Callable[[float], str]) -> None:
        super().__init__()
        self.show_value = show
        self.histogram = HistogramPlot(label, show)
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
        self.measures: dict[str, _MeasureTab] = {}
        for metric, title, label, show in MEASURES:
            tab = _MeasureTab(label, show)
            tab.tail.itemDoubleClicked.connect(lambda _item, t=tab.tail: self.open_from(t))
            self.measures[metric] = tab
            self.tabs.addTab(tab, title)
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
        layout.addWidget(QLabel("Cost by model, by depth setting and by profile"))
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
        unpriced = history.unpriced_runs
        self.count.setText(
            fmt.plural(len(history.runs), "run")
            + (f" ({unpriced:,} with unpriced calls, left out of cost)" if unpriced else "")
        )
        show_groups(self.by_model, history.by_model())
        show_groups(self.by_depth, history.by_depth())
        show_groups(self.by_profile, history.by_profile())
        self.open_button.setEnabled(bool(history.runs))

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
