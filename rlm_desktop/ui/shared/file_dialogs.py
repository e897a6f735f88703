"""File dialogs that open where the user keeps their files, and pick documents by format.

Every file dialog starts in the folder used last for its kind of file (`kind`: documents,
exports, trajectories, task files, each kept in the preferences, so a restart keeps it; an export
does not open among the documents it came from), else in the user's Documents folder, else in
their home folder — never in the application's own folder or the working directory, which is where
Qt starts one without a folder. Add files offers the supported document formats first, then all
files, and remembers which of the two was picked last (files without an extension, such as
licences, are only under all files).
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QStandardPaths
from PySide6.QtWidgets import QFileDialog, QWidget

from rlm_desktop.documents.formats import document_patterns
from rlm_desktop.ui.shared.preferences import Preferences

LAST_FOLDER = "window/last_folder"
"""The documents' folder; other kinds keep theirs under `LAST_FOLDER/<kind>`."""
LAST_FILTER = "window/last_filter"
DOCUMENTS = "documents"
ALL_FILES = "All files (*)"


def documents_filter() -> str:
    """The name filter of the files read as documents, from the format table."""
    return f"Documents ({' '.join(document_patterns())})"


def home_of_documents() -> str:
    """The user's Documents folder, or their home folder when there is none."""
    location = QStandardPaths.StandardLocation.DocumentsLocation
    found = QStandardPaths.writableLocation(location)
    return found if found and Path(found).is_dir() else str(Path.home())


def _key(kind: str) -> str:
    return LAST_FOLDER if kind == DOCUMENTS else f"{LAST_FOLDER}_{kind}"


def start_folder(kind: str = DOCUMENTS) -> str:
    """Where a file dialog for `kind` opens: the folder used last for it while it exists, else
    Documents."""
    last = Preferences().get_str(_key(kind))
    return last if last and Path(last).is_dir() else home_of_documents()


def remember_folder(folder: str | Path, kind: str = DOCUMENTS) -> None:
    """Open the next file dialog for `kind` in `folder`."""
    Preferences().set(_key(kind), str(folder))


def open_file_names(parent: QWidget, caption: str, filters: list[str]) -> list[str]:
    """Documents the user picks (none when cancelled); the next dialog opens where they were,
    with the filter picked this time."""
    last = Preferences().get_str(LAST_FILTER)
    paths, chosen = QFileDialog.getOpenFileNames(
        parent, caption, start_folder(), ";;".join(filters), last if last in filters else ""
    )
    if paths:
        remember_folder(Path(paths[0]).parent)
        Preferences().set(LAST_FILTER, chosen)
    return paths


def open_file_name(parent: QWidget, caption: str, filters: list[str], kind: str) -> str:
    """A file of `kind` the user picks ("" when cancelled); the next dialog for that kind opens
    where it was."""
    path, _ = QFileDialog.getOpenFileName(parent, caption, start_folder(kind), ";;".join(filters))
    if path:
        remember_folder(Path(path).parent, kind)
    return path


def existing_folder(parent: QWidget, caption: str, kind: str = DOCUMENTS) -> str:
    """A folder the user picks ("" when cancelled); the next dialog opens beside it, in its
    parent, so its siblings are at hand."""
    folder = QFileDialog.getExistingDirectory(parent, caption, start_folder(kind))
    if folder:
        remember_folder(Path(folder).parent, kind)
    return folder


def start_in_place(dialog: QFileDialog, kind: str) -> None:
    """Open `dialog` (one built by hand) where the last one for `kind` ended, and remember where
    this one ends."""
    dialog.setDirectory(start_folder(kind))
    dialog.accepted.connect(lambda: remember_folder(_ended_in(dialog), kind))


def _ended_in(dialog: QFileDialog) -> str:
    """The folder of the file chosen (a path typed whole may name another folder than the one
    shown), else the folder shown."""
    chosen = dialog.selectedFiles()
    return str(Path(chosen[0]).parent) if chosen else dialog.directory().absolutePath()
