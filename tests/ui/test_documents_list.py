"""The documents list reads at a narrow width: each file's own name first and its folder second,
sortable by any column while the run's order stays one click away, filterable by name or type
(the run still gets every document), and a hostile file name cannot pass for another."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from rlm_desktop.review.health.coverage import Coverage, DocumentCoverage
from rlm_desktop.ui.documents.model import COLUMNS
from rlm_desktop.ui.documents.pane import DocumentsPane
from tests.ui.test_documents_pane import _load, _pane

NUMBER, NAME, FOLDER = (COLUMNS.index(c) for c in ("#", "Name", "Folder"))
SIZE, TOKENS, READ = (COLUMNS.index(c) for c in ("Size", "Tokens", "Read"))
LICENCES = {"copyright": 900, "BSD": 300, "Apache-2.0": 5_000, "GPL-3": 12_000, "MIT.md": 40}


def _licences(root: Path) -> Path:
    for number, (name, words) in enumerate(LICENCES.items()):
        folder = root / "analyst" / ("common" if number % 2 else "")
        folder.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text("licence text " * words + "\n", encoding="utf-8")
    return root / "analyst"


def _licences_loaded(qtbot: QtBot, tmp_path: Path) -> tuple[DocumentsPane, list[str]]:
    """A wide pane with the licences loaded, and their names in the run's order."""
    pane = _pane(qtbot, width=700)
    _load(qtbot, pane, _licences(tmp_path))
    return pane, [d.name for d in pane.documents()]


def _column(pane: DocumentsPane, column: int) -> list[str]:
    proxy = pane.view.model()
    return [proxy.index(row, column).data() for row in range(proxy.rowCount())]


