"""The documents pane loads in a thread, lists sizes and tokens, shows errors inline."""

from __future__ import annotations

from pathlib import Path

from pytestqt.qtbot import QtBot

from rlm_desktop.paths import resource
from rlm_desktop.ui.documents.model import CHARS, COLUMNS, NAME, TYPE
from rlm_desktop.ui.documents.pane import DocumentsPane
from tests.documents.makers import make_pdf


def _pane(qtbot: QtBot, width: int = 420) -> DocumentsPane:
    pane = DocumentsPane()
    qtbot.addWidget(pane)
    pane.resize(width, 600)
    pane.show()
    return pane


def test_loads_files_and_shows_errors_inline(qtbot: QtBot, qloop: object, tmp_path: Path) -> None:
    good = tmp_path / "notes.md"
    good.write_text("# Notes\n\nThe launch is on Tuesday.\n", encoding="utf-8")
    bad = tmp_path / "blob.bin"
    bad.write_bytes(b"\x00\x01\x02\x03binary")
    pane = _pane(qtbot)
    pane.add_paths([good, bad])
    assert pane.loading
    qtbot.waitUntil(lambda: not pane.loading, timeout=10_000)
    model = pane.model
    assert model.rowCount() == 2
    assert [e.name for e in model.entries] == ["notes.md", "blob.bin"]
    assert model.data(model.index(0, TYPE)) == "markdown"
    assert model.data(model.index(0, CHARS)) == f"{len(good.read_text()):,}"
    error_text = model.data(model.index(1, TYPE))
    assert "not a text document" in error_text
    assert "1 document" in pane.totals.text()
    assert "1 failed" in pane.totals.text()
    assert "direct call" in pane.hint.text()
    assert len(pane.documents()) == 1
    pane.select_row(0)
    assert "launch is on Tuesday" in pane.preview.toPlainText()
    pane.select_row(1)
    assert "not a text document" in pane.preview.toPlainText()
    pane.shutdown()


def test_folder_reorder_and_remove(qtbot: QtBot, qloop: object) -> None:
    pane = _pane(qtbot)
    pane.add_paths([resource("samples", "memos")])
    qtbot.waitUntil(lambda: not pane.loading, timeout=20_000)
    names = [e.name for e in pane.model.entries]
    assert len(names) == 7
    pane.select_row(1)
    pane.move_selected(-1)
    assert [e.name for e in pane.model.entries][:2] == [names[1], names[0]]
    pane.view.selectionModel().clearSelection()
    pane.select_row(0)
    pane.remove_selected()
    assert [e.name for e in pane.model.entries] == [names[0], *names[2:]]
    pane.shutdown()


def test_adding_the_same_file_twice_keeps_one_row(
    qtbot: QtBot, qloop: object, tmp_path: Path
) -> None:
    doc = tmp_path / "a.txt"
    doc.write_text("one", encoding="utf-8")
    pane = _pane(qtbot)
    pane.add_paths([doc])
    qtbot.waitUntil(lambda: not pane.loading, timeout=10_000)
    doc.write_text("one two three", encoding="utf-8")
    pane.add_paths([doc])
    qtbot.waitUntil(lambda: not pane.loading, timeout=10_000)
    assert pane.model.rowCount() == 1
    assert pane.documents()[0].chars == len("one two three")
    pane.shutdown()


