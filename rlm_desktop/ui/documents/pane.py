"""The documents pane: add files and folders, see each one's size and tokens, preview it.

Loading runs in a worker thread (parsing a PDF can take seconds); the window stays live, shows
the files found, loaded and skipped as it goes, and adds the results when the thread is done
(Cancel adds none: the list stays as it was). The list shows each file's own name, then its
folder; it sorts by any column and filters by name or type without changing the run's order
(the "#" column, `context[i]`). A source of an answer, or a passage read to answer,
opens in the preview (`show_passage`): scrolled to, shaded, and labelled with how it was found. Failures show inline, in the list, with the reason;
files left out of folders are listed under it ("3 skipped ▸"), each with its reason.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import (
    QDragEnterEvent,
    QDragLeaveEvent,
    QDropEvent,
    QKeySequence,
    QResizeEvent,
    QShortcut,
    QTextBlock,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QSizePolicy,
    QSplitter,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from rlm_desktop.documents.load_progress import LoadCancelled, LoadProgress
from rlm_desktop.documents.model import Document, DocumentTotals, LoadResult
from rlm_desktop.engine.config import AUTO_DIRECT_MAX_TOKENS, DEFAULT_MODEL
from rlm_desktop.ui.appearance.theme import monospace_font, repolish
from rlm_desktop.ui.documents.coverage import CoverageBarDelegate, shade_read
from rlm_desktop.ui.documents.listing import DocumentsProxy, FolderDelegate, NameDelegate
from rlm_desktop.ui.documents.loading import LoadingBar, LoadWatch
from rlm_desktop.ui.documents.model import (
    CHARS,
    COLUMNS,
    FOLDER,
    NAME,
    NUMBER,
    READ,
    TOKENS,
    DocumentsModel,
    Entry,
    SavedDocument,
)
from rlm_desktop.ui.documents.parts import PartPicker
from rlm_desktop.ui.documents.passage import mark_passage
from rlm_desktop.ui.documents.shading import qt_positions
from rlm_desktop.ui.documents.skipped import SkippedList
from rlm_desktop.ui.shared import file_dialogs
from rlm_desktop.ui.shared.widgets import plain_label, search_box, tool_button

if TYPE_CHECKING:
    from rlm_desktop.review.health.coverage import Coverage

PREVIEW_CHARS = 200_000
NARROW_PX = 380
GONE = "no longer there: moved or deleted since the last session"
"""Below this width the list drops its Folder (drawn after the name then), Type, Size and Chars
columns so that names stay readable."""
OPTIONAL_COLUMNS = ("Folder", "Type", "Size", "Chars")
MEDIUM_PX = 640
"""Below this width the Chars column is left out too (the totals give the characters)."""
FIT_ROWS = 100
"""Columns fit the widest of this many rows (Qt's default, 1,000, asked 4,000 files' rows for
~190,000 values each time the list changed: most of a second)."""


def load_in_thread(
    paths: Sequence[Path], model: str, ocr: bool = True, on_progress: LoadWatch | None = None
) -> LoadResult:
    """Load `paths` with the document loaders: documents, skipped files and failures."""
    from rlm_desktop.documents import LoadOptions, load_paths

    return load_paths(list(paths), LoadOptions(model=model, ocr=ocr, on_progress=on_progress))


class DocumentsPane(QWidget):
    """The pane on the left of the main window. `changed` fires when the list changes."""

    changed = Signal()
    loading_changed = Signal(bool)
    load_progressed = Signal(object)
    """A load's counts so far (`LoadProgress`), a few times a second while it runs."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAcceptDrops(True)
        self.model = DocumentsModel(self)
        self.token_model = DEFAULT_MODEL
        self.direct_call_tokens = AUTO_DIRECT_MAX_TOKENS
        self.ocr = True
        """Read images and scanned PDF pages by OCR (Settings → Run defaults)."""
        self.read_only = False
        self._executor: ThreadPoolExecutor | None = None
        self._loads: dict[asyncio.Future[LoadResult], LoadWatch] = {}
        self._live_entries: list[Entry] | None = None
        self._held: list[tuple[LoadResult, list[Path]]] = []
        """Loads that ended while a saved session was in view, for the live list."""
        self._names_kept: dict[str, str] = {}

        title = QLabel("Documents")
        title.setObjectName("cardTitle")
        self.add_files_button = tool_button("Add files…", "Add files", self.choose_files)
        self.add_folder_button = tool_button("Add folder…", "Add a folder", self.choose_folder)
        self.remove_button = tool_button(
            "Remove", "Remove the selected documents (Delete)", self.remove_selected
        )
        self.up_button = tool_button("↑", "Move up (Alt+Up)", lambda: self.move_selected(-1))
        self.down_button = tool_button("↓", "Move down (Alt+Down)", lambda: self.move_selected(1))
        self.clear_button = tool_button(
            "Clear", "Remove every document and the list of skipped files", self.clear
        )
        self.clear_button.setAccessibleName("Clear documents")
        self.up_button.setAccessibleName("Move document up")
        self.down_button.setAccessibleName("Move document down")

        self.proxy = DocumentsProxy(self.model, self)
        self.view = QTreeView()
        self.view.setModel(self.proxy)
        self.view.setRootIsDecorated(False)
        self.view.setUniformRowHeights(True)
        self.view.setAlternatingRowColors(True)
        self.view.setTextElideMode(Qt.TextElideMode.ElideRight)  # the name's start tells it
        self.view.setAccessibleName("Documents")
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setSortingEnabled(True)
        self.view.sortByColumn(NUMBER, Qt.SortOrder.AscendingOrder)
        header = self.view.header()
        header.setStretchLastSection(False)
        header.setResizeContentsPrecision(FIT_ROWS)
        for column in range(len(COLUMNS)):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(NAME, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(FOLDER, QHeaderView.ResizeMode.Interactive)
        self.proxy.setHeaderData(
            NUMBER, Qt.Orientation.Horizontal, "The document's place in the run: context[i]",
            Qt.ItemDataRole.ToolTipRole,
        )  # fmt: skip
        self.view.setItemDelegateForColumn(
            NAME, NameDelegate(lambda: not self.view.isColumnHidden(FOLDER), self.view)
        )
        self.view.setItemDelegateForColumn(FOLDER, FolderDelegate(self.view))
        self.view.setItemDelegateForColumn(READ, CoverageBarDelegate(self.view))
        self.view.setColumnHidden(READ, True)
        self.view.selectionModel().currentRowChanged.connect(self._show_preview)
        self.filter_edit = search_box("Filter: name, folder, type or *.pdf", "Filter documents")
        self.filter_edit.setToolTip(
            "Show only the documents whose name or folder holds this text, whose type is it "
            "(pdf, markdown), or whose name matches a pattern (*.md); separate several with "
            "commas. The run still gets every document."
        )
        self.filter_edit.textChanged.connect(self._filter)
        self.loading_bar = LoadingBar(self.cancel_loads)

        self.empty_hint = QLabel("Drop files or folders here, or use Add files…")
        self.empty_hint.setObjectName("hint")
        self.empty_hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.skipped = SkippedList()
        self.totals = plain_label()
        self.totals.setObjectName("muted")
        self.totals.setWordWrap(True)
        self.totals.setAccessibleName("Document totals")
        self.hint = QLabel()
        self.hint.setObjectName("hint")
        self.hint.setWordWrap(True)
        self.preview = QPlainTextEdit()
        self.preview.setReadOnly(True)
        self.preview.setFont(monospace_font())
        self.preview.setPlaceholderText("Select a document to preview its text.")
        self.preview.setAccessibleName("Document preview")
        # A part near the end can still come to the top: scrolling may pass the last line.
        self.preview.setCenterOnScroll(True)
        self.parts = PartPicker()
        self.parts.chosen.connect(self.go_to_offset)
        self.passage_label = plain_label()
        self.passage_label.setObjectName("muted")
        self.passage_label.setAccessibleName("Passage shown")
        self.passage_label.setWordWrap(True)
        self.passage_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.passage_label.hide()
        self._preview_from = 0
        """Where in the document's text the preview's text starts."""
        self.passage: tuple[int, int, int] | None = None
        """The passage shown: (row, start, end) in that row's document's text."""

        tools = QHBoxLayout()
        tools.setContentsMargins(0, 0, 0, 0)
        tools.addWidget(title)
        tools.addStretch(1)
        for button in (self.add_files_button, self.add_folder_button):
            tools.addWidget(button)
        edit = QHBoxLayout()
        edit.setContentsMargins(0, 0, 0, 0)
        for button in (self.remove_button, self.up_button, self.down_button):
            edit.addWidget(button)
        edit.addStretch(1)
        edit.addWidget(self.clear_button)
        top = QWidget()
        top_layout = QVBoxLayout(top)
        top_layout.setContentsMargins(0, 0, 0, 0)
        top_layout.addLayout(tools)
        top_layout.addWidget(self.filter_edit)
        top_layout.addWidget(self.view, 1)
        top_layout.addWidget(self.loading_bar)
        top_layout.addWidget(self.empty_hint)
        top_layout.addWidget(self.skipped)
        top_layout.addLayout(edit)
        top_layout.addWidget(self.totals)
        top_layout.addWidget(self.hint)
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.setObjectName("documentsSplitter")
        self.splitter.addWidget(top)
        below = QWidget()
        below_layout = QVBoxLayout(below)
        below_layout.setContentsMargins(0, 0, 0, 0)
        below_layout.setSpacing(2)
        below_layout.addWidget(self.parts)
        below_layout.addWidget(self.passage_label)
        below_layout.addWidget(self.preview, 1)
        self.splitter.addWidget(below)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.splitter)

        QShortcut(QKeySequence.StandardKey.Delete, self.view, self.remove_selected)
        QShortcut(QKeySequence("Alt+Up"), self.view, lambda: self.move_selected(-1))
        QShortcut(QKeySequence("Alt+Down"), self.view, lambda: self.move_selected(1))
        self.model.rowsInserted.connect(self._update_totals)
        self.model.rowsRemoved.connect(self._update_totals)
        self.model.modelReset.connect(self._update_totals)
        self.model.dataChanged.connect(self._update_totals)
        for moved in (self.model.rowsRemoved, self.model.rowsMoved, self.model.modelReset):
            moved.connect(self.clear_passage)  # its row is another document's now
        self._update_totals()

    def set_run_model(self, model: str, direct_call_tokens: int) -> None:
        """Count the next documents' tokens for `model`, and hint at a direct call up to
        `direct_call_tokens` (the engine's `auto` threshold for that model)."""
        self.token_model = model
        if direct_call_tokens != self.direct_call_tokens:
            self.direct_call_tokens = direct_call_tokens
            self._update_totals()

    @property
    def loading(self) -> bool:
        """True while a load is in progress."""
        return bool(self._loads)

    def choose_files(self) -> None:
        """Ask for files, the supported formats offered first (the dialog opens where the last
        pick was), and add them."""
        paths = file_dialogs.open_file_names(
            self, "Add documents", [file_dialogs.documents_filter(), file_dialogs.ALL_FILES]
        )
        if paths:
            self.add_paths([Path(p) for p in paths])

    def choose_folder(self) -> None:
        """Ask for a folder (the dialog opens where the last pick was) and add its documents."""
        folder = file_dialogs.existing_folder(self, "Add a folder of documents")
        if folder:
            self.add_paths([Path(folder)])

    def add_paths(self, paths: Sequence[Path]) -> asyncio.Future[LoadResult] | None:
        """Load `paths` in a worker thread and add the results; returns the pending load."""
        if not paths or self.read_only:
            return None
        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rlm-load")
        loop = asyncio.get_event_loop()
        watch = LoadWatch(loop, self._progressed)
        future = loop.run_in_executor(
            self._executor, load_in_thread, list(paths), self.token_model, self.ocr, watch
        )
        self._loads[future] = watch
        self.loading_changed.emit(True)
        self.loading_bar.start(len(paths))
        self._update_totals()
        roots = list(paths)
        future.add_done_callback(lambda done: self._loaded(done, roots))
        return future

    def _progressed(self, progress: LoadProgress) -> None:
        self.loading_bar.show_progress(progress)
        self.load_progressed.emit(progress)

    def cancel_loads(self) -> None:
        """Stop every load in progress and add nothing of them: the list stays as it was. The
        loader thread stops at its next file (one being read by the bounded reader is read to
        the end of its time bound first); the window no longer waits for it."""
        if not self._loads:
            return
        for future, watch in self._loads.items():
            watch.cancel()
            future.cancel()
        self._loads.clear()
        self.loading_bar.hide()
        self.loading_changed.emit(False)
        self._update_totals()

    def _loaded(self, future: asyncio.Future[LoadResult], roots: list[Path]) -> None:
        if self._loads.pop(future, None) is None or future.cancelled():
            return  # cancelled: nothing of it is added
        if not self._loads:
            self.loading_bar.hide()
        error = future.exception()
        if isinstance(error, LoadCancelled):
            self.loading_changed.emit(self.loading)
            return
        if error is not None:
            self.model.add([], [(Path("?"), f"could not load: {error}")])
        elif self._live_entries is not None:
            # A saved session is in view (reopened at start while the workspace's documents
            # were loading): they belong to the live list, added when it comes back.
            self._held.append((future.result(), roots))
        else:
            self._add_result(future.result(), roots)
        self.loading_changed.emit(self.loading)
        self._update_totals()
        self.changed.emit()

    def _add_result(self, result: LoadResult, roots: list[Path]) -> None:
        documents = [self._named_as_kept(d) for d in result.documents]
        for document in result.documents:
            self._names_kept.pop(str(document.path), None)
        self.model.add(documents, [(e.path, e.message) for e in result.errors])
        self.skipped.forget(d.path for d in result.documents)
        self.skipped.add(result.skipped, roots)

    def _named_as_kept(self, document: Document) -> Document:
        """The document under the name its file had when the workspace was left (a document
        found inside it keeps its part under that name)."""
        name = self._names_kept.get(str(document.path))
        if not name:
            return document
        return dataclasses.replace(
            document, name=f"{name}/{document.part}" if document.part else name
        )

    def remove_selected(self) -> None:
        """Remove the selected rows."""
        if self.read_only:
            return
        rows = [self._row_of(index) for index in self.view.selectionModel().selectedRows()]
        self.model.remove_rows(rows)
        if not self.model.entries:
            self.skipped.clear()
            self._update_totals()
        self.changed.emit()

    def clear(self) -> None:
        """Remove every document, failure and skipped file."""
        if self.read_only:
            return
        self.model.replace([])
        self.skipped.clear()
        self.show_coverage(None)
        self.clear_passage()
        self.preview.clear()
        self._update_totals()
        self.changed.emit()

    def move_selected(self, delta: int) -> None:
        """Move the current document up or down in the run's order (shown in that order again
        if the list was sorted by another column)."""
        current = self.current_row()
        if self.read_only or current is None:
            return
        if self.view.header().sortIndicatorSection() != NUMBER:
            self.view.sortByColumn(NUMBER, Qt.SortOrder.AscendingOrder)
        row = self.model.move(current, delta)
        self.select_row(row)
        self.changed.emit()

    def _row_of(self, index: QModelIndex | QPersistentModelIndex) -> int:
        """The model's row behind a row of the (sorted, filtered) view."""
        return self.proxy.mapToSource(self.proxy.index(index.row(), 0)).row()

    def current_row(self) -> int | None:
        """The model's row (`model.entries`) of the current document, None when there is none."""
        current = self.view.currentIndex()
        return self._row_of(current) if current.isValid() else None

    def select_row(self, row: int) -> None:
        """Make the model's `row` current (the filter is cleared if it hides that row)."""
        index = self.proxy.mapFromSource(self.model.index(row, 0))
        if not index.isValid() and self.proxy.text:
            self.filter_edit.clear()
            index = self.proxy.mapFromSource(self.model.index(row, 0))
        self.view.setCurrentIndex(index)

    def _filter(self, text: str) -> None:
        self.proxy.set_filter(text)
        self._update_totals()

    def _show_preview(self, current: QModelIndex, _previous: QModelIndex) -> None:
        row = self._row_of(current) if current.isValid() else None
        if self.passage is not None and self.passage[0] != row:
            self.clear_passage()
        self.preview.setExtraSelections([])
        entry = self.model.entries[row] if row is not None else None
        document = entry.document if entry is not None else None
        self.parts.show_parts(document.sections if document is not None else ())
        if entry is None:
            self.preview.clear()
            return
        if document is None:
            self.preview.setPlainText(f"{entry.path}\n\n{entry.error}")
            return
        if self.passage is None:
            self._render(entry, 0)
        else:  # shown again (the coverage changed): still at the passage
            self._go_to_passage(entry)

    def _render(self, entry: Entry, start: int) -> None:
        """Preview up to `PREVIEW_CHARS` of the document from `start`, what was read shaded."""
        assert entry.document is not None
        text = entry.document.text
        window = text[start : start + PREVIEW_CHARS]
        shown = window.replace("\f", "\n")  # a page break shows as one, same length
        if start or len(text) > PREVIEW_CHARS:
            last = start + len(window)
            shown += f"\n\n… showing characters {start:,} to {last:,} of {len(text):,}"
        self._preview_from = start
        self.preview.setPlainText(shown)
        read = () if entry.coverage is None else entry.coverage.read
        within = [(max(a, start) - start, b - start) for a, b in read if b > start]
        shade_read(self.preview, window, within)
        if self.passage is not None and self.passage[0] == self.current_row():
            _row, first, last = self.passage
            mark_passage(self.preview, window, first - start, last - start)

    def show_passage(
        self,
        document_index: int,
        document: str,
        start: int,
        end: int,
        caption: str,
        approximate: bool = False,
    ) -> bool:
        """Preview `[start, end)` of the run's document number `document_index` (named
        `document`), scrolled to and shaded, under `caption` (how it was found; `approximate`
        shows it in the warning colour). False when that document is not listed any more."""
        row = self.model.row_of_run_document(document_index, document)
        if row is None:
            self.clear_passage()
            self._caption(f"{caption} (that document is no longer in the list)", True)
            return False
        self.select_row(row)
        self.passage = (row, start, end)
        self._caption(caption, approximate)
        self._go_to_passage(self.model.entries[row])
        return True

    def _go_to_passage(self, entry: Entry) -> None:
        """Preview the passage's document from where it holds the passage, shaded, scrolled to
        it, with its part chosen in the picker."""
        assert self.passage is not None
        start = self.passage[1]
        self._render(entry, self._preview_from if self._holds(start) else start)
        self.parts.show_part_at(start)
        self.go_to_offset(start)

    def clear_passage(self, *_args: object) -> None:
        """Shade no passage, and take its label away."""
        self.passage = None
        self.passage_label.hide()

    def _caption(self, text: str, warn: bool) -> None:
        self.passage_label.setText(text)
        self.passage_label.setToolTip(text)
        self.passage_label.setObjectName("warningLabel" if warn else "muted")
        repolish(self.passage_label)
        self.passage_label.show()

    def _holds(self, offset: int) -> bool:
        """Whether the preview's text holds `offset` of the document's."""
        return self._preview_from <= offset < self._preview_from + PREVIEW_CHARS

    def go_to_offset(self, offset: int) -> None:
        """Scroll the preview to `offset` in the current document's text, with that line at the
        top (a part past what the preview holds is previewed from its start)."""
        current = self.current_row()
        if current is None or self.model.entries[current].document is None:
            return
        entry = self.model.entries[current]
        if not self._holds(offset):
            self._render(entry, offset)
        cursor = self.preview.textCursor()
        cursor.setPosition(self._preview_position(entry, offset))
        self.preview.setTextCursor(cursor)
        self.preview.verticalScrollBar().setValue(self._lines_before(cursor.block()))

    def _lines_before(self, target: QTextBlock) -> int:
        """How many lines, as wrapped now, come before `target`: the scroll bar's value that puts
        it at the top (it counts lines). Laying the blocks out here is what makes the count
        right: a plain text view lays out wrapped lines only as they come into view."""
        layout = self.preview.document().documentLayout()
        lines, block = 0, self.preview.document().begin()
        while block.isValid() and block.blockNumber() < target.blockNumber():
            layout.blockBoundingRect(block)
            lines += max(1, block.lineCount())
            block = block.next()
        return lines

    def _preview_position(self, entry: Entry, offset: int) -> int:
        """`offset` in the document as a position in the preview (Qt counts UTF-16 units)."""
        assert entry.document is not None
        before = entry.document.text[self._preview_from : offset]
        return qt_positions(before)(len(before))

    def show_coverage(self, coverage: Coverage | None) -> None:
        """Show what of each document reached a model in the run shown (None: hide it)."""
        self.model.set_coverage(() if coverage is None else coverage.documents)
        hidden = coverage is None or not coverage.documents
        # Uniform rows take their height from the first name alone; the Read bar needs more.
        # Qt neither lays the rows out again for it nor repaints the columns whose width stayed
        # (the "#" one kept the old rows' numbers): both are asked for.
        self.view.setUniformRowHeights(hidden)
        self.view.setColumnHidden(READ, hidden)
        self._fit_columns(self.width())
        self.view.doItemsLayout()
        self.view.viewport().update()
        current = self.view.currentIndex()
        self._show_preview(current, current)

    def _update_totals(self, *_args: object) -> None:
        totals = DocumentTotals.of(self.model.listed())
        self.empty_hint.setVisible(not self.model.entries and not self.loading)
        errors = sum(1 for e in self.model.entries if not e.ok)
        skipped = 0 if self.read_only else len(self.skipped)
        if not totals.documents and not errors and not skipped:
            self.totals.setText("No documents yet.")
            self.hint.setText("")
            return
        described = totals.describe(skipped=skipped, failed=errors)
        if self.proxy.text:
            rows = len(self.model.entries)
            described = f"{self.proxy.rowCount():,} of {rows:,} shown · {described}"
        self.totals.setText(described)
        if totals.documents and totals.tokens <= self.direct_call_tokens:
            self.hint.setText(
                "Short enough for one direct call: in auto mode the model "
                "reads it whole, without a REPL."
            )
        else:
            self.hint.setText("")

    def documents(self) -> list[Document]:
        """The loaded documents a run can take, in order."""
        return self.model.documents()

    def live_entries(self) -> list[Entry]:
        """The live list's entries, whether or not a saved session's documents are in view."""
        return self._live_entries if self._live_entries is not None else self.model.entries

    def kept(self) -> list[tuple[str, str]]:
        """The live documents' files as (path, name), in order, each file once (an mbox gives
        many documents): what the next start loads again."""
        entries = self.live_entries()
        files: dict[str, str] = {}
        for entry in entries:
            if isinstance(entry.document, Document):
                files.setdefault(str(entry.path), entry.document.file_name)
        return list(files.items())

    def reload(self, kept: Sequence[tuple[str, str]]) -> asyncio.Future[LoadResult] | None:
        """Load again the documents a session was left with (`kept`), under the names they had;
        one that is no longer there is listed as such."""
        present = [(Path(path), name) for path, name in kept if Path(path).is_file()]
        gone = [Path(path) for path, _ in kept if not Path(path).is_file()]
        if gone:
            self.model.add([], [(path, GONE) for path in gone])
            self._update_totals()
        self._names_kept.update((str(path), name) for path, name in present)
        return self.add_paths([path for path, _ in present])

    def set_read_only(self, read_only: bool) -> None:
        """Lock the pane while a saved session is being reviewed."""
        self.read_only = read_only
        for button in (
            self.add_files_button,
            self.add_folder_button,
            self.remove_button,
            self.up_button,
            self.down_button,
            self.clear_button,
        ):
            button.setEnabled(not read_only)
        self.setAcceptDrops(not read_only)
        self.skipped.suppress(read_only)
        self._update_totals()

    def show_saved(self, rows: list[dict[str, Any]], texts: list[tuple[str, str]]) -> None:
        """Show a saved session's documents read-only (the live list is kept aside)."""
        if self._live_entries is None:
            self._live_entries = self.model.entries
        saved = [
            SavedDocument.from_row(row, text)
            for row, (_name, text) in zip(rows, texts, strict=False)
        ]
        self.model.replace([Entry(path=Path(d.path), name=d.name, document=d) for d in saved])
        self.clear_passage()
        self.preview.clear()
        self.set_read_only(True)

    def restore_live(self) -> None:
        """Back to the documents of the next live run."""
        if self._live_entries is not None:
            self.model.replace(self._live_entries)
            self._live_entries = None
        held, self._held = self._held, []
        for result, roots in held:
            self._add_result(result, roots)
        if held:
            self._update_totals()
            self.changed.emit()
        self.clear_passage()
        self.preview.clear()
        self.set_read_only(False)

    def resizeEvent(self, event: QResizeEvent) -> None:
        """On a narrow pane keep the number, name (its folder after it), tokens and share read;
        the rest as the width allows, the folder taking at most a quarter."""
        super().resizeEvent(event)
        self._fit_columns(event.size().width())  # the view's own width may not be laid out yet

    def _fit_columns(self, width: int) -> None:
        """The columns `width` has room for; on a narrow pane the share read takes the tokens'
        place once a run has been checked, so the name keeps its room."""
        narrow = width < NARROW_PX
        for column in (COLUMNS.index(name) for name in OPTIONAL_COLUMNS):
            self.view.setColumnHidden(column, narrow)
        self.view.setColumnHidden(CHARS, width < MEDIUM_PX)
        self.view.setColumnHidden(TOKENS, narrow and not self.view.isColumnHidden(READ))
        if not narrow:
            wanted = self.view.sizeHintForColumn(FOLDER)
            self.view.setColumnWidth(FOLDER, max(48, min(wanted, width // 4)))

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        """Accept files and folders dragged from a file manager, and outline the list so the
        user sees where they will land."""
        if event.mimeData().hasUrls() and not self.read_only:
            event.acceptProposedAction()
            self._show_drop_target(True)

    def dragLeaveEvent(self, event: QDragLeaveEvent) -> None:
        """The drag went elsewhere: no outline."""
        super().dragLeaveEvent(event)
        self._show_drop_target(False)

    def _show_drop_target(self, shown: bool) -> None:
        self.view.setProperty("dropTarget", shown)
        repolish(self.view)

    def dropEvent(self, event: QDropEvent) -> None:
        """Add the dropped files and folders."""
        self._show_drop_target(False)
        paths = [Path(url.toLocalFile()) for url in event.mimeData().urls() if url.isLocalFile()]
        if paths:
            event.acceptProposedAction()
            self.add_paths(paths)

    def shutdown(self) -> None:
        """Stop the loader thread (a load in progress stops at its next file)."""
        for future, watch in list(self._loads.items()):
            watch.cancel()
            with contextlib.suppress(Exception):
                future.cancel()
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
            self._executor = None
