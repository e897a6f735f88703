"""File dialogs that open where the user keeps their files, and pick documents by format.

Every file dialog starts in the folder used last (kept in the preferences, so a restart keeps
it), else in the user's Documents folder, else in their home folder — never in the
application's own folder or the working directory, which is where Qt starts one without a
folder. Add files offers the supported document formats first, then all files.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QStandardPaths
from PySide6.QtWidgets import QFileDialog, QWidget

from rlm_desktop.documents.formats import document_patterns
from rlm_desktop.ui.shared.preferences import Preferences

LAST_FOLDER = "window/last_folder"
ALL_FILES = "All files (*)"


def documents_filter() -> str:
    """The name filter of the files read as documents, from the format table."""
    return f"Documents ({' '.join(document_patterns())})"


def home_of_documents() -> str:
    """The user's Documents folder, or their home folder when there is none."""
    location = QStandardPaths.StandardLocation.DocumentsLocation
    found = QStandardPaths.writableLocation(location)
    return found if found and Path(found).is_dir() else str(Path.home())


def start_folder() -> str:
    """Where a file dialog opens: the folder used last while it exists, else Documents."""
    last = Preferences().get_str(LAST_FOLDER)
    return last if last and Path(last).is_dir() else home_of_documents()


def remember_folder(folder: str | Path) -> None:
    """Open the next file dialog in `folder`."""
    Preferences().set(LAST_FOLDER, str(folder))


def open_file_names(parent: QWidget, caption: str, filters: list[str]) -> list[str]:
    """Files the user picks (none when cancelled); the next dialog opens where they were."""
    paths, _ = QFileDialog.getOpenFileNames(parent, caption, start_folder(), ";;".join(filters))
    if paths:
        remember_folder(Path(paths[0]).parent)
    return paths


def open_file_name(parent: QWidget, caption: str, filters: list[str]) -> str:
    """A file the user picks ("" when cancelled); the next dialog opens where it was."""
    path, _ = QFileDialog.getOpenFileName(parent, caption, start_folder(), ";;".join(filters))
    if path:
        remember_folder(Path(path).parent)
    return path


def existing_folder(parent: QWidget, caption: str) -> str:
    """A folder the user picks ("" when cancelled); the next dialog opens beside it, in its
    parent, so its siblings are at hand."""
    folder = QFileDialog.getExistingDirectory(parent, caption, start_folder())
    if folder:
        remember_folder(Path(folder).parent)
    return folder


def start_in_place(dialog: QFileDialog) -> None:
    """Open `dialog` (one built by hand) where the others open, and remember where it ended."""
    dialog.setDirectory(start_folder())
    dialog.accepted.connect(lambda: remember_folder(dialog.directory().absolutePath()))
