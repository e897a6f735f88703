"""The session browser: every saved run, searchable; open one read-only, delete, or export it.

A search lists the sessions that hold the text, each with where it was found and a snippet.
An export's format is the file type chosen in the save dialog. Evaluation trials are left out
unless asked for (the analyst's own questions first), and the list says how many it left out.
The question takes the room: the other columns fit their contents, up to a cap, and a column
with the same value in every row gives way to a line that names the value.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QFont, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QDialog,
    QHBoxLayout,
    QHeaderView,
    QMessageBox,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from rlm_desktop import formatting as fmt
from rlm_desktop.engine.sandbox.level import shown_level
from rlm_desktop.store.threads import conversation_links, threaded
from rlm_desktop.store.trials import list_sessions, without_trials
from rlm_desktop.ui.sessions.export_target import ExportTarget, export_dialog
from rlm_desktop.ui.sessions.snippet import HTML_ROLE, MarkedTextDelegate, snippet_html
from rlm_desktop.ui.shared.widgets import (
    dialog_buttons,
    plain_label,
    resize_within_screen,
    search_box,
    when_settled,
)

if TYPE_CHECKING:
    from rlm_desktop.review.health.finding import Finding
    from rlm_desktop.store import Store

COLUMNS = (
    "Date", "Question", "Documents", "Models", "Status", "Cost", "Time", "Sandbox", "Found in",
    "Match", "Health",
)  # fmt: skip
SANDBOX, FOUND, MATCH, HEALTH = 7, 8, 9, 10
SEARCH_ONLY = (FOUND, MATCH)
LIST_ONLY = (2, 3, 6, SANDBOX)
"""Columns shown only for a search, and only without one (to leave the snippet room)."""
SEARCH_QUESTION_WIDTH = 260
QUESTION = 1
WIDEST = {0: 160, 2: 110, 3: 220, 4: 130, 5: 110, 6: 90, SANDBOX: 180, FOUND: 240, HEALTH: 90}
"""The most a column fitted to its contents takes, in pixels (its tooltips hold the rest)."""
TRIAL_MARK = "Evaluation · "
"""How an evaluation trial's question starts in the list (its row is in italics)."""
GIVE_WAY = (2, 3, SANDBOX)
"""Columns that give way when every row has the same value in them (named under the list)."""
ID_ROLE = Qt.ItemDataRole.UserRole + 1
CALL_ROLE = Qt.ItemDataRole.UserRole + 3
HEALTH_ROLE = Qt.ItemDataRole.UserRole + 4
"""How many findings a run's health check made (-1 while not known)."""
HIT_ROLE = Qt.ItemDataRole.UserRole + 5
"""A search's best hit in the row's session (None without a search)."""
RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
SEARCH_SETTLE_MS = 200

logger = logging.getLogger(__name__)


def _models(row: dict[str, Any]) -> str:
    model, sub = row.get("model") or "", row.get("sub_model") or ""
    shown = fmt.model_name(model)
    return shown if not sub or sub == model else f"{shown} / {fmt.model_name(sub)}"


