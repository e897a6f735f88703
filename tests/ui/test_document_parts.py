"""The documents preview goes to a sheet, slide or page (#28): a picker lists a document's parts
and choosing one scrolls the preview to it, also past what the preview holds at first; a saved
session's documents keep their parts."""

from __future__ import annotations

import json
from pathlib import Path

from pytestqt.qtbot import QtBot

from rlm_desktop.documents.ocr import OCR_OFF
from rlm_desktop.paths import database_path
from rlm_desktop.store import Store
from rlm_desktop.ui.documents.model import TYPE
from rlm_desktop.ui.documents.pane import PREVIEW_CHARS, DocumentsPane
from rlm_desktop.ui.shared.preferences import Preferences
from rlm_desktop.ui.window.main_window import MainWindow
from tests.cli import run_cli
from tests.documents.test_spreadsheets import _workbook
from tests.scripted_rlm import repl, scripted
from tests.scripted_server import ScriptedServer
from tests.test_cli_continue import _run
from tests.ui.test_documents_pane import _pane


def _top_line(pane: DocumentsPane) -> str:
    return pane.preview.cursorForPosition(pane.preview.viewport().rect().topLeft()).block().text()


def _line_shown(pane: DocumentsPane) -> str:
    """The line the preview's cursor is on, once it is in view."""
    preview = pane.preview
    assert preview.viewport().rect().contains(preview.cursorRect())
    return preview.textCursor().block().text()


def test_choosing_a_sheet_scrolls_the_preview_to_it(
    qtbot: QtBot, qloop: object, tmp_path: Path
) -> None:
    long_notes = tmp_path / "notes.md"
    long_notes.write_text("no parts here\n" * 50, encoding="utf-8")
    pane = _pane(qtbot)
    pane.add_paths([_workbook(tmp_path / "figures.xlsx"), long_notes])
    qtbot.waitUntil(lambda: not pane.loading, timeout=20_000)

    pane.select_row(0)
    assert pane.parts.isVisible()
    names = [pane.parts.itemText(i) for i in range(pane.parts.count())]
    assert names == ["Sheet Summary", "Sheet Q3 detail", "Sheet Archive"]
    try:
        pane.parts.activated.emit(2)
        assert _line_shown(pane) == "## Sheet: Archive (A1:A1, hidden)"

        pane.select_row(1)
        assert not pane.parts.isVisible()
    finally:
        pane.shutdown()


