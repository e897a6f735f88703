"""What to evaluate: task kinds (or a task file), lengths, count and seed; the settings, one a
line in the command line's `--setting` form; endpoint, total budget and concurrency."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QCheckBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QWidget,
)

from rlm_desktop.engine.config import ConfigError
from rlm_desktop.engine.pricing import parse_prices
from rlm_desktop.evaluation.options import DEFAULT_CONCURRENCY, EvaluationOptions
from rlm_desktop.evaluation.settings import Setting, parse_setting
from rlm_desktop.evaluation.task_sets import GENERATORS, TaskSpec

FIELD_NAMES = {
    "task": "Tasks",
    "length": "Lengths",
    "count": "Tasks per kind",
    "setting": "Settings",
    "max_cost_usd": "Total budget",
    "concurrency": "Runs at once",
    "prices": "Prices",
}
"""How `ConfigError`s name the form's fields."""


class EvaluationForm(QWidget):
    """The evaluation's inputs; `evaluation_input()` reads them, or raises `ConfigError`."""

    def __init__(self, model: str, api_base: str | None, prices_text: str = "") -> None:
        super().__init__()
        self.kinds = {kind: QCheckBox(kind) for kind in GENERATORS}
        self.kinds["needle"].setChecked(True)
        kinds_row = QHBoxLayout()
        for box in self.kinds.values():
            kinds_row.addWidget(box)
        self.task_file = QLineEdit()
        self.task_file.setPlaceholderText("your own tasks: a JSONL file or a folder (optional)")
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        kinds_row.addWidget(self.task_file, 1)
        kinds_row.addWidget(browse)
        self.lengths = QLineEdit("4000, 16000")
        self.lengths.setToolTip("input lengths in tokens, separated by commas")
        self.count = QSpinBox(minimum=1, maximum=1000, value=5)
        self.seed = QSpinBox(minimum=0, maximum=1_000_000, value=0)
        self.settings = QPlainTextEdit(
            f"direct:model={model},mode=direct\nrlm:model={model},mode=rlm,depth=2"
        )
        self.settings.setToolTip(
            "one setting a line: NAME:model=M,sub_model=M,mode=rlm|direct|auto,depth=N,profile=P"
        )
        self.settings.setMaximumHeight(90)
        self.api_base = QLineEdit(api_base or "")
        self.api_base.setPlaceholderText("the provider's API")
        self.prices = QLineEdit(prices_text.replace("\n", "; "))
        self.prices.setPlaceholderText("model = input, output; … (USD per million tokens)")
        self.max_cost = QDoubleSpinBox(minimum=0, maximum=100_000, decimals=2, value=2.0)
        self.max_cost.setPrefix("$")
        self.max_cost.setSpecialValueText("no cap")
        self.concurrency = QSpinBox(minimum=1, maximum=64, value=DEFAULT_CONCURRENCY)
        layout = QFormLayout(self)
        layout.addRow("Tasks", kinds_row)
        layout.addRow("Lengths (tokens)", self.lengths)
        layout.addRow("Tasks per kind", self.count)
        layout.addRow("Seed", self.seed)
        layout.addRow("Settings", self.settings)
        layout.addRow("Server", self.api_base)
        layout.addRow("Prices", self.prices)
        layout.addRow("Total budget", self.max_cost)
        layout.addRow("Runs at once", self.concurrency)

    def _browse(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Task file", "", "Task files (*.jsonl)")
        if path:
            self.task_file.setText(path)

    def evaluation_input(self) -> tuple[TaskSpec, list[Setting], EvaluationOptions]:
        """The task set, settings and options the form describes."""
        kinds = [kind for kind, box in self.kinds.items() if box.isChecked()]
        if self.task_file.text().strip():
            kinds.append(self.task_file.text().strip())
        try:
            lengths = tuple(int(p) for p in self.lengths.text().replace(" ", "").split(",") if p)
        except ValueError:
            raise ConfigError("must be whole numbers separated by commas", "length") from None
        spec = TaskSpec(tuple(kinds), lengths, self.seed.value(), self.count.value())
        settings = [
            parse_setting(line.strip())
            for line in self.settings.toPlainText().splitlines()
            if line.strip()
        ]
        options = EvaluationOptions(
            api_base=self.api_base.text().strip() or None,
            prices=parse_prices(self.prices.text().replace(";", "\n")),
            concurrency=self.concurrency.value(),
            max_cost_usd=self.max_cost.value() or None,
        )
        return spec, settings, options
