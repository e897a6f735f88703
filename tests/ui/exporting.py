"""Export from the Sessions dialog and wait for the file, as a person waits for the message."""

from __future__ import annotations

from pathlib import Path

from pytestqt.qtbot import QtBot

from rlm_desktop.ui.sessions.dialog import SessionsDialog
from rlm_desktop.ui.sessions.export_target import ExportTarget


def exported(
    qtbot: QtBot, dialog: SessionsDialog, target: ExportTarget | Path | None = None
) -> Path | None:
    """The file `dialog.export_selected(target)` wrote once it is done (None: it could not)."""
    pending = dialog.export_selected(target)
    assert pending is not None, dialog.message.text()
    qtbot.waitUntil(pending.done, timeout=30_000)
    return pending.result()