def test_files_dropped_from_a_file_manager_are_added(
    qtbot: QtBot, qloop: object, tmp_path: Path
) -> None:
    from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
    from PySide6.QtGui import QDragEnterEvent, QDragLeaveEvent, QDropEvent

    doc = tmp_path / "dropped.txt"
    doc.write_text("dropped text", encoding="utf-8")
    pane = _pane(qtbot)
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(doc))])
    enter = QDragEnterEvent(
        pane.rect().center(),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    pane.dragEnterEvent(enter)
    assert enter.isAccepted()
    assert pane.view.property("dropTarget") is True  # outlined while files are over it
    pane.dragLeaveEvent(QDragLeaveEvent())
    assert pane.view.property("dropTarget") is False
    pane.dragEnterEvent(enter)
    drop = QDropEvent(
        QPointF(pane.rect().center()),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    pane.dropEvent(drop)
    assert pane.view.property("dropTarget") is False
    qtbot.waitUntil(lambda: not pane.loading, timeout=10_000)
    assert [d.name for d in pane.documents()] == ["dropped.txt"]
    pane.set_read_only(True)
    refused = QDragEnterEvent(
        pane.rect().center(),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    refused.ignore()
    pane.dragEnterEvent(refused)
    assert not refused.isAccepted()
    pane.shutdown()


def _inbox(folder: Path) -> Path:
    """A folder with one document and four files the loader leaves out, each for its reason."""
    folder.mkdir()
    (folder / ".gitignore").write_text("*.log\n", encoding="utf-8")
    (folder / "notes.md").write_text("# Notes\n\nThe launch is on Tuesday.\n", encoding="utf-8")
    (folder / "debug.log").write_text("noise\n", encoding="utf-8")
    (folder / "blob.bin").write_bytes(b"\x00\x01\x02\x03binary")
    make_pdf(folder / "scan.pdf", [[]], scanned=[0])
    return folder


def _load(qtbot: QtBot, pane: DocumentsPane, *paths: Path) -> None:
    pane.add_paths(list(paths))
    qtbot.waitUntil(lambda: not pane.loading, timeout=60_000)


def test_files_skipped_in_a_folder_are_listed_with_their_reasons(
    qtbot: QtBot, qloop: object, tmp_path: Path
) -> None:
    pane = _pane(qtbot)
    assert pane.skipped.isHidden()
    _load(qtbot, pane, _inbox(tmp_path / "inbox"))
    assert [d.name for d in pane.documents()] == ["inbox/notes.md"]
    assert pane.skipped.isVisible()
    assert pane.skipped.toggle.text() == "4 skipped ▸"
    assert not pane.skipped.list.isVisible()
    assert "4 skipped" in pane.totals.text()
    pane.skipped.toggle.click()
    assert pane.skipped.toggle.text() == "4 skipped ▾"
    assert pane.skipped.list.isVisible()
    reasons = dict(pane.skipped.entries())
    assert reasons["inbox/scan.pdf"].startswith("no text recognised: OCR found no text")
    assert reasons["inbox/debug.log"] == "ignored by .gitignore"
    assert "not a text document" in reasons["inbox/blob.bin"]
    assert reasons["inbox/.gitignore"] == "hidden file"
    texts = [pane.skipped.list.item(row).text() for row in range(pane.skipped.list.count())]
    assert "inbox/debug.log — ignored by .gitignore" in texts
    pane.shutdown()


def test_skips_accumulate_across_loads_and_go_with_the_list(
    qtbot: QtBot, qloop: object, tmp_path: Path
) -> None:
    inbox = _inbox(tmp_path / "inbox")
    other = tmp_path / "other"
    other.mkdir()
    (other / "kept.txt").write_text("kept\n", encoding="utf-8")
    (other / "photo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    pane = _pane(qtbot)
    _load(qtbot, pane, inbox)
    _load(qtbot, pane, other)
    assert pane.skipped.toggle.text() == "5 skipped ▸"
    _load(qtbot, pane, inbox)  # the same folder again: its skips are not listed twice
    assert len(pane.skipped) == 5
    assert dict(pane.skipped.entries())["other/photo.png"].startswith(
        "damaged or unsupported image"
    )

    pane.view.selectAll()
    pane.remove_selected()
    assert pane.model.rowCount() == 0
    assert pane.skipped.isHidden()
    assert pane.totals.text() == "No documents yet."

    _load(qtbot, pane, other)
    assert len(pane.skipped) == 1
    pane.clear()
    assert (pane.model.rowCount(), len(pane.skipped)) == (0, 0)
    assert pane.skipped.isHidden()
    pane.shutdown()


def test_a_skipped_file_that_later_loads_leaves_the_list(
    qtbot: QtBot, qloop: object, tmp_path: Path
) -> None:
    inbox = _inbox(tmp_path / "inbox")
    pane = _pane(qtbot)
    _load(qtbot, pane, inbox)
    _load(qtbot, pane, inbox / "debug.log")  # named directly, an ignored file loads
    assert [d.name for d in pane.documents()] == ["inbox/notes.md", "debug.log"]
    assert "inbox/debug.log" not in dict(pane.skipped.entries())
    assert len(pane.skipped) == 3
    pane.shutdown()


def test_reviewing_a_saved_session_hides_the_live_skips_until_it_ends(
    qtbot: QtBot, qloop: object, tmp_path: Path
) -> None:
    pane = _pane(qtbot)
    _load(qtbot, pane, _inbox(tmp_path / "inbox"))
    pane.show_saved([{"name": "old.txt", "path": "/old.txt", "chars": 3}], [("old.txt", "old")])
    assert pane.skipped.isHidden()
    assert "skipped" not in pane.totals.text()
    pane.restore_live()
    assert pane.skipped.isVisible()
    assert "4 skipped" in pane.totals.text()
    pane.shutdown()


def test_a_partly_scanned_pdf_loads_with_a_warning_on_its_row(
    qtbot: QtBot, qloop: object, tmp_path: Path
) -> None:
    from PySide6.QtCore import Qt

    pdf = make_pdf(tmp_path / "mixed.pdf", [["Typed cover"], []], scanned=[1])
    pane = _pane(qtbot)
    _load(qtbot, pane, pdf)
    index = pane.model.index(0, NAME)
    assert pane.model.data(index, Qt.ItemDataRole.DecorationRole) is not None
    tip = pane.model.data(index, Qt.ItemDataRole.ToolTipRole)
    assert "no text recognised by OCR on page 2" in tip
    pane.shutdown()


def test_a_narrow_pane_keeps_the_names_readable(qtbot: QtBot) -> None:
    pane = _pane(qtbot)
    type_column, chars_column = COLUMNS.index("Type"), COLUMNS.index("Chars")
    assert not pane.view.isColumnHidden(type_column)
    pane.resize(260, 600)
    qtbot.waitUntil(lambda: pane.view.isColumnHidden(type_column), timeout=2_000)
    assert pane.view.isColumnHidden(chars_column)
    assert not pane.view.isColumnHidden(COLUMNS.index("Tokens"))
    pane.resize(480, 600)
    qtbot.waitUntil(lambda: not pane.view.isColumnHidden(type_column), timeout=2_000)