def test_a_part_past_the_preview_is_previewed_from_its_start(
    qtbot: QtBot, qloop: object, tmp_path: Path
) -> None:
    import openpyxl

    book = openpyxl.Workbook()
    big = book.active
    assert big is not None
    big.title = "Big"
    for row in range(PREVIEW_CHARS // 20):
        big.append([f"row {row:07d}", "filler text"])
    book.create_sheet("Tail")["A1"] = "the last sheet's only cell"
    path = tmp_path / "big.xlsx"
    book.save(path)
    pane = _pane(qtbot)
    pane.add_paths([path])
    qtbot.waitUntil(lambda: not pane.loading, timeout=60_000)
    pane.select_row(0)
    try:
        assert "the last sheet's only cell" not in pane.preview.toPlainText()

        pane.parts.activated.emit(1)

        assert _line_shown(pane) == "## Sheet: Tail (A1:A1)"
        assert "the last sheet's only cell" in pane.preview.toPlainText()
        pane.parts.activated.emit(0)
        assert _top_line(pane) == "## Sheet: Big (A1:B10000)"
    finally:
        pane.shutdown()


def test_every_message_and_attachment_of_a_mail_file_is_listed_and_kept_once(
    qtbot: QtBot, qloop: object, tmp_path: Path
) -> None:
    from tests.documents.mail_makers import make_eml, write_eml, write_mbox

    inbox = write_mbox(
        tmp_path / "inbox.mbox",
        [
            make_eml(subject="First", body="one"),
            make_eml(subject="Second", body="two", attachments=[("figures.csv", b"a,b\n1,2\n")]),
        ],
    )
    note = write_eml(tmp_path / "note.eml", make_eml(subject="Note", body="a note"))
    pane = _pane(qtbot)
    try:
        pane.add_paths([inbox, note])
        qtbot.waitUntil(lambda: not pane.loading, timeout=20_000)
        listed = [entry.name for entry in pane.model.entries]
        assert listed == [
            "inbox.mbox/0001 First",
            "inbox.mbox/0002 Second",
            "inbox.mbox/0002 Second/figures.csv",
            "note.eml",
        ]
        assert pane.kept() == [(str(inbox), "inbox.mbox"), (str(note), "note.eml")]

        pane.clear()
        pane.reload([(str(inbox), "mail/inbox.mbox"), (str(note), "note.eml")])
        qtbot.waitUntil(lambda: not pane.loading, timeout=20_000)
        assert [entry.name for entry in pane.model.entries] == [
            "mail/inbox.mbox/0001 First",
            "mail/inbox.mbox/0002 Second",
            "mail/inbox.mbox/0002 Second/figures.csv",
            "note.eml",
        ]
        assert len(pane.skipped) == 0
    finally:
        pane.shutdown()


def test_a_saved_sessions_documents_keep_their_type_and_parts(
    qtbot: QtBot,
    qloop: object,
    scripted_server: ScriptedServer,
    tmp_path: Path,
    isolated_home: Path,
) -> None:
    scripted_server.respond_with(scripted({"Which sheets?": [repl("FINAL('three')")]}))
    book = _workbook(tmp_path / "figures.xlsx")
    done = run_cli(*_run(scripted_server, "Which sheets?", "--doc", str(book)), home=isolated_home)
    assert done.returncode == 0, done.stderr
    session_id = json.loads(done.stdout)["session_id"]
    store = Store(database_path())
    try:
        head = store.session(session_id)["session"]
        texts = store.document_texts(session_id)
    finally:
        store.close()
    pane = _pane(qtbot)
    try:
        pane.show_saved(head["documents"], texts)
        pane.select_row(0)
        assert pane.model.data(pane.model.index(0, TYPE)) == "spreadsheet"
        names = [pane.parts.itemText(i) for i in range(pane.parts.count())]
        assert names == ["Sheet Summary", "Sheet Q3 detail", "Sheet Archive"]
        pane.parts.activated.emit(1)
        assert _line_shown(pane) == "## Sheet: Q3 detail (A1:B1)"
    finally:
        pane.shutdown()


def test_turning_ocr_off_in_settings_reaches_the_next_load_and_the_next_start(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    from tests.documents.ocr_makers import make_image

    image = make_image(tmp_path / "receipt.png", ["Receipt 1182 paid in full"])
    documents = window.workspace.documents
    assert documents.ocr
    dialog = window.show_settings("defaults")
    dialog.defaults.ocr.setChecked(False)
    dialog.accept()

    assert not documents.ocr
    assert not Preferences().ocr  # saved for the next start
    documents.add_paths([image])
    qtbot.waitUntil(lambda: not documents.loading, timeout=30_000)
    [entry] = documents.model.entries
    assert entry.error == OCR_OFF


def test_in_a_narrow_pane_the_chosen_slide_starts_the_preview(qtbot: QtBot, qloop: object) -> None:
    from rlm_desktop.paths import resource

    pane = _pane(qtbot)
    pane.resize(296, 850)  # the slides' lines wrap
    try:
        pane.add_paths([resource("samples", "kestrel", "heron-steering.pptx")])
        qtbot.waitUntil(lambda: not pane.loading, timeout=20_000)
        pane.select_row(0)
        pane.parts.activated.emit(2)
        assert _top_line(pane) == "## Slide 3: Pilot"
    finally:
        pane.shutdown()
