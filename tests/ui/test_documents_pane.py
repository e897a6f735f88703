"""The documents pane loads in a thread, lists sizes and tokens, shows errors inline."""

from __future__ import annotations

from pathlib import Path

from pytestqt.qtbot import QtBot

from rlm_desktop.paths import resource
from rlm_desktop.ui.documents.pane import DocumentsPane


def _pane(qtbot: QtBot) -> DocumentsPane:
    pane = DocumentsPane()
    qtbot.addWidget(pane)
    pane.resize(420, 600)
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
    assert model.data(model.index(0, 1)) == "markdown"
    assert model.data(model.index(0, 3)) == f"{len(good.read_text()):,}"
    error_text = model.data(model.index(1, 1))
    assert "not a text document" in error_text
    assert "1 document" in pane.totals.text()
    assert "1 failed" in pane.totals.text()
    assert "direct call" in pane.hint.text()
    assert len(pane.documents()) == 1
    pane.view.setCurrentIndex(model.index(0, 0))
    assert "launch is on Tuesday" in pane.preview.toPlainText()
    pane.view.setCurrentIndex(model.index(1, 0))
    assert "not a text document" in pane.preview.toPlainText()
    pane.shutdown()


def test_folder_reorder_and_remove(qtbot: QtBot, qloop: object) -> None:
    pane = _pane(qtbot)
    pane.add_paths([resource("samples", "memos")])
    qtbot.waitUntil(lambda: not pane.loading, timeout=20_000)
    names = [e.name for e in pane.model.entries]
    assert len(names) == 7
    pane.view.setCurrentIndex(pane.model.index(1, 0))
    pane.move_selected(-1)
    assert [e.name for e in pane.model.entries][:2] == [names[1], names[0]]
    pane.view.selectionModel().clearSelection()
    pane.view.setCurrentIndex(pane.model.index(0, 0))
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
    from PySide6.QtGui import QDragEnterEvent, QDropEvent

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
    drop = QDropEvent(
        QPointF(pane.rect().center()),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    pane.dropEvent(drop)
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
