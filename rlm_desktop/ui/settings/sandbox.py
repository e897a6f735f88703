"""Settings → Sandbox: where model code runs (Automatic, the kernel sandbox or WebAssembly) and
what that sandbox gives it on this machine, the folders it may read, how much its files may
take, and whether runs refuse model code without isolation. Changes are saved at once."""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from rlm_desktop import paths
from rlm_desktop.engine.config import MAX_SCRATCH_QUOTA_MB, ConfigError, SandboxChoice
from rlm_desktop.engine.exposure import exposures
from rlm_desktop.engine.sandbox.choice import backend_for
from rlm_desktop.ui.run.controls import REQUIRE_ISOLATION, SCRATCH_QUOTA, describe_config_error
from rlm_desktop.ui.run.sandbox_preparation import PREPARING
from rlm_desktop.ui.settings.sandbox_choice import BackendChoice
from rlm_desktop.ui.shared import file_dialogs
from rlm_desktop.ui.shared.preferences import Preferences
from rlm_desktop.ui.shared.widgets import note_label, plain_label

if TYPE_CHECKING:
    from rlm_desktop.engine.sandbox.choice import Backend
    from rlm_desktop.engine.sandbox.level import SandboxReport
    from rlm_desktop.ui.run.sandbox_preparation import WasmPreparation

log = logging.getLogger(__name__)
CHECKING = "Checking the sandbox this machine gives model code…"
MISSING = "missing: not opened to model code"
FULL_ISOLATION_HINT = (
    "Full isolation needs Landlock (Linux 5.13 or later, enabled) for files, and Landlock 4 "
    "(Linux 6.7) or unprivileged user namespaces for the network."
)
PATH_ROLE = Qt.ItemDataRole.UserRole + 1