class SessionsDialog(QDialog):
    """Lists sessions from the store; `open_session(id, call_id)` asks the window to show one
    (at the call where a search found its text, or ""), then `hit_opened(hit)` to show the
    search's best hit in it at its word (`landing.land`); `replay_session(id)` plays one back."""

    open_session = Signal(str, str)
    hit_opened = Signal(object)
    replay_session = Signal(str)
    compare_sessions = Signal(str, str)
    """Two sessions to compare: the one listed lower (the older, in the listing) first."""

    def __init__(self, store: Store, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.store = store
        self.setWindowTitle("Sessions")
        self.setAccessibleName("Sessions")
        self.search = search_box(
            "Search questions, answers, prompts, responses, code, output and errors",
            "Search sessions",
        )
        self._search_timer = when_settled(
            self.search.textChanged, SEARCH_SETTLE_MS, self.reload, self
        )
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.setAccessibleName("Saved sessions")
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.table.setAlternatingRowColors(True)
        self.table.setItemDelegateForColumn(MATCH, MarkedTextDelegate(self.table))
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(QUESTION, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(MATCH, QHeaderView.ResizeMode.Stretch)
        for visual, column in enumerate(SEARCH_ONLY, start=2):
            header.moveSection(header.visualIndex(column), visual)
        self.table.itemDoubleClicked.connect(lambda _item: self.open_selected())
        self.count = plain_label()
        self.count.setObjectName("muted")
        self.count.setAccessibleName("Sessions listed")
        self.show_trials = QCheckBox("Show evaluation runs")
        self.show_trials.setToolTip(
            "List the trials that evaluations ran (rlm-desktop eval, the Evaluation page) beside"
            " your own questions"
        )
        self.show_trials.toggled.connect(lambda _on: self.reload())
        self.hidden_trials = 0
        """Evaluation trials the list leaves out."""
        self.message = plain_label()
        self.message.setObjectName("muted")
        self.message.setWordWrap(True)

        self.open_button = QPushButton("Open")
        self.open_button.setObjectName("primary")
        self.open_button.setDefault(True)
        self.open_button.clicked.connect(self.open_selected)
        self.replay_button = QPushButton("Replay")
        self.replay_button.setToolTip("Open the session and play it back from the start")
        self.replay_button.clicked.connect(self.replay_selected)
        self.compare_button = QPushButton("Compare")
        self.compare_button.setToolTip("Select two sessions (Ctrl+click) to compare them")
        self.compare_button.clicked.connect(lambda: self.compare_selected())
        self.delete_button = QPushButton("Delete…")
        self.delete_button.clicked.connect(lambda: self.delete_selected())
        self.include_content = QCheckBox("include prompts and code in OTLP traces")
        self.with_documents = QCheckBox("with the documents' text")
        self.with_documents.setToolTip(
            "A JSON Lines export carries the documents' text, so whoever opens it sees coverage,"
            " verified sources and the preview; without it only the documents' names leave"
        )
        self.export_button = QPushButton("Export…")
        self.export_button.clicked.connect(lambda: self.export_selected())
        self._closed = False
        self._exporting: asyncio.Future[Path | None] | None = None
        self._add_health()
        QShortcut(QKeySequence.StandardKey.Delete, self.table, lambda: self.delete_selected())

        buttons = dialog_buttons(
            self,
            [self.open_button, self.replay_button, self.compare_button, self.delete_button],
            [self.export_button, self.include_content, self.with_documents],
        )
        layout = QVBoxLayout(self)
        filters = QHBoxLayout()
        filters.addWidget(self.only_findings)
        filters.addWidget(self.show_trials)
        filters.addStretch(1)
        layout.addWidget(self.search)
        layout.addLayout(filters)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.count)
        layout.addWidget(self.message)
        layout.addLayout(buttons)
        resize_within_screen(self, 1100, 560)
        self.reload()

    def done(self, result: int) -> None:
        """Close; a pending search is dropped, and so is a health check in flight."""
        self._search_timer.stop()
        self._health_timer.stop()
        self._health_pending.clear()
        self._closed = True
        super().done(result)

    def reload(self) -> None:
        """List the sessions that match the search box (a pending debounced search is dropped).

        With a search, each session shows where the text was found and a snippet of it.
        """
        self._search_timer.stop()
        text = self.search.text().strip()
        trials = self.show_trials.isChecked()
        if text:
            found = without_trials(self.store, self.store.search_sessions(text), trials=trials)
        else:
            found = list_sessions(self.store, trials=trials)
        rows, self.hidden_trials = found.rows, found.hidden_trials
        for column in SEARCH_ONLY:
            self.table.setColumnHidden(column, not text)
        for column in LIST_ONLY:
            self.table.setColumnHidden(column, bool(text))
        header = self.table.horizontalHeader()
        if text:  # the snippet gets the room; the question keeps a readable width
            header.setSectionResizeMode(1, QHeaderView.ResizeMode.Interactive)
            header.resizeSection(1, SEARCH_QUESTION_WIDTH)
        else:
            header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.table.setRowCount(len(rows))
        links = {} if text else conversation_links(self.store, [row["id"] for row in rows])
        italic = QFont(self.table.font())
        italic.setItalic(True)
        for r, (row, place) in enumerate(threaded(rows, links)):
            cost = fmt.cost(row.get("cost_usd"), bool(row.get("unpriced")))
            trial = row["id"] in found.trials
            damaged = row.get("damaged")
            values = (
                fmt.when(row.get("started_at")),
                ("↳ " if place else "")
                + (TRIAL_MARK if trial else "")
                + fmt.one_line(row.get("query"), 140),
                str(row.get("documents", 0)),
                _models(row),
                "damaged" if damaged else fmt.status_text(row.get("status") or ""),
                cost,
                fmt.seconds(row.get("wall_s")),
                fmt.sandbox_name(shown_level(row.get("sandbox")), noun=False) or "—",
                *_found(row),
                *(("—",) if damaged else ()),  # its health: a damaged session is not read
            )
            for c, value in enumerate(values):
                item = QTableWidgetItem(value)
                item.setData(ID_ROLE, row["id"])
                item.setData(CALL_ROLE, _best_call(row))
                item.setData(HIT_ROLE, (row.get("hits") or [None])[0])
                if c == QUESTION:
                    thread = f"Follow-up {place} in its conversation: " if place else ""
                    about = "Evaluation trial: " if trial else ""
                    item.setToolTip(about + thread + (row.get("query") or ""))
                if trial:
                    item.setFont(italic)
                if c == 3:  # a long model name is cut to the column's width
                    item.setToolTip(
                        " / ".join(filter(None, (row.get("model"), row.get("sub_model"))))
                    )
                if c == SANDBOX and value != "—":  # and so is a long level
                    item.setToolTip(value)
                if c in (2, 5, 6, HEALTH):
                    item.setTextAlignment(RIGHT)
                if c in SEARCH_ONLY and row.get("hits"):
                    item.setToolTip(_hits_tip(row))
                if c == MATCH and row.get("hits"):
                    item.setData(HTML_ROLE, snippet_html(row["hits"][0]))
                if damaged:  # shown, never selected: no action can reach it
                    item.setFlags(Qt.ItemFlag.ItemIsEnabled)
                    item.setToolTip(f"Damaged: {damaged}")
                self.table.setItem(r, c, item)
        self._list_health()
        common = self._size_columns(bool(text))
        first = next((r for r in range(len(rows)) if self._sound(r)), None)
        if first is not None:  # a damaged session's row cannot be selected
            self.table.selectRow(first)
        noun = "session" if len(rows) == 1 else "sessions"
        told = [f"{len(rows)} {noun}" + (f" matching “{text}”" if text else "")]
        if self.hidden_trials:
            told.append(f"{fmt.plural(self.hidden_trials, 'evaluation run')} hidden")
        elif found.trials:
            told.append(f"{fmt.plural(len(found.trials), 'evaluation run')} among them")
        if common:
            told.append("every one: " + ", ".join(common))
        self.count.setText(" · ".join(told))
        for button in (
            self.open_button,
            self.replay_button,
            self.delete_button,
            self.export_button,
        ):
            button.setEnabled(bool(rows))

    def _size_columns(self, searching: bool) -> list[str]:
        """Fit the columns other than the question (and a search's snippet) to their contents,
        at most `WIDEST`; hide a `GIVE_WAY` column whose value is the same in every row of two
        or more. The hidden columns' values, as "Sandbox landlock" and the like."""
        table = self.table
        common: list[str] = []
        for column in GIVE_WAY:
            if searching:
                continue
            values = {
                item.text() if (item := table.item(r, column)) is not None else ""
                for r in range(table.rowCount())
            }
            same = table.rowCount() >= 2 and len(values) == 1
            table.setColumnHidden(column, same)
            if same:
                common.append(f"{COLUMNS[column]} {values.pop()}")
        header = table.horizontalHeader()
        for column, widest in WIDEST.items():
            if not table.isColumnHidden(column):
                table.resizeColumnToContents(column)
                header.resizeSection(column, min(header.sectionSize(column), widest))
        return common

    def _add_health(self) -> None:
        """The health column's tally (one session at a time, checked in a worker thread: a run
        whose model code sent megabytes takes seconds; remembered) and the "runs with findings"
        filter."""
        from rlm_desktop.review.health.tally import HealthTally

        self.health = HealthTally(self.store)
        self._health_pending: list[int] = []
        self._tallying: asyncio.Task[None] | None = None
        self._health_timer = QTimer(self)
        self._health_timer.setInterval(0)
        self._health_timer.timeout.connect(self._tally_next)
        self.only_findings = QCheckBox("Runs with findings")
        self.only_findings.setToolTip("Only runs whose health check found something (see Health)")
        self.only_findings.toggled.connect(lambda _on: self._filter_health())

    def _sound(self, r: int) -> bool:
        """True unless row `r` lists a damaged session (its cells cannot be selected)."""
        item = self.table.item(r, 0)
        return item is not None and bool(item.flags() & Qt.ItemFlag.ItemIsSelectable)

    def _list_health(self) -> None:
        """Fill the health column from what is known; tally the rest in the background."""
        self._health_pending = []
        for r in range(self.table.rowCount()):
            item = self.table.item(r, 0)
            if item is None or not self._sound(r):
                continue  # a damaged session is not read
            findings = self.health.known(item.data(ID_ROLE))
            if findings is None:
                self._health_pending.append(r)
            self._show_health(r, item.data(ID_ROLE), findings)
        if self._health_pending and self._tallying is None:
            self._health_timer.start()

    def _tally_next(self) -> None:
        self._health_timer.stop()
        if not self._health_pending:
            return
        item = self.table.item(self._health_pending.pop(0), 0)
        if item is None:
            self._health_timer.start()
            return
        self._tallying = asyncio.ensure_future(self._tally(str(item.data(ID_ROLE))))

    async def _tally(self, session_id: str) -> None:
        """Check one session beside the window's loop, show its findings, then go on."""
        problem = ""
        try:
            findings = await asyncio.to_thread(self.health.findings, session_id)
        except Exception as error:  # one damaged session must not stop the rest of the list
            findings, problem = None, f"Cannot check this run: {error}"
        finally:
            self._tallying = None
        if self._closed:
            return
        r = self._row_of(session_id)
        if r is not None:  # the list may have changed meanwhile
            self._show_health(r, session_id, findings, problem=problem)
        if self._health_pending:
            self._health_timer.start()

    def _show_health(
        self, r: int, session_id: str, findings: tuple[Finding, ...] | None, problem: str = ""
    ) -> None:
        if findings is None:
            text, tip = ("?", problem) if problem else ("…", "Checking this run's health…")
        else:
            text = str(len(findings)) if findings else "—"
            tip = "\n".join(f"{f.severity} {f.kind}: {f.message}" for f in findings)
        item = QTableWidgetItem(text)
        item.setData(ID_ROLE, session_id)
        item.setData(HEALTH_ROLE, -1 if findings is None else len(findings))
        item.setTextAlignment(RIGHT)
        item.setToolTip(tip or "No findings: none of the known failure modes showed")
        self.table.setItem(r, HEALTH, item)
        self._filter_health(r)

    def _filter_health(self, row: int | None = None) -> None:
        """Hide the runs checked and found clean while "runs with findings" is on."""
        only = self.only_findings.isChecked()
        for r in range(self.table.rowCount()) if row is None else (row,):
            item = self.table.item(r, HEALTH)
            self.table.setRowHidden(r, only and item is not None and item.data(HEALTH_ROLE) == 0)

    def selected_id(self) -> str | None:
        """The id of the selected session."""
        items = self.table.selectedItems()
        return str(items[0].data(ID_ROLE)) if items else None

    def select_id(self, session_id: str) -> bool:
        """Select the row of `session_id`."""
        row = self._row_of(session_id)
        if row is not None:
            self.table.selectRow(row)
        return row is not None

    def _row_of(self, session_id: str) -> int | None:
        """The row listing `session_id`, if one does."""
        for row in range(self.table.rowCount()):
            item = self.table.item(row, 0)
            if item is not None and item.data(ID_ROLE) == session_id:
                return row
        return None

    def open_selected(self) -> None:
        """Open the selected session in the window, read-only."""
        items = self.table.selectedItems()
        if items:
            self.open_session.emit(str(items[0].data(ID_ROLE)), str(items[0].data(CALL_ROLE)))
            hit = items[0].data(HIT_ROLE)
            if hit:
                self.hit_opened.emit(hit)
            self.accept()

    def selected_ids(self) -> list[str]:
        """The ids of the selected sessions, newest first (as listed)."""
        rows = sorted({index.row() for index in self.table.selectionModel().selectedRows()})
        items = [self.table.item(row, 0) for row in rows]
        return [str(item.data(ID_ROLE)) for item in items if item is not None]

    def compare_selected(self) -> tuple[str, str] | None:
        """Compare the two selected sessions (the older on the left); the list stays open
        under the comparison, for the next pair."""
        chosen = self.selected_ids()
        if len(chosen) != 2:
            self.message.setText("Select exactly two sessions (Ctrl+click) to compare them.")
            return None
        newer, older = chosen
        self.compare_sessions.emit(older, newer)
        return older, newer

    def replay_selected(self) -> None:
        """Open the selected session and play it back from the start."""
        session_id = self.selected_id()
        if session_id is not None:
            self.replay_session.emit(session_id)
            self.accept()

    def delete_selected(self, confirm: bool = True) -> str | None:
        """Delete the selected session (asking first unless `confirm` is False)."""
        session_id = self.selected_id()
        if session_id is None:
            return None
        if confirm:
            answer = QMessageBox.question(
                self,
                "Delete session",
                "Delete this session and everything recorded with it? This cannot be undone.",
            )
            if answer != QMessageBox.StandardButton.Yes:
                return None
        from rlm_desktop import paths
        from rlm_desktop.engine.conversation import forget
        from rlm_desktop.store import StoreError

        try:
            forget(paths.scratch_root(), self.store.delete(session_id))
        except StoreError as error:
            self.message.setText(str(error))
            return None
        self.message.setText(f"Deleted session {fmt.short_session_id(session_id)}.")
        self.reload()
        return session_id

    def export_selected(
        self, target: ExportTarget | Path | None = None
    ) -> asyncio.Future[Path | None] | None:
        """Export the selected session to `target`, or where the save dialog says when None
        (its file type is the format); a bare path takes its format from its extension.

        The export is made and written beside the window's loop (a big session's takes
        seconds); the future gives the file written, None when it could not be (said in the
        dialog). None when nothing was started: no selection, the save dialog cancelled, or an
        export already under way.
        """
        session_id = self.selected_id()
        if session_id is None:
            return None
        if self._exporting is not None:
            self.message.setText("An export is under way: wait for it to finish.")
            return None
        if target is None:
            dialog = export_dialog(self, session_id)
            if dialog.exec() != QDialog.DialogCode.Accepted:
                return None
            target = ExportTarget.chosen(dialog)
        elif isinstance(target, Path):
            target = ExportTarget.for_path(target)
        self.message.setText(f"Exporting to {target.path}…")
        self._exporting = asyncio.ensure_future(self._export(session_id, target))
        return self._exporting

    async def _export(self, session_id: str, target: ExportTarget) -> Path | None:
        from rlm_desktop.exports import export_bytes

        include_content = self.include_content.isChecked()
        with_documents = self.with_documents.isChecked() and target.format == "jsonl"
        left_out = self.with_documents.isChecked() and not with_documents
        try:
            data = await asyncio.to_thread(
                export_bytes,
                self.store,
                session_id,
                target.format,
                include_content,
                with_documents=with_documents,
            )
            await asyncio.to_thread(target.path.write_bytes, data)
        except OSError as exc:
            told = f"Could not write {target.path}: {exc.strerror}. Choose another folder."
            written = None
        except Exception as error:  # a damaged (imported) session: one line, the dialog lives on
            logger.exception("exporting session %s", session_id)
            told, written = f"Could not export this session: {error}", None
        else:
            told, written = f"Exported to {target.path}.", target.path
            if left_out:
                told += " Without the documents' text: only a JSON Lines export carries it."
        finally:
            self._exporting = None
        if not self._closed:
            self.message.setText(told)
        return written


def _found(row: dict[str, Any]) -> tuple[str, str]:
    """The "Found in" and "Match" cells of a search result (empty for a plain listing)."""
    hits = row.get("hits") or []
    if not hits:
        return "", ""
    others = row.get("matches", 1) - 1
    place = hits[0]["place"] + (f"  (+{others:,} more)" if others > 0 else "")
    return place, hits[0]["snippet"]


def _best_call(row: dict[str, Any]) -> str:
    hits = row.get("hits") or []
    return str(hits[0].get("call_id") or "") if hits else ""


def _hits_tip(row: dict[str, Any]) -> str:
    lines = [f"{hit['place']}: {hit['snippet']}" for hit in row["hits"]]
    if row.get("more"):
        lines.append(f"… and {fmt.plural(row['more'], 'more place')}")
    return "\n".join(lines)
