"""Answers that show their sources, in the window: numbered markers in the answer, a Sources
list with each source's verification state, the passages read to answer, and the documents
preview opened on a source's passage, shaded and labelled. Real runs: the engine over the
scripted server, recorded in the window's own store, then opened (or run live) in the window."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import QObject, QPoint, Qt, QUrl, Slot
from PySide6.QtGui import QColor, QDesktopServices, QTextCharFormat, QTextCursor, QTextDocument
from PySide6.QtWidgets import QTreeWidgetItem
from pytestqt.qtbot import QtBot

from rlm_desktop.engine import ContextDocument
from rlm_desktop.ui.appearance.theme import colors
from rlm_desktop.ui.documents.pane import DocumentsPane
from rlm_desktop.ui.documents.passage import PASSAGE_PROPERTY
from rlm_desktop.ui.run.answer_panel import AnswerPanel
from rlm_desktop.ui.run.source_markers import fragments
from rlm_desktop.ui.window.detail_tabs import CONSOLE
from rlm_desktop.ui.window.main_window import MainWindow
from tests.documents.test_spreadsheets import _workbook
from tests.review.health_runs import recorded
from tests.review.recorded_runs import HandClock
from tests.scripted_rlm import repl, scripted
from tests.scripted_server import ScriptedServer
from tests.ui.reopened import open_checked
from tests.ui.test_end_to_end import prepare
from tests.ui.test_follow_up import run_and_wait

CLOSING = "The meeting closed at 17:40 after a vote on the Kestrel site."
MINUTES = ContextDocument(
    name="minutes.txt",
    text=(
        "Board minutes, 4 March.\n"
        "The board approved the Heron budget of 2.4 million euros for the coming year.\n"
        + "".join(f"Item {i}: routine business, noted without discussion.\n" for i in range(400))
        + CLOSING
        + "\n"
    ),
)
LATE = "deliveries to the Kestrel site will be late by six weeks"
LETTER = ContextDocument(name="letter.txt", text=f"Dear Board,\nWe regret that {LATE}.\n")
MADE_UP = "the chairman resigned in protest over the Heron plan"
QUERY = "What did the board decide about the Heron budget?"
ANSWER = (
    f"The board approved **2.4 million euros**. The letter warns that “{LATE}”, "
    f'and the minutes add "{MADE_UP}".'
)
READING = repl("print(llm_query('Find the budget decision in: ' + context[0][:300]))")


def record(qtbot: QtBot, window: MainWindow, server: ScriptedServer, answer: str = ANSWER) -> str:
    """A real run over the minutes and the letter whose answer gives the meeting's closing line
    as its source, quotes the letter word for word, quotes a line no document holds, and
    follows a sub-call that read the minutes' opening."""
    finish = repl(f"FINAL({answer!r}, sources=[{CLOSING!r}])")
    responder = scripted(root=[READING, finish], sub="Approved: 2.4 million euros.")
    task = asyncio.ensure_future(
        recorded(
            window.starter.store(), server, responder, documents=[MINUTES, LETTER], query=QUERY
        )
    )
    qtbot.waitUntil(task.done, timeout=60_000)
    return task.result()


def markers(document: QTextDocument) -> list[tuple[str, str, int, bool]]:
    """Every `source:` link in the answer: (text, href, position, superscript)."""
    found = []
    for fragment in fragments(document):
        style = fragment.charFormat()
        if style.anchorHref().startswith("source:"):
            superscript = (
                style.verticalAlignment() == QTextCharFormat.VerticalAlignment.AlignSuperScript
            )
            found.append((fragment.text(), style.anchorHref(), fragment.position(), superscript))
    return found


