"""The evaluation form's "Run on" row: this machine, or a Ray cluster at an address (`auto`,
`local` or the head's `HOST:PORT`, as `rlm-desktop eval --ray` takes it)."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLineEdit, QWidget

from rlm_desktop.engine.config import ConfigError

CHOICES = {"here": "This machine", "ray": "Ray cluster"}
"""Each `FormFields.run_on` value and how the choice reads."""
ADDRESS_TIP = (
    "auto: the cluster RAY_ADDRESS names or this machine runs; local: start one here for the "
    "evaluation; HOST:PORT: a running cluster's head (ray start --head prints it). "
    "Needs pip install 'rlm-desktop[cluster]' here and on every node."
)


class RunOnField(QWidget):
    """Where the trials run; `address()` is the cluster's, or None for this machine."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.choice = QComboBox()
        self.choice.setAccessibleName("Run on")
        for value, text in CHOICES.items():
            self.choice.addItem(text, value)
        self.ray_address = QLineEdit()
        self.ray_address.setAccessibleName("Ray cluster address")
        self.ray_address.setPlaceholderText("auto, local or HOST:PORT")
        self.ray_address.setToolTip(ADDRESS_TIP)
        self.choice.currentIndexChanged.connect(self._chosen)
        self.ray_address.textChanged.connect(self.changed)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.choice)
        row.addWidget(self.ray_address, 1)
        self._chosen()

    def run_on(self) -> str:
        """`here` or `ray`."""
        return str(self.choice.currentData())

    def set_run_on(self, run_on: str, ray_address: str) -> None:
        """Show the choice `run_on` and the cluster's address (kept even for this machine)."""
        self.choice.setCurrentIndex(max(0, self.choice.findData(run_on)))
        self.ray_address.setText(ray_address)

    def address(self) -> str | None:
        """The Ray cluster's address, or None for this machine; `ConfigError` when the cluster
        is chosen without one."""
        if self.run_on() != "ray":
            return None
        address = self.ray_address.text().strip()
        if not address:
            raise ConfigError("is missing: auto, local or the head's HOST:PORT", "ray_address")
        return address

    def _chosen(self) -> None:
        self.ray_address.setEnabled(self.run_on() == "ray")
        self.changed.emit()
