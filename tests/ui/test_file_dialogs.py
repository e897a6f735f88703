"""File dialogs filter by the supported formats and open where the user keeps their files.

Add files offers "Documents (*.txt *.md *.pdf …)", built from the format table, then "All files
(*)". Every file dialog (Add files, Add folder, Export, the evaluation's task file, Settings →
Sandbox's folder) opens in the user's Documents folder the first time (home when there is none),
never in the application's folder or the working directory, and in the folder used last after
that, also after a restart. The dialogs are Qt's own, driven as a user would: each is read and
answered once it is open.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QFileDialog, QLineEdit
from pytestqt.qtbot import QtBot

from rlm_desktop.documents.formats import COMPRESSIONS, type_for
from rlm_desktop.ui.evaluation.form import EvaluationForm
from rlm_desktop.ui.sessions.export_target import export_dialog
from rlm_desktop.ui.settings.sandbox import SandboxPage
from rlm_desktop.ui.shared.preferences import Preferences
from rlm_desktop.ui.window.main_window import MainWindow


@dataclass
class Seen:
    """What an open file dialog showed."""

    folder: str = ""
    filters: list[str] = field(default_factory=list)
    selected: str = ""
    """The name filter selected when the dialog opened."""


def answering(qtbot: QtBot, choose: str | None = None, name_filter: str = "") -> Seen:
    """Read the next file dialog that opens, then choose `choose` in it (None: cancel), with
    `name_filter` picked first when given."""
    seen = Seen()

    def answer() -> None:
        dialog = QApplication.activeModalWidget()
        if not isinstance(dialog, QFileDialog):
            QTimer.singleShot(20, answer)
            return
        seen.folder = dialog.directory().absolutePath()
        seen.filters = dialog.nameFilters()
        seen.selected = dialog.selectedNameFilter()
        if name_filter:
            dialog.selectNameFilter(name_filter)
        if choose is None:
            dialog.reject()
        else:
            typed = dialog.findChild(QLineEdit, "fileNameEdit")  # the name typed, as a user can
            typed.setText(choose)
            dialog.accept()

    QTimer.singleShot(20, answer)
    return seen


@pytest.fixture
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home with a Documents folder, the tests run from the application's own folder."""
    home = tmp_path / "home"
    (home / "Documents").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.chdir(Path(__file__).parents[2])  # where `make run` starts the app
    return home


def test_add_files_filters_by_the_supported_formats(
    window: MainWindow, qtbot: QtBot, user_home: Path
) -> None:
    seen = answering(qtbot)
    window.workspace.documents.choose_files()
    documents, *rest = seen.filters
    assert documents.startswith("Documents (")
    patterns = documents.removeprefix("Documents (").removesuffix(")").split()
    for pattern in ("*.txt", "*.md", "*.pdf", "*.docx", "*.csv", "*.html", "*.py"):
        assert pattern in patterns
    assert "*.gz" in patterns  # a rotated log, a man page
    for pattern in patterns:
        suffix = pattern.removeprefix("*")
        name = f"x.log{suffix}" if suffix in COMPRESSIONS else f"x{suffix}"
        assert type_for(Path(name)), pattern
    assert rest == ["All files (*)"]


def test_every_dialog_starts_in_documents_then_where_the_user_was_last(
    window: MainWindow, qtbot: QtBot, user_home: Path, tmp_path: Path
) -> None:
    documents = str(user_home / "Documents")
    project = tmp_path / "project"
    (project / "notes").mkdir(parents=True)
    memo = project / "memo.txt"
    memo.write_text("The launch is on Tuesday.\n", encoding="utf-8")

    first = answering(qtbot, str(memo))
    window.workspace.documents.choose_files()
    assert first.folder == documents
    assert first.folder != os.getcwd()
    qtbot.waitUntil(lambda: not window.workspace.documents.loading, timeout=20_000)

    seen = answering(qtbot)
    window.workspace.documents.choose_folder()
    assert seen.folder == str(project)  # documents: where the last ones came from

    others: list[tuple[str, Callable[[], object]]] = [
        ("Export", lambda: export_dialog(window, "a-session").exec()),
        ("Task file", EvaluationForm("openai/test-model", None)._browse),
        ("Sandbox folder", SandboxPage(Preferences()).add_folder),
    ]
    for name, open_dialog in others:
        seen = answering(qtbot)
        open_dialog()
        assert seen.folder == documents, name  # not among the documents a run read


def test_an_export_opens_where_the_last_export_went(
    window: MainWindow, qtbot: QtBot, user_home: Path, tmp_path: Path
) -> None:
    """A new user's export had opened in /usr/share/common-licenses, where documents came from."""
    reports = tmp_path / "reports"
    reports.mkdir()
    seen = answering(qtbot, str(reports / "run.md"))
    export_dialog(window, "a-session").exec()
    assert seen.folder == str(user_home / "Documents")
    licences = tmp_path / "licences"
    licences.mkdir()
    (licences / "GPL-3").write_text("GNU GENERAL PUBLIC LICENSE\n", encoding="utf-8")
    answering(qtbot, str(licences / "GPL-3"))
    window.workspace.documents.choose_files()
    qtbot.waitUntil(lambda: not window.workspace.documents.loading, timeout=20_000)
    again = answering(qtbot)
    export_dialog(window, "a-session").exec()
    assert again.folder == str(reports)


def test_add_files_keeps_the_filter_picked_last(
    window: MainWindow, qtbot: QtBot, user_home: Path, tmp_path: Path
) -> None:
    """Licences have no extension: a user who picks All files once finds them there next time."""
    licence = tmp_path / "GPL-3"
    licence.write_text("GNU GENERAL PUBLIC LICENSE\n", encoding="utf-8")
    first = answering(qtbot, str(licence), name_filter="All files (*)")
    window.workspace.documents.choose_files()
    assert first.selected.startswith("Documents (")
    qtbot.waitUntil(lambda: not window.workspace.documents.loading, timeout=20_000)
    again = answering(qtbot)
    window.workspace.documents.choose_files()
    assert again.selected == "All files (*)"


def test_the_folder_used_last_is_kept_across_a_restart(
    window: MainWindow, qtbot: QtBot, user_home: Path, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    (project / "logs").mkdir(parents=True)
    seen = answering(qtbot, str(project / "logs"))
    SandboxPage(Preferences()).add_folder()
    assert seen.folder == str(user_home / "Documents")

    again = answering(qtbot)
    SandboxPage(Preferences()).add_folder()  # a new page reads the preferences
    assert again.folder == str(project)


def test_home_when_there_is_no_documents_folder(
    window: MainWindow, qtbot: QtBot, user_home: Path
) -> None:
    (user_home / "Documents").rmdir()
    seen = answering(qtbot)
    window.workspace.documents.choose_folder()
    assert seen.folder == str(user_home)