def click_text_at(qtbot: QtBot, panel: AnswerPanel, position: int) -> None:
    """Click the answer's character at `position`, as a user would."""
    panel.text.ensureCursorVisible()
    cursor = QTextCursor(panel.text.document())
    cursor.setPosition(position)
    left = panel.text.cursorRect(cursor)
    cursor.setPosition(position + 1)
    right = panel.text.cursorRect(cursor)
    point = QPoint((left.left() + right.left()) // 2, left.center().y())
    qtbot.mouseClick(panel.text.viewport(), Qt.MouseButton.LeftButton, pos=point)


def rows(heading: QTreeWidgetItem | None) -> list[QTreeWidgetItem]:
    assert heading is not None
    return [heading.child(i) for i in range(heading.childCount())]


def passage_shades(pane: DocumentsPane) -> list[tuple[int, int, QColor]]:
    return [
        (s.cursor.selectionStart(), s.cursor.selectionEnd(), s.format.background().color())
        for s in pane.preview.extraSelections()
        if s.format.property(PASSAGE_PROPERTY)
    ]


def shown_in_preview(pane: DocumentsPane, position: int) -> bool:
    cursor = QTextCursor(pane.preview.document())
    cursor.setPosition(position)
    return pane.preview.viewport().rect().contains(pane.preview.cursorRect(cursor))


def open_recorded(window: MainWindow, qtbot: QtBot, server: ScriptedServer, **kw: str) -> None:
    open_checked(window, qtbot, record(qtbot, window, server, **kw))


def test_the_card_marks_and_lists_the_sources_with_their_states(
    window: MainWindow, qtbot: QtBot, scripted_server: ScriptedServer
) -> None:
    open_recorded(window, qtbot, scripted_server)
    card = window.workspace.answer
    report = window.workspace.health.report
    assert report is not None
    assert [(s.number, s.origin, s.match) for s in report.sources] == [
        (1, "sources", "exact"),
        (2, "answer", "exact"),
        (3, "answer", "not_found"),
    ]

    shown = card.text.toPlainText()
    assert shown.startswith("The board approved 2.4 million euros.")  # Markdown still rendered
    # A quoted passage is marked right after its closing quotation mark; the given source that
    # the answer does not quote is marked at the end.
    assert f"“{LATE}”[2]," in shown
    assert f'"{MADE_UP}"[3].' in shown
    assert shown.endswith(".[1]")
    found = markers(card.text.document())
    assert sorted(text for text, *_ in found) == ["[1]", "[2]", "[3]"]
    assert all(superscript for *_, superscript in found)

    assert card.sources_list.isVisible()
    heading = card.sources_list.sources_item
    assert heading is not None
    assert heading.text(0) == "Sources: 2 found, 1 not in the documents"
    one, two, missing = rows(heading)
    assert one.text(0).startswith("[1] ✓ found word for word · minutes.txt, characters ")
    assert one.text(0).endswith(f"“{CLOSING}”")
    start = MINUTES.text.index(CLOSING)
    assert f"characters {start:,}–{start + len(CLOSING):,}" in one.text(0)
    assert two.text(0).startswith("[2] ✓ found word for word · letter.txt, characters ")
    assert missing.text(0).startswith("[3] ✗ not in the documents: the model may have made it up")
    assert missing.text(0).endswith(f"“{MADE_UP}”")
    warning = QColor(colors().warning)
    assert missing.foreground(0).color() == warning
    assert one.foreground(0).color() != warning
    assert missing.foreground(0).color() != QColor(colors().ok)
    assert card.sources_list.passage_of(missing) is None

    read = rows(card.sources_list.read_item)
    assert card.sources_list.read_item is not None
    assert card.sources_list.read_item.text(0).startswith("Read to answer: 1 passage")
    assert [row.text(0).split(" · ")[0] for row in read] == ["minutes.txt, characters 0–300"]


def test_clicking_a_marker_opens_its_passage_in_the_preview(
    window: MainWindow, qtbot: QtBot, scripted_server: ScriptedServer
) -> None:
    open_recorded(window, qtbot, scripted_server)
    card = window.workspace.answer
    pane = window.workspace.documents
    position = next(pos for text, _h, pos, _s in markers(card.text.document()) if text == "[1]")
    with qtbot.waitSignal(card.source_chosen, timeout=2000):
        click_text_at(qtbot, card, position + 1)

    assert pane.current_row() == 0  # minutes.txt
    start = MINUTES.text.index(CLOSING)
    end = start + len(CLOSING)
    [(first, last, shade)] = passage_shades(pane)
    assert pane.preview.toPlainText()[first:last] == CLOSING
    assert shade == QColor(colors().passage)
    assert shade != QColor(colors().accent)
    assert shown_in_preview(pane, first)  # scrolled to it: it is far below the first screen
    assert pane.passage_label.isVisible()
    assert pane.passage_label.text() == (
        f"Source [1]: found word for word — minutes.txt, characters {start:,}–{end:,}"
    )
    row = card.sources_list.row_of(1)
    assert row is not None
    assert card.sources_list.currentItem() is row

    # The row of the letter's quote does what its marker does: the letter, at the passage.
    two = card.sources_list.row_of(2)
    assert two is not None
    card.sources_list.scrollToItem(two)
    rect = card.sources_list.visualItemRect(two)
    with qtbot.waitSignal(card.source_chosen, timeout=2000):
        qtbot.mouseClick(card.sources_list.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert pane.current_row() == 1
    [(first, last, _shade)] = passage_shades(pane)
    assert pane.preview.toPlainText()[first:last] == LATE
    assert pane.passage_label.text().startswith("Source [2]: found word for word — letter.txt")

    # A source not found opens nothing: its row already says why.
    missing = card.sources_list.row_of(3)
    assert missing is not None
    card.sources_list.scrollToItem(missing)
    with qtbot.assertNotEmitted(card.source_chosen, wait=100):
        qtbot.mouseClick(
            card.sources_list.viewport(),
            Qt.MouseButton.LeftButton,
            pos=card.sources_list.visualItemRect(missing).center(),
        )


def test_a_passage_read_to_answer_opens_too_and_leaving_clears_it(
    window: MainWindow, qtbot: QtBot, scripted_server: ScriptedServer
) -> None:
    open_recorded(window, qtbot, scripted_server)
    card = window.workspace.answer
    pane = window.workspace.documents
    heading = card.sources_list.read_item
    assert heading is not None
    heading.setExpanded(True)
    [row] = rows(heading)
    card.sources_list.scrollToItem(row)
    with qtbot.waitSignal(card.source_chosen, timeout=2000):
        qtbot.mouseClick(
            card.sources_list.viewport(),
            Qt.MouseButton.LeftButton,
            pos=card.sources_list.visualItemRect(row).center(),
        )
    assert pane.current_row() == 0
    assert [(first, last) for first, last, _ in passage_shades(pane)] == [(0, 300)]
    assert pane.passage_label.text().startswith("Read by sub-call ")
    assert pane.passage_label.text().endswith("minutes.txt, characters 0–300")

    pane.select_row(1)  # another document: no passage on it
    assert passage_shades(pane) == []
    assert not pane.passage_label.isVisible()

    window.leave_review()
    assert not card.isVisible()
    assert card.sources == ()
    assert not pane.passage_label.isVisible()


def test_an_answer_cannot_write_a_working_source_link(
    window: MainWindow, qtbot: QtBot, scripted_server: ScriptedServer
) -> None:
    """A model that writes a marker's link itself, in any Markdown form, gets plain text."""
    spoofed = (
        "See [1](source:1), <source:3> and [the minutes](source:2 'Source [2]'), "
        "or [elsewhere](file:///etc/passwd); [a web page](https://example.com/) stays a link."
    )
    open_recorded(window, qtbot, scripted_server, answer=spoofed)
    card = window.workspace.answer
    document = card.text.document()
    assert card.text.toPlainText().startswith("See 1, source:3 and the minutes, or elsewhere;")
    found = markers(document)
    assert [(text, href, superscript) for text, href, _pos, superscript in found] == [
        ("[1]", "source:1", True)
    ]  # the one real source (its marker at the end), nothing from the answer
    hrefs = {
        style.anchorHref()
        for style in (fragment.charFormat() for fragment in fragments(document))
        if style.isAnchor() or style.anchorHref()
    }
    assert hrefs == {"source:1", "https://example.com/"}

    shown = card.text.toPlainText()
    browser = Browser()
    for scheme in ("https", "file", "source"):
        QDesktopServices.setUrlHandler(scheme, browser, "open")
    try:
        with qtbot.assertNotEmitted(card.source_chosen, wait=100):
            for spoof in ("See 1", "source:3", "the minutes", "elsewhere"):
                click_text_at(qtbot, card, shown.index(spoof) + 1)
        assert not window.workspace.documents.passage_label.isVisible()
        assert browser.opened == []  # a file link is not followed either
        click_text_at(qtbot, card, shown.index("a web page") + 1)
        assert browser.opened == ["https://example.com/"]  # web links still open outside
    finally:
        for scheme in ("https", "file", "source"):
            QDesktopServices.unsetUrlHandler(scheme)


class Browser(QObject):
    """Stands in for the desktop's browser: Qt hands it the links the app opens."""

    def __init__(self) -> None:
        super().__init__()
        self.opened: list[str] = []

    @Slot(QUrl)
    def open(self, url: QUrl) -> None:
        self.opened.append(url.toString())


def test_a_live_run_and_its_replay_show_the_sources(
    window: MainWindow, qtbot: QtBot, scripted_server: ScriptedServer, tmp_path: Path
) -> None:
    paths: Sequence[Path] = []
    for document in (MINUTES, LETTER):
        path = tmp_path / document.name
        path.write_text(document.text, encoding="utf-8")
        paths = [*paths, path]
    scripted_server.respond_with(
        scripted(
            root=[READING, repl(f"FINAL({ANSWER!r}, sources=[{CLOSING!r}])")],
            sub="Approved: 2.4 million euros.",
        )
    )
    prepare(window, qtbot, scripted_server, QUERY, list(paths))
    run_and_wait(window, qtbot)
    card = window.workspace.answer
    qtbot.waitUntil(lambda: card.sources != (), timeout=20_000)
    assert sorted(text for text, *_ in markers(card.text.document())) == ["[1]", "[2]", "[3]"]
    with qtbot.waitSignal(card.source_chosen, timeout=2000):
        card.choose_source(2)
    pane = window.workspace.documents
    assert pane.model.entries[pane.current_row()].name == "letter.txt"
    [(first, last, _shade)] = passage_shades(pane)
    assert pane.preview.toPlainText()[first:last] == LATE

    session_id = window.workspace.model.tree.run.run_id
    clock = HandClock()
    window.workspace.replay.clock = clock
    open_checked(window, qtbot, session_id)
    window.workspace.replay.play()
    assert not card.isVisible()  # played from the start: no answer yet
    while window.workspace.replay.playing:
        clock.advance(1.0)
        window.workspace.replay.tick()
    assert card.isVisible()
    assert len(card.sources) == 3
    assert sorted(text for text, *_ in markers(card.text.document())) == ["[1]", "[2]", "[3]"]


def test_the_answer_reads_first_and_the_console_gets_the_height_on_a_small_screen(
    window: MainWindow, qtbot: QtBot, scripted_server: ScriptedServer
) -> None:
    window.resize(1024, 640)
    open_recorded(window, qtbot, scripted_server)
    qtbot.wait(50)
    ws = window.workspace
    card = ws.answer
    assert card.isVisible()  # a run in view that has ended shows its answer
    assert card.sources_list.isVisible()
    assert card.text.geometry().top() < card.sources_list.geometry().top()
    assert card.sources_list.geometry().bottom() < card.stats.geometry().top()  # figures last
    assert card.text.verticalScrollBar().maximum() == 0  # the answer shows whole
    ws.detail_tabs.show_tab(CONSOLE)
    qtbot.wait(50)
    assert ws.console.isVisible()
    assert ws.console.height() >= 0.8 * ws.run_splitter.height()  # not 3-4 lines under a card


def test_a_source_in_a_later_sheet_opens_at_its_part(
    window: MainWindow, qtbot: QtBot, scripted_server: ScriptedServer, tmp_path: Path
) -> None:
    """Offsets are in the whole workbook's text; the part picker follows to the sheet."""
    hidden = "only in a hidden sheet"
    scripted_server.respond_with(
        scripted(root=[repl(f"FINAL('It is in the archive.', sources=[{hidden!r}])")])
    )
    prepare(window, qtbot, scripted_server, "Where is the note?", [_workbook(tmp_path / "f.xlsx")])
    run_and_wait(window, qtbot)
    card = window.workspace.answer
    qtbot.waitUntil(lambda: card.sources != (), timeout=20_000)
    [source] = card.sources
    assert source.match == "exact"
    with qtbot.waitSignal(card.source_chosen, timeout=2000):
        card.choose_source(1)
    pane = window.workspace.documents
    assert pane.parts.isVisible()
    assert pane.parts.currentText() == "Sheet Archive"
    [(first, last, _shade)] = passage_shades(pane)
    assert pane.preview.toPlainText()[first:last] == hidden
    assert shown_in_preview(pane, first)


def test_a_quote_with_markup_in_it_is_marked_where_it_renders(
    window: MainWindow, qtbot: QtBot, scripted_server: ScriptedServer
) -> None:
    """The answer's Markdown is rendered, its quotes are checked as written: a quote holding
    `**bold**` still gets its marker right after it."""
    bold = "The board approved the Heron budget of **2.4 million euros** for the coming year"
    open_recorded(window, qtbot, scripted_server, answer=f"The minutes: “{bold}”. That is all.")
    shown = window.workspace.answer.text.toPlainText()
    assert "for the coming year”[" in shown
    assert shown.startswith("The minutes: “The board approved the Heron budget of 2.4 million")
