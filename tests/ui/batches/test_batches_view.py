"""The Batches view, offscreen, over batches a real batch run stored: reached from the File
menu, it lists every batch (when, the questions file, rows done of the total, cost), shows the
chosen one's rows with the app's status words and where each ran, says why a row has no
answer or no session, shows a model's markup as text, and opens a row's run in the window with
Enter or a double-click."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QTextDocument
from pytestqt.qtbot import QtBot

from rlm_desktop import formatting as fmt
from rlm_desktop import paths
from rlm_desktop.store import Store
from rlm_desktop.ui.appearance.theme import tone_color
from rlm_desktop.ui.batches.dialog import BatchesDialog
from rlm_desktop.ui.batches.rows_table import ANSWER, COLUMNS, PLACE, STATUS
from rlm_desktop.ui.window.main_window import MainWindow
from tests.qt_fixtures import qloop as qloop
from tests.qt_fixtures import window as window
from tests.ui.batches.stored import ANSWER as MODEL_ANSWER
from tests.ui.batches.stored import NODE, StoredBatches, make_batches


@pytest.fixture
def stored(tmp_path: Path) -> StoredBatches:
    """The batches of `stored.py`, made before the qasync loop (ask for it first)."""
    return make_batches(tmp_path / "batches")


@pytest.fixture
def store() -> Iterator[Store]:
    store = Store(paths.database_path())
    yield store
    store.close()


def open_view(qtbot: QtBot, store: Store) -> BatchesDialog:
    view = BatchesDialog(store)
    qtbot.addWidget(view)
    view.resize(1024, 640)
    view.show()
    qtbot.waitExposed(view)
    return view


def cells(view: BatchesDialog) -> dict[str, dict[str, str]]:
    """Each row's cells by column name, by row id."""
    table = view.table
    return {
        table.item(row, 0).text(): {
            name: table.item(row, column).text() for column, name in enumerate(COLUMNS)
        }
        for row in range(table.rowCount())
    }


def list_line(view: BatchesDialog, batch_id: str) -> str:
    row = next(i for i, e in enumerate(view.batches.entries) if e.record.id == batch_id)
    return view.batches.list.item(row).text()


def choose(view: BatchesDialog, batch_id: str) -> None:
    """Pick the batch in the list, as a click does."""
    row = next(i for i, e in enumerate(view.batches.entries) if e.record.id == batch_id)
    view.batches.list.setCurrentRow(row)


def test_every_batch_is_listed_with_its_rows(
    stored: StoredBatches, qtbot: QtBot, store: Store
) -> None:
    view = open_view(qtbot, store)
    assert {e.record.id for e in view.batches.entries} == {
        stored.ran,
        stored.half,
        stored.unrun,
        stored.gone,
    }
    ran_line = list_line(view, stored.ran).splitlines()
    assert ran_line[0].endswith("· complete")
    assert ran_line[1] == "questions.csv"
    assert ran_line[2].startswith("2 of 2 rows · 1 failed · $")
    assert list_line(view, stored.half).splitlines()[2].startswith("1 of 2 rows · $")
    assert list_line(view, stored.unrun).splitlines()[2] == "0 of 2 rows · $0"

    choose(view, stored.ran)
    assert view.shown is not None
    assert view.shown.record.id == stored.ran
    assert view.heading.text().startswith("questions.csv · complete · 2 of 2 rows")
    rows = cells(view)
    assert list(rows) == ["acme", "junk"]
    acme, junk = rows["acme"], rows["junk"]
    assert acme["question"] == "Who signed the contract?"
    assert acme["status"] == "completed"
    assert acme["answer"] == MODEL_ANSWER  # the model's markup, as text
    assert acme["cost"].startswith("$")
    assert acme["findings"] == "1"  # a short input read in RLM mode
    assert acme["ran on"] == fmt.THIS_MACHINE
    assert junk["status"] == "error"
    assert junk["answer"].startswith("no document could be loaded: ")
    assert junk["ran on"] == ""  # it never ran
    answer_tip = view.table.item(0, ANSWER).toolTip()
    assert "&lt;b&gt;Acme Corp&lt;/b&gt;" in answer_tip
    assert "<b>" not in answer_tip
    junk_status = view.table.item(1, STATUS)
    assert junk_status.foreground().color() == QColor(tone_color("error"))
    assert not junk_status.icon().isNull()
    assert f"Answer:\n{MODEL_ANSWER}" in view.details.toPlainText()  # the chosen row, whole
    view.table.selectRow(1)
    assert "Why it has no answer:\nno document could be loaded" in view.details.toPlainText()

    choose(view, stored.half)
    rows = cells(view)
    assert rows["acme"]["ran on"] == f"{NODE} · retried"
    assert "died" in view.table.item(0, PLACE).toolTip()
    assert rows["junk"]["status"] == "not run yet"
    assert (
        rows["junk"]["answer"] == f"not run yet: rlm-desktop batch --resume {stored.half} runs it"
    )
    assert rows["junk"]["cost"] == rows["junk"]["ran on"] == ""

    choose(view, stored.unrun)  # nothing done: every row says why it has no answer
    assert [row["status"] for row in cells(view).values()] == ["not run yet", "not run yet"]
    assert view.note.text() == ""

    choose(view, stored.gone)  # nothing done and its questions gone: the page says so
    assert view.table.rowCount() == 0
    assert view.note.text() == (
        "2 rows without a result not listed: its questions file is not there any more"
    )
    assert not view.open_button.isEnabled()
    view.close()


def test_a_store_without_batches_says_how_to_make_one(qtbot: QtBot, store: Store) -> None:
    view = open_view(qtbot, store)
    assert view.batches.entries == []
    assert view.batches.empty.isVisibleTo(view)
    shown = QTextDocument()
    shown.setHtml(view.batches.empty.text())
    assert "rlm-desktop batch --questions FILE" in shown.toPlainText()
    assert view.heading.text() == "No batches stored yet."
    assert view.table.rowCount() == 0
    assert not view.open_button.isEnabled()
    view.close()


def test_a_row_opens_its_run_in_the_window(
    stored: StoredBatches, window: MainWindow, qtbot: QtBot
) -> None:
    file_menu = window.menuBar().actions()[0].menu()
    assert window.batches_action in file_menu.actions()
    window.batches_action.trigger()
    view = window.findChild(BatchesDialog)
    assert view is not None
    qtbot.waitExposed(view)
    choose(view, stored.ran)

    rect = view.table.visualItemRect(view.table.item(1, 0))  # junk: no session, and why
    qtbot.mouseClick(view.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.mouseDClick(view.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert view.message.text().startswith("Row junk has no session: error before it ran: ")
    assert window.workspace.reviewing is None

    view.table.setFocus()
    view.table.selectRow(0)
    qtbot.keyClick(view.table, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: window.workspace.reviewing is not None)
    assert fmt.short_session_id(stored.acme_session) in (window.workspace.reviewing or "")
    assert view.message.text() == ""
    view.close()
