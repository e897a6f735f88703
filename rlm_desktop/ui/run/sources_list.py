"""The answer card's Sources list and "Read to answer" list, and the passages they open.

One row per checked source: its marker, a mark for how it matched (✓ word for word, ≈ with
spacing changed or approximately, ✗ not in the documents), where it is and the quote. A source
that was not found is in the warning colour with the reason, never in a green or plain look.
Under them, the passages the run's sub-calls were given. A row with a passage opens it in the
documents preview (`chosen`); the list is as high as a few rows and scrolls past them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QTreeWidget, QTreeWidgetItem, QWidget

from rlm_desktop import formatting as fmt
from rlm_desktop.review.health.provenance import ReadPassage
from rlm_desktop.review.health.sources import CheckedSource, match_label, place_label
from rlm_desktop.review.health.sources_text import ORIGINS, passage_label, read_listing
from rlm_desktop.ui.appearance.theme import colors

TARGET = Qt.ItemDataRole.UserRole
ROWS_SHOWN = 4
"""Rows shown before the list scrolls: the answer and the console keep the room."""
QUOTE_CHARS = 160
MARKS = {"exact": "✓", "span": "✓", "normalized": "≈", "fuzzy": "≈", "not_found": "✗"}


@dataclass(frozen=True)
class ChosenPassage:
    """A passage to open in the documents preview: `[start, end)` of the run's document number
    `document_index` (in the order the run took them), named `document`, with `caption` saying
    what it is and how it was verified (`approximate` when it was not found word for word)."""

    document_index: int
    document: str
    start: int
    end: int
    caption: str
    approximate: bool = False


def source_passage(source: CheckedSource) -> ChosenPassage | None:
    """The passage a found source opens (None for one that was not found)."""
    index, start, end = source.document_index, source.start, source.end
    if not source.found or index is None or start is None or end is None:
        return None
    caption = f"Source [{source.number}]: {match_label(source)} — {place_label(source)}"
    approximate = source.match in ("normalized", "fuzzy")
    return ChosenPassage(index, source.document or "", start, end, caption, approximate)


def read_passage(passage: ReadPassage) -> ChosenPassage:
    """The passage a "Read to answer" row opens."""
    how = "the answer repeats its reply" if passage.used else "the answer does not repeat it"
    caption = f"Read by sub-call {passage.call_id} ({how}) — {passage_label(passage)}"
    return ChosenPassage(
        passage.document_index, passage.document, passage.start, passage.end, caption
    )


def source_row(source: CheckedSource) -> str:
    """`[1] ✓ found word for word · minutes.txt, characters 24–101 · “The board …”`."""
    quote = fmt.one_line(source.quote, QUOTE_CHARS)
    if not source.found:
        return f"[{source.number}] ✗ {source.note or match_label(source)} · “{quote}”"
    return f"[{source.number}] {MARKS[source.match]} {match_label(source)} · " + (
        f"{place_label(source)} · “{quote}”"
    )


class SourcesList(QTreeWidget):
    """Sources, then what was read to answer; `chosen(ChosenPassage)` when a row is clicked."""

    chosen = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setHeaderHidden(True)
        self.setAccessibleName("Sources")
        self.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.setUniformRowHeights(True)
        self.sources_item: QTreeWidgetItem | None = None
        self.read_item: QTreeWidgetItem | None = None
        self._passages: list[ChosenPassage] = []
        self._rows: dict[int, QTreeWidgetItem] = {}
        self.itemClicked.connect(self._on_chosen)
        self.itemActivated.connect(self._on_chosen)
        self.itemExpanded.connect(lambda _item: self.updateGeometry())
        self.itemCollapsed.connect(lambda _item: self.updateGeometry())
        self.hide()

    def show_sources(self, sources: Sequence[CheckedSource], read: Sequence[ReadPassage]) -> None:
        """List `sources` and the passages `read` (the used ones, or all when none is)."""
        self.clear()
        self._passages, self._rows = [], {}
        self.sources_item = self.read_item = None
        if sources:
            self.sources_item = self._add_sources(sources)
        if read:
            self.read_item = self._add_read(read, open_it=not sources)
        self.setVisible(bool(sources or read))
        self.updateGeometry()

    def row_of(self, number: int) -> QTreeWidgetItem | None:
        """The row of source `number`."""
        return self._rows.get(number)

    def reveal(self, number: int) -> None:
        """Select and scroll to source `number`'s row."""
        row = self._rows.get(number)
        if row is not None and self.sources_item is not None:
            self.sources_item.setExpanded(True)
            self.setCurrentItem(row)
            self.scrollToItem(row)

    def passage_of(self, item: QTreeWidgetItem) -> ChosenPassage | None:
        """The passage a row opens (None for a heading or a source not found)."""
        index = item.data(0, TARGET)
        return self._passages[index] if isinstance(index, int) else None

    def _add_sources(self, sources: Sequence[CheckedSource]) -> QTreeWidgetItem:
        missing = sum(1 for source in sources if not source.found)
        found = len(sources) - missing
        title = f"Sources: {found:,} found" + (
            f", {missing:,} not in the documents" if missing else ""
        )
        heading = QTreeWidgetItem([title])
        if missing:
            heading.setForeground(0, QBrush(QColor(colors().warning)))
        self.addTopLevelItem(heading)
        for source in sources:
            row = QTreeWidgetItem([source_row(source)])
            row.setToolTip(0, _source_tip(source))
            passage = source_passage(source)
            if passage is None:
                row.setForeground(0, QBrush(QColor(colors().warning)))
            else:
                row.setData(0, TARGET, self._keep(passage))
            heading.addChild(row)
            self._rows[source.number] = row
        heading.setExpanded(True)
        return heading

    def _add_read(self, read: Sequence[ReadPassage], *, open_it: bool) -> QTreeWidgetItem:
        listing = read_listing(read)
        shown = listing.passages if listing is not None else ()
        used = any(passage.used for passage in shown)
        if used:
            title = f"Read to answer: {fmt.plural(len(shown), 'passage')} whose replies it repeats"
        else:
            title = f"Read by sub-calls: {fmt.plural(len(shown), 'passage')} (none repeated)"
        heading = QTreeWidgetItem([title])
        heading.setToolTip(
            0,
            "The passages of the documents the run's sub-calls were given"
            + ("; the answer repeats these calls' replies." if used else "."),
        )
        self.addTopLevelItem(heading)
        for passage in shown:
            row = QTreeWidgetItem([f"{passage_label(passage)} · sub-call {passage.call_id}"])
            row.setData(0, TARGET, self._keep(read_passage(passage)))
            heading.addChild(row)
        heading.setExpanded(open_it)
        return heading

    def _keep(self, passage: ChosenPassage) -> int:
        self._passages.append(passage)
        return len(self._passages) - 1

    def _on_chosen(self, item: QTreeWidgetItem, _column: int = 0) -> None:
        passage = self.passage_of(item)
        if passage is not None:
            self.chosen.emit(passage)

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        """The rows in view, up to `ROWS_SHOWN`, framed."""
        rows, item = 0, self.topLevelItem(0)
        while item is not None and rows < ROWS_SHOWN:
            rows += 1
            item = self.itemBelow(item)
        line = max(self.sizeHintForRow(0), self.fontMetrics().height() + 4)
        return QSize(super().sizeHint().width(), max(1, rows) * line + 2 * self.frameWidth())

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        """Two lines."""
        return QSize(super().minimumSizeHint().width(), self.fontMetrics().height() * 2)


def _source_tip(source: CheckedSource) -> str:
    lines = [f"[{source.number}] {match_label(source)} ({ORIGINS[source.origin]})"]
    if source.found:
        lines.append(place_label(source))
    elif source.note:
        lines.append(source.note)
    lines.append(f"“{source.quote}”")
    return "\n".join(lines)
