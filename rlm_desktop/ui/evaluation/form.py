"""What to evaluate: task kinds (or a task file), lengths, count and seed; the settings, one a
line in the command line's `--setting` form; endpoint, total budget, concurrency, and where the
trials run (`run_on`). The form reads and shows its fields as `FormFields`, which the page
remembers for the next time."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QWidget,
)

from rlm_desktop.engine.config import ConfigError
from rlm_desktop.engine.pricing import parse_prices
from rlm_desktop.evaluation.form_fields import (
    CONCURRENCY_RANGE,
    COST_RANGE,
    COUNT_RANGE,
    SEED_RANGE,
    FormFields,
    default_fields,
)
from rlm_desktop.evaluation.options import EvaluationOptions
from rlm_desktop.evaluation.settings import Setting, parse_setting
from rlm_desktop.evaluation.task_sets import GENERATORS, TaskSpec
from rlm_desktop.ui.evaluation.run_on import RunOnField
from rlm_desktop.ui.shared import file_dialogs

FIELD_NAMES = {
    "task": "Tasks",
    "length": "Lengths",
    "count": "Tasks per kind",
    "setting": "Settings",
    "max_cost_usd": "Total budget",
    "concurrency": "Runs at once",
    "prices": "Prices",
    "ray_address": "The Ray cluster's address",
}
"""How `ConfigError`s name the form's fields."""


class EvaluationForm(QWidget):
    """The evaluation's inputs; `evaluation_input()` reads them, or raises `ConfigError`."""

    changed = Signal()
    """Emitted when any field is edited."""

    def __init__(
        self,
        model: str,
        api_base: str | None,
        prices_text: str = "",
        fields: FormFields | None = None,
    ) -> None:
        super().__init__()
        self.kinds = {kind: QCheckBox(kind) for kind in GENERATORS}
        kinds_row = QHBoxLayout()
        for box in self.kinds.values():
            kinds_row.addWidget(box)
        self.task_file = QLineEdit()
        self.task_file.setPlaceholderText("your own tasks: a JSONL file or a folder (optional)")
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        kinds_row.addWidget(self.task_file, 1)
        kinds_row.addWidget(browse)
        self.lengths = QLineEdit()
        self.lengths.setToolTip("input lengths in tokens, separated by commas")
        self.count = QSpinBox(minimum=COUNT_RANGE[0], maximum=COUNT_RANGE[1])
        self.seed = QSpinBox(minimum=SEED_RANGE[0], maximum=SEED_RANGE[1])
        self.settings = QPlainTextEdit()
        self.settings.setToolTip(
            "one setting a line: NAME:model=M,sub_model=M,mode=rlm|direct|auto,depth=N,profile=P,"
            "sandbox=auto|kernel|wasm"
        )
        self.settings.setMaximumHeight(90)
        self.api_base = QLineEdit()
        self.api_base.setPlaceholderText("the provider's API")
        self.prices = QLineEdit()
        self.prices.setPlaceholderText("model = input, output; … (USD per million tokens)")
        self.max_cost = QDoubleSpinBox(minimum=COST_RANGE[0], maximum=COST_RANGE[1], decimals=2)
        self.max_cost.setPrefix("$")
        self.max_cost.setSpecialValueText("no cap")
        self.concurrency = QSpinBox(minimum=CONCURRENCY_RANGE[0], maximum=CONCURRENCY_RANGE[1])
        self.run_on = RunOnField()
        self.set_fields(fields or default_fields(model, api_base, prices_text))
        for box in self.kinds.values():
            box.toggled.connect(self.changed)
        for line in (self.task_file, self.lengths, self.api_base, self.prices):
            line.textChanged.connect(self.changed)
        for spin in (self.count, self.seed, self.max_cost, self.concurrency):
            spin.valueChanged.connect(self.changed)
        self.settings.textChanged.connect(self.changed)
        self.run_on.changed.connect(self.changed)
        layout = QFormLayout(self)
        layout.addRow("Tasks", kinds_row)
        layout.addRow("Lengths (tokens)", self.lengths)
        layout.addRow("Tasks per kind", self.count)
        layout.addRow("Seed", self.seed)
        layout.addRow("Settings", self.settings)
        layout.addRow("Server", self.api_base)
        layout.addRow("Prices", self.prices)
        layout.addRow("Total budget", self.max_cost)
        at_once = QHBoxLayout()
        at_once.addWidget(self.concurrency)
        at_once.addSpacing(16)
        at_once.addWidget(QLabel("Run on"))
        at_once.addWidget(self.run_on, 1)
        layout.addRow("Runs at once", at_once)

    def _browse(self) -> None:
        path = file_dialogs.open_file_name(
            self, "Task file", ["Task files (*.jsonl)", file_dialogs.ALL_FILES], "tasks"
        )
        if path:
            self.task_file.setText(path)

    def fields(self) -> FormFields:
        """What the form holds now, as plain values."""
        return FormFields(
            kinds=tuple(kind for kind, box in self.kinds.items() if box.isChecked()),
            task_file=self.task_file.text().strip(),
            lengths=self.lengths.text(),
            count=self.count.value(),
            seed=self.seed.value(),
            settings=tuple(
                line.strip() for line in self.settings.toPlainText().splitlines() if line.strip()
            ),
            api_base=self.api_base.text().strip(),
            prices=self.prices.text(),
            max_cost_usd=self.max_cost.value(),
            concurrency=self.concurrency.value(),
            run_on=self.run_on.run_on(),
            ray_address=self.run_on.ray_address.text().strip(),
        )

    def set_fields(self, fields: FormFields) -> None:
        """Show `fields` in the form."""
        for kind, box in self.kinds.items():
            box.setChecked(kind in fields.kinds)
        self.task_file.setText(fields.task_file)
        self.lengths.setText(fields.lengths)
        self.count.setValue(fields.count)
        self.seed.setValue(fields.seed)
        self.settings.setPlainText("\n".join(fields.settings))
        self.api_base.setText(fields.api_base)
        self.prices.setText(fields.prices)
        self.max_cost.setValue(fields.max_cost_usd)
        self.concurrency.setValue(fields.concurrency)
        self.run_on.set_run_on(fields.run_on, fields.ray_address)

    def ray_address(self) -> str | None:
        """The Ray cluster to run the trials on, or None for this machine; `ConfigError` when
        the cluster is chosen without an address."""
        return self.run_on.address()

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