class SandboxPage(QWidget):
    """Where model code runs, and the level a real launcher of that backend reports here
    (probed when the page is first shown, and again when the choice changes), the folders model
    code may read (read-only), and the "refuse without isolation" choice.

    `platform` is the system the choices are said for (this one's); `preparation`, the
    window's, is waited for before the WebAssembly sandbox is probed while it compiles its guest,
    and started when that sandbox is chosen.
    """

    def __init__(
        self,
        prefs: Preferences,
        parent: QWidget | None = None,
        *,
        platform: str = sys.platform,
        preparation: WasmPreparation | None = None,
    ) -> None:
        super().__init__(parent)
        self.prefs = prefs
        self.platform = platform
        self.preparation = preparation
        self.report: SandboxReport | None = None
        """What the probe found, once it has."""
        self.probe: asyncio.Task[None] | None = None
        self.choice = BackendChoice(prefs.sandbox_backend, platform)
        self.backends = self.choice.buttons
        self.choice.chosen.connect(self.choose)
        self.level = plain_label(CHECKING)
        self.level.setAccessibleName("Sandbox on this machine")
        self.level.setWordWrap(True)
        self.level.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.hint = note_label(FULL_ISOLATION_HINT)
        self.hint.hide()
        folders_note = QLabel(
            "Folders model code may read (read-only), besides Python and its packages. The "
            "documents you load reach it as <code>context</code> either way."
        )
        folders_note.setWordWrap(True)
        self.folders = QListWidget()
        self.folders.setAccessibleName("Folders model code may read")
        self.folders.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.add_button = QPushButton("Add folder…")
        self.add_button.clicked.connect(lambda: self.add_folder())
        self.remove_button = QPushButton("Remove")
        self.remove_button.clicked.connect(self.remove_selected)
        self.folders.itemSelectionChanged.connect(self._enable)
        self.exposure = plain_label()
        """What the opened folders expose that model code should not read, one line each."""
        self.exposure.setObjectName("warningLabel")
        self.exposure.setAccessibleName("Secrets the opened folders expose")
        self.exposure.setWordWrap(True)
        self.exposure.hide()
        self.quota = QSpinBox()
        self.quota.setAccessibleName(SCRATCH_QUOTA)
        self.quota.setRange(1, MAX_SCRATCH_QUOTA_MB)
        self.quota.setSingleStep(256)
        self.quota.setSuffix(" MB")
        self.quota.setGroupSeparatorShown(True)
        self.quota.setValue(prefs.scratch_quota_mb)
        self.quota.valueChanged.connect(prefs.set_scratch_quota_mb)
        quota_row = QHBoxLayout()
        quota_row.addWidget(QLabel(f"{SCRATCH_QUOTA} at most"))
        quota_row.addWidget(self.quota)
        quota_row.addStretch(1)
        quota_note = note_label(
            "In all, per run. In memory where the Linux sandbox allows (gone with the run), else "
            "checked on disk while the run goes on; the disk always keeps room for the session's "
            "record. A write past it fails in the cell, which says why."
        )
        self.require = QCheckBox(REQUIRE_ISOLATION)
        self.require.setChecked(prefs.require_isolation)
        self.require.toggled.connect(prefs.set_require_isolation)
        require_note = note_label(
            "Then a run on a machine that gives less stops before any model code runs, and "
            "says what is missing."
        )
        buttons = QHBoxLayout()
        buttons.addWidget(self.add_button)
        buttons.addWidget(self.remove_button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addWidget(self.choice)
        layout.addSpacing(4)
        layout.addWidget(self.level)
        layout.addWidget(self.hint)
        layout.addSpacing(8)
        layout.addWidget(folders_note)
        layout.addWidget(self.folders, 1)
        layout.addLayout(buttons)
        layout.addWidget(self.exposure)
        layout.addSpacing(8)
        layout.addLayout(quota_row)
        layout.addWidget(quota_note)
        layout.addSpacing(8)
        layout.addWidget(self.require)
        layout.addWidget(require_note)
        self.list_folders()

    def showEvent(self, event: QShowEvent) -> None:
        """Probe the sandbox the first time the page shows; mark folders gone meanwhile."""
        super().showEvent(event)
        self.list_folders()
        if self.probe is None:
            self.start_probe()

    def choose(self, choice: SandboxChoice) -> None:
        """Save where model code runs (the next runs take it), get the WebAssembly sandbox
        ready if runs now need it, and probe the backend chosen."""
        self.prefs.set_sandbox_backend(choice)
        if self.preparation is not None:
            self.preparation.start_if_needed(choice)
        self.start_probe()

    def start_probe(self) -> None:
        """Probe the backend runs take now (a probe under way is stopped first); a choice this
        system cannot give is said instead."""
        self.stop_probe()
        self.report = None
        self.hint.hide()
        try:
            backend = backend_for(self.prefs.sandbox_backend, self.platform)
        except ConfigError as error:
            self.level.setText(describe_config_error(error))
            return
        preparation = self.preparation if backend == "wasm" else None
        self.level.setText(PREPARING if preparation and preparation.compiling else CHECKING)
        self.probe = asyncio.ensure_future(self._probe(backend))

    async def _probe(self, backend: Backend) -> None:
        from rlm_desktop.engine.sandbox.connection import WorkerDied
        from rlm_desktop.ui.settings.sandbox_probe import probe_backend

        if backend == "wasm" and self.preparation is not None and self.preparation.busy:
            await self.preparation.wait()  # rather than compile the guest twice at once
            self.level.setText(CHECKING)
        try:
            report = await probe_backend(backend)
        except (OSError, WorkerDied, TimeoutError) as error:
            log.info("sandbox probe: %s", error)
            self.level.setText(f"The sandbox could not start on this machine: {error}")
            self.hint.setVisible(backend == "kernel")
            return
        self.show_report(report)

    def show_report(self, report: SandboxReport) -> None:
        """Say what the sandbox lets model code do here, and how to get more if it is not full."""
        self.report = report
        self.level.setText(report.describe())
        self.hint.setVisible(not report.isolated)

    def stop_probe(self) -> None:
        """Cancel a probe still running (the dialog is closing); its launcher ends with it."""
        if self.probe is not None and not self.probe.done():
            self.probe.cancel()

    def list_folders(self) -> None:
        """List the saved folders, those that no longer exist marked as not opened, and warn
        about those that expose secrets (the home folder, `~/.ssh`, the data folder, ...)."""
        opened = self.prefs.opened_folders()
        exposed = {e.opened: f"{e.line()}." for e in exposures(opened, paths.data_dir())}
        self.folders.clear()
        for folder in self.prefs.allowed_folders():
            item = QListWidgetItem(folder if folder in opened else f"{folder}  ({MISSING})")
            item.setData(PATH_ROLE, folder)
            if folder not in opened:
                item.setForeground(self.palette().placeholderText())
                item.setToolTip(f"{folder} does not exist now, so runs do not open it.")
            elif folder in exposed:
                item.setToolTip(exposed[folder])
            self.folders.addItem(item)
        self.exposure.setText("\n".join(exposed.values()))
        self.exposure.setVisible(bool(exposed))
        self._enable()

    def folder_paths(self) -> list[str]:
        """The folders as listed, in order."""
        items = (self.folders.item(row) for row in range(self.folders.count()))
        return [str(item.data(PATH_ROLE)) for item in items if item is not None]

    def add_folder(self, folder: str | None = None) -> str | None:
        """Open `folder` (chosen in a folder dialog when None) to model code; returns it."""
        if folder is None:
            folder = file_dialogs.existing_folder(self, "A folder model code may read", "readable")
            if not folder:
                return None
        path = str(Path(folder).expanduser().resolve())
        self.prefs.set_allowed_folders([*self.prefs.allowed_folders(), path])
        self.list_folders()
        return path

    def remove_selected(self) -> None:
        """Close the selected folders to model code."""
        chosen = {str(item.data(PATH_ROLE)) for item in self.folders.selectedItems()}
        self.prefs.set_allowed_folders([f for f in self.prefs.allowed_folders() if f not in chosen])
        self.list_folders()

    def _enable(self) -> None:
        self.remove_button.setEnabled(bool(self.folders.selectedItems()))
