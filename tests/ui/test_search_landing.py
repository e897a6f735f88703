"""A session-search hit is shown, and opened, at its word: the snippet marks it, and the window
opens with the call that holds it chosen, the tab that shows its text in front, the word
selected and in sight, over a real run with emoji, CJK and combining accents before each word
(`tests/store/search_places.py`)."""

from __future__ import annotations

import asyncio
import html
import re

import pytest
from PySide6.QtCore import QPoint
from PySide6.QtGui import QFont, QFontMetrics
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QTextEdit, QWidget
from pytestqt.qtbot import QtBot

from rlm_desktop.store.search_snippet import LEAD
from rlm_desktop.ui.sessions.dialog import MATCH, SessionsDialog
from rlm_desktop.ui.sessions.snippet import HTML_ROLE, first_match_shift, marked_document
from rlm_desktop.ui.window.detail_tabs import ANSWER, CALL, CONSOLE
from rlm_desktop.ui.window.main_window import MainWindow
from tests.review.health_runs import recorded
from tests.scripted_server import ScriptedServer
from tests.store.search_places import DOCUMENT, QUESTION, WORDS, responder

TABS = {
    "query": CALL,
    "prompt": CALL,
    "response": CALL,
    "answer": ANSWER,
    "reply": CONSOLE,
    "code": CONSOLE,
    "stdout": CONSOLE,
    "stderr": CONSOLE,
    "error": CONSOLE,
}
"""The tab that shows each field."""


def _record(qtbot: QtBot, window: MainWindow, server: ScriptedServer) -> str:
    run = recorded(
        window.starter.store(), server, responder(), documents=(DOCUMENT,), query=QUESTION
    )
    task = asyncio.ensure_future(run)
    qtbot.waitUntil(task.done, timeout=60_000)
    return task.result()


def _selected(view: QWidget) -> str:
    if isinstance(view, QLabel):
        return view.selectedText()
    assert isinstance(view, QPlainTextEdit | QTextEdit)
    return view.textCursor().selectedText()


def _in_sight(window: MainWindow, view: QWidget) -> bool:
    """The view is on screen in its tab, and (a text box) its selection inside its viewport."""
    if not view.isVisible():
        return False
    console = window.workspace.console.area.viewport()
    if console.isAncestorOf(view):
        top = view.mapTo(console, QPoint(0, 0)).y()
        if not (-view.height() < top < console.height()):
            return False
    if isinstance(view, QPlainTextEdit | QTextEdit):
        return view.viewport().rect().intersects(view.cursorRect())
    return True


@pytest.mark.parametrize("typed", list(WORDS))
def test_a_hit_opens_at_its_word(
    window: MainWindow, qtbot: QtBot, scripted_server: ScriptedServer, typed: str
) -> None:
    field, word = WORDS[typed]
    session_id = _record(qtbot, window, scripted_server)
    dialog: SessionsDialog = window.show_sessions()
    dialog.search.setText(typed)
    dialog.reload()
    assert dialog.selected_id() == session_id
    (found,) = window.starter.store().search_sessions(typed)
    hit = found["hits"][0]
    assert hit["field"] == field
    preview = dialog.table.item(0, MATCH).data(HTML_ROLE)
    assert re.findall("<b>(.*?)</b>", preview)[0] == html.escape(word)
    dialog.open_selected()

    ws = window.workspace
    assert ws.detail_tabs.currentIndex() == TABS[field], typed
    views = [
        view
        for view in ws.findChildren(QWidget)
        if isinstance(view, QLabel | QPlainTextEdit | QTextEdit) and _selected(view) == word
    ]
    assert views, f"{word!r} is selected nowhere"
    qtbot.waitUntil(lambda: any(_in_sight(window, view) for view in views), timeout=5_000)
    node = ws.tree_panel.selected()
    assert node is not None
    assert node.call_id == (hit["call_id"] or ws.model.tree.root.call_id)


@pytest.mark.parametrize("width", [160, 420])
def test_the_preview_shows_its_match_however_long_the_words_before_it(
    window: MainWindow, qtbot: QtBot, scripted_server: ScriptedServer, width: int
) -> None:
    """The stderr's words follow a word of 400 letters: the snippet starts near them, and the
    Match column slides its text left to show the first one whole."""
    _record(qtbot, window, scripted_server)
    dialog = window.show_sessions()
    dialog.search.setText("lemurs")
    dialog.reload()
    item = dialog.table.item(0, MATCH)
    assert item.text().index("[lemur]") <= LEAD + 2
    document = marked_document(item.data(HTML_ROLE), dialog.table.font())
    shift = first_match_shift(document, width)
    bold = QFont(dialog.table.font())
    bold.setBold(True)
    plain = QFontMetrics(dialog.table.font())
    before = plain.horizontalAdvance(item.text()[: item.text().index("[lemur]")])
    left = before - shift
    assert left >= 0
    assert left + QFontMetrics(bold).horizontalAdvance("lemur") <= width
