"""Files dropped on the window: trajectories open as sessions, anything else loads as documents.

A dropped `.jsonl` or `.json` file is a trajectory when the importer's detection recognises its
format from its first line (`rlm_desktop.importing.detect`), not by its name alone: a JSON Lines document
stays a document. The filter watches the window and the documents pane, which takes dropped
documents itself: a trajectory dropped there opens as a session, even while a saved session is
under review (when documents cannot be added).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QWidget

from rlm_desktop.ui.sessions.open_trajectory import TRAJECTORY_SUFFIXES

FIRST_LINE_BYTES = 1 << 20
"""The most of a JSON Lines file read to tell whether it is a trajectory."""
WHOLE_DOCUMENT_BYTES = 8 << 20
"""A JSON document (not lines: DSPy's trajectories) is read whole up to this size to tell."""


def trajectory_format(path: Path) -> str | None:
    """The trajectory format of the file at `path` as the importer tells it from the file's
    first line (`rlm-desktop`, `rlms`, `dspy`), or None for anything else."""
    if path.suffix.lower() not in TRAJECTORY_SUFFIXES or not path.is_file():
        return None
    from rlm_desktop.importing.detect import detect
    from rlm_desktop.importing.reading import Entry, RawFile, Refusal, loads, read_file

    try:
        with path.open("rb") as file:
            first = file.readline(FIRST_LINE_BYTES)
        try:
            raw = RawFile([Entry(1, loads(first.decode("utf-8"), 1))], False, "")
        except (Refusal, UnicodeDecodeError):  # not one JSON value a line: a whole document?
            if path.stat().st_size > WHOLE_DOCUMENT_BYTES:
                return None
            raw = read_file(path, WHOLE_DOCUMENT_BYTES)
        return detect(raw)
    except (Refusal, OSError):
        return None


def is_trajectory(path: Path) -> bool:
    """True when `path` is a file in a format the importer reads."""
    return trajectory_format(path) is not None


def dropped_paths(event: QDropEvent | QDragEnterEvent) -> list[Path]:
    """The local files and folders a drag carries."""
    return [Path(url.toLocalFile()) for url in event.mimeData().urls() if url.isLocalFile()]


class TrajectoryDrops(QObject):
    """Takes the trajectories out of what is dropped on the watched widgets: `open_file(path)`
    opens each; the rest go to `add_documents(paths)` (which refuses them while a saved
    session is under review, as the documents pane does)."""

    def __init__(
        self,
        parent: QObject,
        open_file: Callable[[Path], object],
        add_documents: Callable[[Sequence[Path]], object],
    ) -> None:
        super().__init__(parent)
        self._open_file = open_file
        self._add_documents = add_documents
        self._takes_all: set[QObject] = set()

    def watch(self, widget: QWidget, *, documents_too: bool = False) -> None:
        """Filter the drops on `widget`; with `documents_too`, a drop of documents alone is
        taken too (the window, whose own drops nothing else takes), else left to `widget`."""
        widget.installEventFilter(self)
        if documents_too:
            widget.setAcceptDrops(True)
            self._takes_all.add(widget)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        """Accept a drag that carries a trajectory; split a drop between sessions and
        documents. Drags of documents alone are left to the widget."""
        if isinstance(event, QDragEnterEvent) and event.type() == QEvent.Type.DragEnter:
            paths = dropped_paths(event)
            if paths and (watched in self._takes_all or any(map(is_trajectory, paths))):
                event.acceptProposedAction()
                return True
            return False
        if isinstance(event, QDropEvent) and event.type() == QEvent.Type.Drop:
            return self._dropped(event, watched in self._takes_all)
        return False

    def _dropped(self, event: QDropEvent, documents_too: bool) -> bool:
        paths = dropped_paths(event)
        trajectories = [path for path in paths if is_trajectory(path)]
        if not paths or not (trajectories or documents_too):
            return False
        event.acceptProposedAction()
        others = [path for path in paths if path not in trajectories]
        if others:
            self._add_documents(others)
        for path in trajectories:
            self._open_file(path)
        return True
