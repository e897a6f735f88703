"""The list of loaded documents (and the files that failed) as a Qt table model."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, Qt
from PySide6.QtGui import QColor

from rlm_desktop import formatting as fmt
from rlm_desktop.documents.model import Document, human_size
from rlm_desktop.engine.context import ContextSection, sections_from_json
from rlm_desktop.ui.appearance.theme import colors, icon
from rlm_desktop.ui.shared.indexes import Index

if TYPE_CHECKING:
    from rlm_desktop.review.health.coverage import DocumentCoverage

COLUMNS = ("Name", "Type", "Size", "Chars", "Tokens", "Read")
READ = COLUMNS.index("Read")
SHARE_ROLE = Qt.ItemDataRole.UserRole + 1
"""The share of a document that reached a model in the run shown (None when not known)."""


@dataclass(frozen=True)
class SavedDocument:
    """A document of a saved session, as the store kept it (for review only)."""

    name: str
    path: str
    type: str
    size: int
    chars: int
    tokens: int
    text: str
    tokens_estimated: bool = False
    sections: tuple[ContextSection, ...] = ()

    @classmethod
    def from_row(cls, row: dict[str, Any], text: str) -> SavedDocument:
        """Build from a `documents` row of `Store.session` and the saved text (a session saved
        before documents kept their type shows its file name's suffix)."""
        path = str(row.get("path") or "")
        suffix = Path(path or str(row.get("name", ""))).suffix.lstrip(".").lower()
        return cls(
            name=str(row.get("name", "")),
            path=path,
            type=str(row.get("type") or suffix or "text"),
            sections=sections_from_json(row.get("sections"), len(text)),
            size=int(row.get("size") or 0),
            chars=int(row.get("chars") or len(text)),
            tokens=int(row.get("tokens") or 0),
            text=text,
        )


@dataclass
class Entry:
    """One row: a loaded document (`document`) or a path that failed (`error`)."""

    path: Path
    name: str
    document: Document | SavedDocument | None = None
    error: str | None = None
    coverage: DocumentCoverage | None = None
    """What of the document reached a model in the run shown (None: no run checked)."""

    @property
    def ok(self) -> bool:
        """True for a loaded document."""
        return self.document is not None

    @property
    def part(self) -> str:
        """Where in its file the document lies, for one found inside another ("" otherwise)."""
        return self.document.part if isinstance(self.document, Document) else ""

    @property
    def notes(self) -> tuple[str, ...]:
        """What was lossy in loading the document (pages that need OCR, replaced bytes)."""
        return self.document.notes if isinstance(self.document, Document) else ()


class DocumentsModel(QAbstractTableModel):
    """Rows of documents in the order the engine will get them, errors inline."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.entries: list[Entry] = []

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.entries)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return len(COLUMNS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> object:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not index.isValid():
            return None
        entry = self.entries[index.row()]
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self._display(entry, column)
        if role == SHARE_ROLE:
            return None if entry.coverage is None else entry.coverage.share
        if role == Qt.ItemDataRole.ToolTipRole and column == READ and entry.coverage is not None:
            return _coverage_tip(entry.coverage)
        if role == Qt.ItemDataRole.ToolTipRole:
            return "\n".join([str(entry.path), *([entry.error] if entry.error else entry.notes)])
        if role == Qt.ItemDataRole.ForegroundRole and not entry.ok:
            return QColor(colors().error)
        if role == Qt.ItemDataRole.DecorationRole and column == 0:
            if not entry.ok:
                return icon("status-error")
            if entry.notes:
                return icon("status-limit")
        if role == Qt.ItemDataRole.TextAlignmentRole and column >= 2:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def _display(self, entry: Entry, column: int) -> str:
        if column == 0:
            return entry.name
        doc = entry.document
        if doc is None:
            return entry.error or "" if column == 1 else ""
        if column == READ:
            return "" if entry.coverage is None else f"{entry.coverage.share:.0%}"
        if column == 1:
            return str(doc.type)
        if column == 2:
            return human_size(doc.size)
        if column == 3:
            return f"{doc.chars:,}"
        return ("~" if doc.tokens_estimated else "") + f"{doc.tokens:,}"

    def add(self, documents: list[Document], errors: list[tuple[Path, str]]) -> None:
        """Append loaded documents and failures; one already listed (the same path, and the same
        part of it for a document found inside another) is replaced in place."""
        fresh = [Entry(path=Path(d.path), name=d.name, document=d) for d in documents]
        fresh += [Entry(path=Path(p), name=Path(p).name, error=m) for p, m in errors]
        for entry in fresh:
            key = (entry.path, entry.part)
            existing = next(
                (i for i, e in enumerate(self.entries) if (e.path, e.part) == key), None
            )
            if existing is not None:
                self.entries[existing] = entry
                self.dataChanged.emit(
                    self.index(existing, 0), self.index(existing, len(COLUMNS) - 1)
                )
            else:
                row = len(self.entries)
                self.beginInsertRows(QModelIndex(), row, row)
                self.entries.append(entry)
                self.endInsertRows()

    def remove_rows(self, rows: list[int]) -> None:
        """Remove the given rows."""
        for row in sorted(set(rows), reverse=True):
            if 0 <= row < len(self.entries):
                self.beginRemoveRows(QModelIndex(), row, row)
                del self.entries[row]
                self.endRemoveRows()

    def move(self, row: int, delta: int) -> int:
        """Move a row up (-1) or down (+1); returns its new row."""
        target = row + delta
        if not (0 <= row < len(self.entries) and 0 <= target < len(self.entries)):
            return row
        destination = target + 1 if delta > 0 else target
        self.beginMoveRows(QModelIndex(), row, row, QModelIndex(), destination)
        self.entries.insert(target, self.entries.pop(row))
        self.endMoveRows()
        return target

    def replace(self, entries: list[Entry]) -> None:
        """Show `entries` instead of the current rows."""
        self.beginResetModel()
        self.entries = list(entries)
        self.endResetModel()

    def set_coverage(self, documents: Sequence[DocumentCoverage]) -> None:
        """Show what of each document reached a model: `documents` are the run's, in the order
        it took them (the loaded rows, in order); none clears it."""
        loaded = [entry for entry in self.entries if entry.document is not None]
        for entry in self.entries:
            entry.coverage = None
        for entry, coverage in zip(loaded, documents, strict=False):
            if entry.name == coverage.name:
                entry.coverage = coverage
        if self.entries:
            self.dataChanged.emit(self.index(0, READ), self.index(len(self.entries) - 1, READ))

    def row_of_run_document(self, index: int, name: str) -> int | None:
        """The row of a run's document number `index` named `name`: the loaded rows are the
        run's documents in order, unless the list changed since (then the one of that name)."""
        loaded = [row for row, entry in enumerate(self.entries) if entry.document is not None]
        if 0 <= index < len(loaded) and self.entries[loaded[index]].name == name:
            return loaded[index]
        return next((row for row in loaded if self.entries[row].name == name), None)

    def listed(self) -> list[Document | SavedDocument]:
        """The documents listed, in order (a saved session's while it is reviewed)."""
        return [e.document for e in self.entries if e.document is not None]

    def documents(self) -> list[Document]:
        """The loaded documents a run can take, in order."""
        return [d for d in self.listed() if isinstance(d, Document)]


def _coverage_tip(coverage: DocumentCoverage) -> str:
    unread = len(coverage.uncovered)
    gaps = f"; {fmt.plural(unread, 'range')} never read" if unread else ""
    return (
        f"{coverage.covered:,} of {coverage.chars:,} characters ({coverage.share:.0%}) reached a "
        f"model in this run{gaps}. The preview shades what was read."
    )
