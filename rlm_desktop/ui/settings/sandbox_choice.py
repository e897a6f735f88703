"""Settings → Sandbox's "Where model code runs": Automatic, the kernel sandbox or WebAssembly,
each said as it is on this system (Automatic names what it takes here and why; the kernel
sandbox is offered only where the system gives one)."""

from __future__ import annotations

import sys
from functools import partial

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QButtonGroup, QLabel, QRadioButton, QVBoxLayout, QWidget

from rlm_desktop.engine.config import SANDBOX_CHOICES, SandboxChoice
from rlm_desktop.engine.sandbox.choice import kernel_available
from rlm_desktop.ui.run.controls import WHERE_CODE_RUNS
from rlm_desktop.ui.shared.widgets import note_label

SYSTEMS = {"linux": "Linux", "darwin": "macOS", "win32": "Windows", "cygwin": "Windows"}
ABOUT = (
    "The kernel sandbox is the system's own confinement around Python (Linux: Landlock, "
    "namespaces, seccomp; macOS: Seatbelt). WebAssembly runs model code in a Python of its own, "
    "the same on every system, with Python's standard library but no numpy or other native "
    "packages; the first time on a machine it is compiled for it, once (seconds)."
)


def system_name(platform: str) -> str:
    """`sys.platform` as people call the system."""
    return next((name for key, name in SYSTEMS.items() if platform.startswith(key)), platform)


def choice_labels(platform: str) -> dict[SandboxChoice, str]:
    """Each choice's words on `platform`."""
    system = system_name(platform)
    if kernel_available(platform):
        return {
            "auto": f"Automatic: the kernel sandbox here ({system} gives one)",
            "kernel": "Kernel sandbox: the system's own, around Python",
            "wasm": "WebAssembly: a Python of its own, the same on every system",
        }
    return {
        "auto": f"Automatic: WebAssembly here ({system} gives model code no kernel sandbox)",
        "kernel": f"Kernel sandbox: not on {system} (Linux and macOS have one)",
        "wasm": "WebAssembly: a Python of its own, the same on every system",
    }


class BackendChoice(QWidget):
    """The three choices as radio buttons (`buttons` by choice); `chosen` fires with the one
    the user picks."""

    chosen = Signal(str)

    def __init__(
        self, current: SandboxChoice, platform: str = sys.platform, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.group = QButtonGroup(self)
        self.buttons: dict[SandboxChoice, QRadioButton] = {}
        title = QLabel(WHERE_CODE_RUNS)
        title.setObjectName("cardTitle")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(title)
        for choice, text in choice_labels(platform).items():
            button = QRadioButton(text)
            button.setAccessibleName(text)
            button.setChecked(choice == current)
            button.toggled.connect(partial(self._toggled, choice))
            self.group.addButton(button, SANDBOX_CHOICES.index(choice))
            self.buttons[choice] = button
            layout.addWidget(button)
        self.buttons["kernel"].setEnabled(kernel_available(platform))
        layout.addWidget(note_label(ABOUT))

    def _toggled(self, choice: SandboxChoice, on: bool) -> None:
        if on:
            self.chosen.emit(choice)