def test_a_narrow_pane_shows_each_name_whole_before_its_folder_even_with_the_read_bar(
    qtbot: QtBot, qloop: object, tmp_path: Path
) -> None:
    pane = _pane(qtbot, width=240)
    _load(qtbot, pane, _licences(tmp_path))
    documents = pane.documents()
    pane.show_coverage(
        Coverage(tuple(DocumentCoverage(d.name, d.chars, d.chars // 2, ()) for d in documents))
    )
    assert not pane.view.isColumnHidden(READ)
    assert pane.view.isColumnHidden(FOLDER)  # drawn in grey after the name instead
    names = _column(pane, NAME)
    assert sorted(names) == sorted(LICENCES)  # the file's own name, not "analyst/…opyright"
    assert _column(pane, FOLDER) == [d.name.rsplit("/", 1)[0] for d in documents]
    metrics = pane.view.fontMetrics()
    widest = max(metrics.horizontalAdvance(name) for name in names)
    assert pane.view.columnWidth(NAME) >= widest + 8, "the name column elides the names"
    assert pane.view.columnWidth(READ) <= 60  # the share is a narrow bar, not the name's room
    tip = pane.view.model().index(0, NAME).data(Qt.ItemDataRole.ToolTipRole)
    assert str(documents[0].path) in tip
    pane.shutdown()


def test_sorting_by_any_column_leaves_the_run_order_and_the_number_column_restores_it(
    qtbot: QtBot, qloop: object, tmp_path: Path
) -> None:
    pane, order = _licences_loaded(qtbot, tmp_path)
    assert _column(pane, NUMBER) == ["0", "1", "2", "3", "4"]  # context[i]
    pane.view.sortByColumn(NAME, Qt.SortOrder.AscendingOrder)
    assert _column(pane, NAME) == sorted(LICENCES, key=str.casefold)
    pane.view.sortByColumn(TOKENS, Qt.SortOrder.DescendingOrder)
    assert _column(pane, NAME)[:2] == ["GPL-3", "Apache-2.0"]
    pane.view.sortByColumn(SIZE, Qt.SortOrder.AscendingOrder)
    assert _column(pane, NAME)[0] == "MIT.md"
    pane.view.sortByColumn(FOLDER, Qt.SortOrder.AscendingOrder)
    assert _column(pane, FOLDER) == sorted(_column(pane, FOLDER))
    assert [d.name for d in pane.documents()] == order  # the run gets what it got
    pane.view.sortByColumn(NUMBER, Qt.SortOrder.AscendingOrder)
    assert [
        f"{f}/{n}" for f, n in zip(_column(pane, FOLDER), _column(pane, NAME), strict=False)
    ] == order
    pane.shutdown()


def test_moving_a_document_while_sorted_by_name_moves_it_in_the_run_order(
    qtbot: QtBot, qloop: object, tmp_path: Path
) -> None:
    pane, order = _licences_loaded(qtbot, tmp_path)
    pane.view.sortByColumn(NAME, Qt.SortOrder.AscendingOrder)
    pane.select_row(2)
    pane.move_selected(-1)
    assert [d.name for d in pane.documents()] == [order[0], order[2], order[1], *order[3:]]
    assert _column(pane, NUMBER) == ["0", "1", "2", "3", "4"]  # shown in the run's order again
    assert pane.current_row() == 1
    pane.shutdown()


def test_the_filter_hides_rows_by_name_or_type_and_the_run_still_gets_them_all(
    qtbot: QtBot, qloop: object, tmp_path: Path
) -> None:
    pane = _pane(qtbot, width=240)
    folder = _licences(tmp_path)
    (folder / "report.pdf.txt").write_text("not a pdf\n", encoding="utf-8")
    _load(qtbot, pane, folder)
    everything = [d.name for d in pane.documents()]
    pane.filter_edit.setText("*.md")
    assert _column(pane, NAME) == ["MIT.md"]
    pane.filter_edit.setText("markdown")  # a type
    assert _column(pane, NAME) == ["MIT.md"]
    pane.filter_edit.setText("common")  # part of the folder
    assert sorted(_column(pane, NAME)) == ["BSD", "GPL-3"]
    pane.filter_edit.setText("*.md, bsd")
    assert sorted(_column(pane, NAME)) == ["BSD", "MIT.md"]
    pane.filter_edit.setText("*.pdf")  # a glob matches the whole name, not a part of it
    assert _column(pane, NAME) == []
    assert "0 of 6 shown" in pane.totals.text()
    assert [d.name for d in pane.documents()] == everything
    pane.filter_edit.clear()
    assert len(_column(pane, NAME)) == 6
    pane.shutdown()


def test_a_hostile_file_name_cannot_pass_for_another_name_or_folder(
    qtbot: QtBot, qloop: object, tmp_path: Path
) -> None:
    folder = tmp_path / "inbox"
    folder.mkdir()
    hostile = {
        "line\nbreak.txt": "line\\nbreak.txt",
        "invoice\u202efdp.txt": "invoice\\u202efdp.txt",  # reads "invoicetxt.pdf"
        "zero\u200bwidth.txt": "zero\\u200bwidth.txt",
        "x" * 240 + ".txt": "x" * 240 + ".txt",
    }
    for name in hostile:
        (folder / name).write_text(f"{name!r}\n", encoding="utf-8")
    pane = _pane(qtbot, width=240)
    _load(qtbot, pane, folder)
    assert len(pane.documents()) == 4
    shown = _column(pane, NAME)
    assert sorted(shown) == sorted(hostile.values())
    assert _column(pane, FOLDER) == ["inbox"] * 4
    for row in range(4):
        tip = pane.view.model().index(row, NAME).data(Qt.ItemDataRole.ToolTipRole)
        first = tip.splitlines()[0]
        assert first.startswith(str(folder))
        assert "\u202e" not in tip
        assert "\u200b" not in tip
    pane.shutdown()


def test_after_a_run_the_share_read_takes_the_tokens_place_not_the_names(
    qtbot: QtBot, qloop: object, tmp_path: Path
) -> None:
    """A new user's /usr/share/doc after a run read "changelo…" and "adduser.c…" at 265 px."""
    folder = tmp_path / "doc"
    for package in ("adduser", "apt", "base-files"):
        (folder / package).mkdir(parents=True)
        for name in ("changelog.Debian", "adduser.conf", "copyright"):
            (folder / package / name).write_text("text " * 400 + "\n", encoding="utf-8")
    pane = _pane(qtbot, width=265)
    _load(qtbot, pane, folder)
    documents = pane.documents()
    assert not pane.view.isColumnHidden(TOKENS)  # before a run: what each would cost
    pane.show_coverage(
        Coverage(tuple(DocumentCoverage(d.name, d.chars, d.chars // 3, ()) for d in documents))
    )
    assert pane.view.isColumnHidden(TOKENS)
    names = _column(pane, NAME)
    widest = max(pane.view.fontMetrics().horizontalAdvance(name) for name in names)
    assert pane.view.columnWidth(NAME) >= widest + 8, "the name column elides the names"
    pane.clear()
    assert pane.view.isColumnHidden(READ)  # no run's share over an emptied list
    assert not pane.view.isColumnHidden(TOKENS)
    pane.shutdown()


def test_the_rows_on_screen_are_redrawn_whole_when_the_read_bar_comes_and_goes(
    qtbot: QtBot, qloop: object, tmp_path: Path
) -> None:
    """The Read bar makes the rows taller; the numbers must move with their rows, not stay
    where the shorter rows had them (what the screen holds, against a fresh drawing)."""
    pane = _pane(qtbot, width=260)
    pane.resize(260, 400)
    _load(qtbot, pane, _licences(tmp_path))
    qtbot.wait(100)
    viewport = pane.view.viewport()

    def on_screen_matches_a_fresh_drawing() -> bool:
        corner = viewport.mapToGlobal(viewport.rect().topLeft())
        shown = pane.screen().grabWindow(
            0, corner.x(), corner.y(), viewport.width(), viewport.height()
        )
        return shown.toImage() == viewport.grab().toImage()

    documents = pane.documents()
    short_rows = pane.view.visualRect(pane.proxy.index(1, NUMBER)).top()
    pane.show_coverage(
        Coverage(tuple(DocumentCoverage(d.name, d.chars, d.chars // 2, ()) for d in documents))
    )
    qtbot.wait(100)
    assert pane.view.visualRect(pane.proxy.index(1, NUMBER)).top() > short_rows
    assert on_screen_matches_a_fresh_drawing(), "the # column kept the shorter rows' numbers"
    pane.show_coverage(None)
    qtbot.wait(100)
    assert pane.view.visualRect(pane.proxy.index(1, NUMBER)).top() == short_rows
    assert on_screen_matches_a_fresh_drawing()
    pane.shutdown()
