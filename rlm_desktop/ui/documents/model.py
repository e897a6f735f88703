"""The list of loaded documents (and the files that failed) as a Qt table model."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, Qt
from PySide6.QtGui import QColor

from rlm_desktop import formatting as fmt
from rlm_desktop.documents.display_names import own_name_and_folder, shown
from rlm_desktop.documents.model import Document, human_size
from rlm_desktop.engine.context import ContextSection, sections_from_json
from rlm_desktop.ui.appearance.theme import colors, icon
from rlm_desktop.ui.shared.indexes import Index

if TYPE_CHECKING:
    from rlm_desktop.review.health.coverage import DocumentCoverage

COLUMNS = ("#", "Name", "Folder", "Type", "Size", "Chars", "Tokens", "Read")
NUMBER, NAME, FOLDER, TYPE, SIZE, CHARS, TOKENS, READ = range(len(COLUMNS))
SHARE_ROLE = Qt.ItemDataRole.UserRole + 1
"""The share of a document that reached a model in the run shown (None when not known)."""
SORT_ROLE = Qt.ItemDataRole.UserRole + 2
"""What a column sorts by: the row (the run's order) for "#", numbers for sizes, folded names."""
FOLDER_ROLE = Qt.ItemDataRole.UserRole + 3
"""The folder as shown, for the name column to show after the name when its own is hidden."""


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

    @cached_property
    def own_and_folder(self) -> tuple[str, str]:
        """The file's own name and its folder, as shown (escaped: `shown`)."""
        own, folder = own_name_and_folder(self.name, self.path.parent.name)
        return shown(own), shown(folder)

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
        self._numbers: list[int | None] = []
        """Each row's index in `context` (None for a file that failed)."""

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
            return self._display(entry, column, index.row())
        if role == SORT_ROLE:
            return self._sort_key(entry, column, index.row())
        if role == FOLDER_ROLE:
            return entry.own_and_folder[1]
        if role == SHARE_ROLE:
            return None if entry.coverage is None else entry.coverage.share
        if role == Qt.ItemDataRole.ToolTipRole and column == READ and entry.coverage is not None:
            return _coverage_tip(entry.coverage)
        if role == Qt.ItemDataRole.ToolTipRole:
            notes = [entry.error] if entry.error else list(entry.notes)
            return "\n".join([shown(str(entry.path)), *notes])
        if role == Qt.ItemDataRole.ForegroundRole and not entry.ok:
            return QColor(colors().error)
        if role == Qt.ItemDataRole.DecorationRole and column == NAME:
            if not entry.ok:
                return icon("status-error")
            if entry.notes:
                return icon("status-limit")
        if role == Qt.ItemDataRole.TextAlignmentRole and column in (NUMBER, SIZE, CHARS, TOKENS):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def _display(self, entry: Entry, column: int, row: int) -> str:
        if column == NUMBER:
            number = self._numbers[row] if row < len(self._numbers) else None
            return "" if number is None else str(number)
        if column in (NAME, FOLDER):
            return entry.own_and_folder[column - NAME]
        doc = entry.document
        if doc is None:
            return entry.error or "" if column == TYPE else ""
        if column == READ:
            return "" if entry.coverage is None else f"{entry.coverage.share:.0%}"
        if column == TYPE:
            return str(doc.type)
        if column == SIZE:
            return human_size(doc.size)
        if column == CHARS:
            return f"{doc.chars:,}"
        return ("~" if doc.tokens_estimated else "") + f"{doc.tokens:,}"

    def _sort_key(self, entry: Entry, column: int, row: int) -> object:
        """The value `column` sorts by; failed files sort as zero."""
        own, folder = entry.own_and_folder
        doc = entry.document
        if column == NUMBER:
            return row
        if column == NAME:
            return f"{own.casefold()}\0{folder.casefold()}"
        if column == FOLDER:
            return f"{folder.casefold()}\0{own.casefold()}"
        if column == TYPE:
            return "" if doc is None else str(doc.type)
        if column == READ:
            return -1.0 if entry.coverage is None else entry.coverage.share
        if doc is None:
            return -1
        return {SIZE: doc.size, CHARS: doc.chars, TOKENS: doc.tokens}[column]

    def _renumber(self, emit: bool = True) -> None:
        """Number the loaded rows as the run's `context` holds them (and show the numbers)."""
        numbers: list[int | None] = []
        count = 0
        for entry in self.entries:
            numbers.append(count if entry.document is not None else None)
            count += entry.document is not None
        self._numbers = numbers
        if emit and self.entries:
            self.dataChanged.emit(self.index(0, NUMBER), self.index(len(self.entries) - 1, NUMBER))

    def add(self, documents: list[Document], errors: list[tuple[Path, str]]) -> None:
        """Append loaded documents and failures; one already listed (the same path, and the same
        part of it for a document found inside another) is replaced in place."""
        fresh = [Entry(path=Path(d.path), name=d.name, document=d) for d in documents]
        fresh += [Entry(path=Path(p), name=Path(p).name, error=m) for p, m in errors]
        rows = {(e.path, e.part): row for row, e in enumerate(self.entries)}
        count = len(self.entries)
        appended: list[Entry] = []
        replaced: list[int] = []
        for entry in fresh:
            key = (entry.path, entry.part)
            row = rows.get(key)
            if row is None:
                rows[key] = count + len(appended)
                appended.append(entry)
            elif row >= count:  # twice in this one load: the later one
                appended[row - count] = entry
            else:
                self.entries[row] = entry
                replaced.append(row)
        if replaced:
            last = len(COLUMNS) - 1
            self.dataChanged.emit(self.index(min(replaced), 0), self.index(max(replaced), last))
        if appended:  # one insertion, not one a row: a view lays out 4,000 rows once
            self.beginInsertRows(QModelIndex(), count, count + len(appended) - 1)
            self.entries.extend(appended)
            self._renumber(emit=False)
            self.endInsertRows()
        self._renumber()

    def remove_rows(self, rows: list[int]) -> None:
        """Remove the given rows."""
        for row in sorted(set(rows), reverse=True):
            if 0 <= row < len(self.entries):
                self.beginRemoveRows(QModelIndex(), row, row)
                del self.entries[row]
                self.endRemoveRows()
        self._renumber()

    def move(self, row: int, delta: int) -> int:
        """Move a row up (-1) or down (+1); returns its new row."""
        target = row + delta
        if not (0 <= row < len(self.entries) and 0 <= target < len(self.entries)):
            return row
        destination = target + 1 if delta > 0 else target
        self.beginMoveRows(QModelIndex(), row, row, QModelIndex(), destination)
        self.entries.insert(target, self.entries.pop(row))
        self.endMoveRows()
        self._renumber()
        return target

    def replace(self, entries: list[Entry]) -> None:
        """Show `entries` instead of the current rows."""
        self.beginResetModel()
        self.entries = list(entries)
        self._renumber(emit=False)
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
