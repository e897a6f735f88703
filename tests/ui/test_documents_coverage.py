"""The documents pane shows what of each document the run in view read: a "Read" bar per
document and shading over the read ranges in the preview."""

from __future__ import annotations

from PySide6.QtCore import QRect
from PySide6.QtGui import QColor, QFontMetrics, QImage, QPainter, QTextCursor
from PySide6.QtWidgets import QStyleOptionViewItem
from pytestqt.qtbot import QtBot

from rlm_desktop.ui.appearance.theme import colors
from rlm_desktop.ui.documents.model import READ, SHARE_ROLE
from rlm_desktop.ui.documents.pane import DocumentsPane
from rlm_desktop.ui.window.main_window import MainWindow
from tests.review.health_runs import NOTE
from tests.scripted_rlm import repl
from tests.scripted_server import ScriptedServer
from tests.ui.reopened import open_checked
from tests.ui.test_health_panel import FINISH, record

MIDDLE = (300, 700)
"""The slice of the note the run reads (longer than coverage's 64-character minimum)."""


def _shaded(pane: DocumentsPane) -> list[tuple[int, int]]:
    ranges = []
    for selection in pane.preview.extraSelections():
        cursor: QTextCursor = selection.cursor
        ranges.append((cursor.selectionStart(), cursor.selectionEnd()))
    return ranges


def _read_cell(pane: DocumentsPane) -> tuple[object, object]:
    index = pane.model.index(0, READ)
    return pane.model.data(index), pane.model.data(index, SHARE_ROLE)


def test_a_reopened_session_shows_the_share_read_and_shades_it(
    window: MainWindow, qtbot: QtBot, scripted_server: ScriptedServer
) -> None:
    start, end = MIDDLE
    code = f"print(context[{start}:{end}])"
    session_id = record(qtbot, window, scripted_server, [repl(code), FINISH])
    pane = window.workspace.documents
    assert pane.view.isColumnHidden(READ)  # nothing checked yet: no column

    report = open_checked(window, qtbot, session_id)
    share = report.coverage.documents[0].share
    assert share == (end - start) / len(NOTE.text)
    assert not pane.view.isColumnHidden(READ)
    assert _read_cell(pane) == (f"{share:.0%}", share)
    pane.select_row(0)
    assert pane.preview.toPlainText() == NOTE.text
    assert _shaded(pane) == [MIDDLE]

    window.leave_review()
    assert pane.view.isColumnHidden(READ)
    assert _shaded(pane) == []


def test_the_read_share_is_written_above_its_bar_not_through_it(
    window: MainWindow, qtbot: QtBot, scripted_server: ScriptedServer
) -> None:
    """Painted in the size it asks for (a row as low as its text), the share stays clear of the
    bar: it used to be struck through by it."""
    start, end = MIDDLE
    code = f"print(context[{start}:{end}])"
    open_checked(window, qtbot, record(qtbot, window, scripted_server, [repl(code), FINISH]))
    pane = window.workspace.documents
    index = pane.model.index(0, READ)
    delegate = pane.view.itemDelegateForColumn(READ)
    option = QStyleOptionViewItem()
    option.initFrom(pane.view)
    size = delegate.sizeHint(option, index)
    shown = pane.proxy.mapFromSource(index)
    assert pane.view.visualRect(shown).height() >= size.height()  # the view gives it that room
    option.rect = QRect(0, 0, max(size.width(), 60), size.height())
    image = QImage(option.rect.size(), QImage.Format.Format_RGB32)
    image.fill(QColor("white"))
    painter = QPainter(image)
    delegate.paint(painter, option, index)
    painter.end()
    accent = QColor(colors().accent)
    pixels = [
        (x, y, QColor(image.pixel(x, y)))
        for y in range(image.height())
        for x in range(image.width())
    ]
    bar_rows = {y for x, y, colour in pixels if colour == accent}
    ink_rows = {y for x, y, colour in pixels if colour.lightness() < 110 and colour != accent}
    assert bar_rows, "the bar is drawn"
    assert ink_rows, "the share is written"
    assert max(ink_rows) < min(bar_rows)  # the text is above the bar...
    written = QFontMetrics(option.font).tightBoundingRect(str(index.data())).height()
    assert max(ink_rows) - min(ink_rows) + 1 >= written - 1  # ...all of it, none under it
