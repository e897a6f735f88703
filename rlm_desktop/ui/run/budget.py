"""The run's limits: cost, tokens, sub-calls, turns per call and time, folded into one line.

Folded, the section is a "Budget" button and a one-line summary; opened, the five fields in two
short lines, so the run area stays narrow and low enough for a small screen.
"""

from __future__ import annotations

from PySide6.QtWidgets import QDoubleSpinBox, QSpinBox, QVBoxLayout, QWidget

from rlm_desktop import formatting as fmt
from rlm_desktop.ui.shared.fold_line import FoldLine
from rlm_desktop.ui.shared.preferences import RunDefaults
from rlm_desktop.ui.shared.reflow_grid import ReflowGrid


def budget_summary(d: RunDefaults) -> str:
    """The limits in one line, as the folded section shows them."""
    parts = [
        fmt.dollars(d.max_cost_usd) if d.max_cost_usd else "no cost limit",
        f"{fmt.tokens(d.max_tokens)} tokens" if d.max_tokens else "no token limit",
        fmt.plural(d.max_sub_calls, "sub-call") if d.max_sub_calls else "no sub-call limit",
        f"{fmt.plural(d.max_turns, 'turn')} per call",
        f"time {fmt.seconds(d.timeout_s)}" if d.timeout_s else "no time limit",
    ]
    return " · ".join(parts)


def _spin(name: str, maximum: int, suffix: str = "", step: int = 1) -> QSpinBox:
    spin = QSpinBox()
    spin.setRange(0, maximum)
    spin.setSingleStep(step)
    spin.setSpecialValueText("no limit")
    spin.setSuffix(suffix)
    spin.setGroupSeparatorShown(True)
    spin.setAccessibleName(name)
    return spin


class BudgetFields:
    """The five limit fields; `section()` lays them out folded, for the run area."""

    def __init__(self) -> None:
        self.max_cost = QDoubleSpinBox()
        self.max_cost.setRange(0, 10_000)
        self.max_cost.setDecimals(2)
        self.max_cost.setSingleStep(0.25)
        self.max_cost.setPrefix("$")
        self.max_cost.setSpecialValueText("no limit")
        self.max_cost.setAccessibleName("Maximum cost in dollars")
        self.max_tokens = _spin("Maximum tokens", 1_000_000_000, step=100_000)
        self.max_sub_calls = _spin("Maximum sub-calls", 1_000_000, step=10)
        self.max_turns = QSpinBox()
        self.max_turns.setRange(1, 500)
        self.max_turns.setAccessibleName("Maximum turns per call")
        self.timeout = _spin("Time limit in seconds", 86_400, " s", step=60)


class BudgetSection(QWidget):
    """The limit fields behind a "Budget" button that opens and folds them."""

    def __init__(self, fields: BudgetFields, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.fields = fields
        self.line = FoldLine("&Budget", "Show or hide the run's limits")
        self.toggle = self.line.toggle
        self.summary = self.line.summary
        self.line.toggled.connect(self._show_limits)
        self.limits = ReflowGrid(
            [
                ("Cost", fields.max_cost),
                ("Tokens", fields.max_tokens),
                ("Sub-calls", fields.max_sub_calls),
                ("Turns per call", fields.max_turns),
                ("Time", fields.timeout),
            ],
            left_aligned=[
                fields.max_cost, fields.max_tokens, fields.max_sub_calls, fields.max_turns,
                fields.timeout,
            ],
            indent=18,
        )  # fmt: skip
        self.limits.setAccessibleName("Budget limits")
        self.limits.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.line)
        layout.addWidget(self.limits)

    @property
    def is_open(self) -> bool:
        """True while the fields are shown."""
        return self.line.is_open

    def set_open(self, shown: bool) -> None:
        """Open or fold the fields."""
        self.line.set_open(shown)

    def _show_limits(self, shown: bool) -> None:
        self.limits.setVisible(shown)

    def summarise(self, defaults: RunDefaults) -> None:
        """Show `defaults`' limits in the folded line."""
        self.line.summarise(budget_summary(defaults))
