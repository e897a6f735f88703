"""The files a load left out of folders, each with its reason, under a "3 skipped ▸" toggle."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QListWidget, QListWidgetItem, QToolButton, QVBoxLayout, QWidget

from rlm_desktop.documents.model import Skipped

MAX_VISIBLE_LINES = 10
"""The open list grows to this many lines of text, then scrolls."""


class SkippedList(QWidget):
    """A collapsed count of skipped files that opens to list them with their reasons.

    Skips accumulate across loads (a path skipped twice is listed once, with its latest reason)
    until `clear()`; a path that later loads is taken off with `forget()`. Hidden when empty.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._skipped: dict[Path, tuple[str, str]] = {}
        self._suppressed = False
        self.toggle = QToolButton()
        self.toggle.setObjectName("link")
        self.toggle.setCheckable(True)
        self.toggle.setAccessibleName("Skipped files")
        self.toggle.setToolTip("Files in the folders you added that were not loaded, and why")
        self.toggle.toggled.connect(self._show_list)
        self.list = QListWidget()
        self.list.setAccessibleName("Skipped files and reasons")
        self.list.setWordWrap(True)
        self.list.setUniformItemSizes(False)
        self.list.setResizeMode(QListWidget.ResizeMode.Adjust)
        self.list.setAlternatingRowColors(True)
        self.list.setSpacing(2)
        self.list.setHidden(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.toggle, 0, Qt.AlignmentFlag.AlignLeft)
        layout.addWidget(self.list)
        self._refresh()

    def __len__(self) -> int:
        return len(self._skipped)

    def add(self, skipped: Iterable[Skipped], roots: Iterable[Path] = ()) -> None:
        """List `skipped`, named relative to whichever of `roots` (the folders added) holds it."""
        folders = [Path(os.path.abspath(root.expanduser())) for root in roots if root.is_dir()]
        for skip in skipped:
            self._skipped.pop(skip.path, None)  # re-listed at the end, with its latest reason
            self._skipped[skip.path] = (_display_name(skip.path, folders), skip.reason)
        self._refresh()

    def forget(self, paths: Iterable[Path]) -> None:
        """Take `paths` off the list (they have since loaded)."""
        before = len(self._skipped)
        for path in paths:
            self._skipped.pop(path, None)
        if len(self._skipped) != before:
            self._refresh()

    def clear(self) -> None:
        """Forget every skip (the documents list was cleared)."""
        self._skipped.clear()
        self.toggle.setChecked(False)
        self._refresh()

    def suppress(self, suppressed: bool) -> None:
        """Hide the section while a saved session's documents are shown (the skips are kept)."""
        self._suppressed = suppressed
        self._refresh()

    def entries(self) -> list[tuple[str, str]]:
        """`(name, reason)` of each skipped file, in the order they were listed."""
        return list(self._skipped.values())

    def _refresh(self) -> None:
        self.list.clear()
        for path, (name, reason) in self._skipped.items():
            item = QListWidgetItem(f"{name} — {reason}")
            item.setToolTip(f"{path}\n{reason}")
            self.list.addItem(item)
        self.setHidden(self._suppressed or not self._skipped)
        self._show_list(self.toggle.isChecked())

    def _show_list(self, shown: bool) -> None:
        arrow = "▾" if shown else "▸"
        self.toggle.setText(f"{len(self._skipped):,} skipped {arrow}")
        self.list.setVisible(shown and bool(self._skipped))
        if self.list.isVisible():
            self._fit_list()

    def _fit_list(self) -> None:
        """Room for two lines an entry (reasons wrap), up to `MAX_VISIBLE_LINES`; then it scrolls.

        Fixed, so the documents list above gives up the space rather than this one.
        """
        line = self.list.fontMetrics().lineSpacing() + self.list.spacing()
        lines = min(MAX_VISIBLE_LINES, 2 * self.list.count())
        self.list.setFixedHeight(line * lines + 2 * self.list.frameWidth())


def _display_name(path: Path, folders: list[Path]) -> str:
    """`folder/relative/path` as the loader names documents in folders, else the file name."""
    for folder in folders:
        if path.is_relative_to(folder):
            return f"{folder.name}/{path.relative_to(folder).as_posix()}"
    return path.name
