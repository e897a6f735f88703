"""A line that folds a section: a disclosure button with the section's name, and a summary of
what the section holds, shown beside it."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSizePolicy, QToolButton, QWidget


class FoldLine(QWidget):
    """`title` (with its `&` mnemonic) as a disclosure button, and a muted summary after it.
    `toggled(bool)` fires when the button opens or folds the section."""

    toggled = Signal(bool)

    def __init__(self, title: str, tip: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        name = title.replace("&", "")
        self.toggle = QToolButton()
        self.toggle.setObjectName("disclosure")
        self.toggle.setText(title)
        self.toggle.setAccessibleName(name)
        self.toggle.setToolTip(tip)
        self.toggle.setCheckable(True)
        self.toggle.setAutoRaise(True)
        self.toggle.setFocusPolicy(Qt.FocusPolicy.StrongFocus)  # in the Tab order too
        self.toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.toggle.setArrowType(Qt.ArrowType.RightArrow)
        self.toggle.toggled.connect(self._toggled)
        self.summary = QLabel()
        self.summary.setObjectName("muted")
        self.summary.setAccessibleName(f"{name} summary")
        self.summary.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.toggle)
        layout.addWidget(self.summary, 1)
        layout.addStretch(0)  # the button stays at the left while the summary is hidden

    @property
    def is_open(self) -> bool:
        """True while the section is open."""
        return self.toggle.isChecked()

    def set_open(self, shown: bool) -> None:
        """Open or fold the section."""
        self.toggle.setChecked(shown)
        self._toggled(shown)

    def _toggled(self, shown: bool) -> None:
        self.toggle.setArrowType(Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow)
        self.toggled.emit(shown)

    def summarise(self, text: str) -> None:
        """Show `text` after the button (and whole, as its tooltip)."""
        self.summary.setText(text)
        self.summary.setToolTip(text)
