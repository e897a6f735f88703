"""Where to export a session and in which format: the save dialog's file type decides."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QWidget

from rlm_desktop.ui.shared import file_dialogs

EXPORTS = (
    ("md", "Markdown (*.md)", ".md"),
    ("jsonl", "JSON Lines (*.jsonl)", ".jsonl"),
    ("html", "HTML report (*.html)", ".html"),
    ("otlp", "OTLP/JSON traces (*.json)", ".json"),
    ("otlp-proto", "OTLP protobuf traces (*.pb)", ".pb"),
)
"""(format, the save dialog's file type, extension), the default first."""
_SUFFIXES = {suffix for _format, _filter, suffix in EXPORTS}


def default_name(session_id: str, suffix: str = ".md") -> str:
    """`rlm-session-<id>.md`: an export is named for its session."""
    return f"rlm-session-{session_id}{suffix}"


@dataclass(frozen=True)
class ExportTarget:
    """A file to export to and the format (`md`, `jsonl`, `html`, `otlp`, `otlp-proto`)."""

    path: Path
    format: str

    @classmethod
    def for_path(cls, path: Path) -> ExportTarget:
        """The format a path's extension names (Markdown when it names none of ours)."""
        found = next((fmt for fmt, _filter, suffix in EXPORTS if path.suffix == suffix), "md")
        return cls(path, found)

    @classmethod
    def chosen(cls, dialog: QFileDialog) -> ExportTarget:
        """What an accepted `export_dialog` asks for: the file type chosen is the format; the
        file gets that type's extension unless the name already has one of another kind."""
        chosen = dialog.selectedNameFilter()
        fmt, _filter, suffix = next((e for e in EXPORTS if e[1] == chosen), EXPORTS[0])
        return cls(_with_suffix(Path(dialog.selectedFiles()[0]), suffix), fmt)


def export_dialog(parent: QWidget, session_id: str) -> QFileDialog:
    """A save dialog offering each export format as a file type, Markdown first, for a file
    named for the session. Choosing another type renames the file to match."""
    dialog = QFileDialog(parent, "Export session")
    dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
    dialog.setFileMode(QFileDialog.FileMode.AnyFile)
    dialog.setNameFilters([name_filter for _fmt, name_filter, _suffix in EXPORTS])
    dialog.selectNameFilter(EXPORTS[0][1])
    file_dialogs.start_in_place(dialog, "exports")
    dialog.selectFile(default_name(session_id))

    def retype(name_filter: str) -> None:
        suffix = next((e[2] for e in EXPORTS if e[1] == name_filter), None)
        typed = dialog.selectedFiles()
        if suffix is not None and typed:
            dialog.selectFile(_with_suffix(Path(typed[0]), suffix).name)

    dialog.filterSelected.connect(retype)
    return dialog


def _with_suffix(path: Path, suffix: str) -> Path:
    """`path` with `suffix`: added when it has none, swapped when it has another format's."""
    if path.suffix == suffix:
        return path
    if not path.suffix:
        return path.with_name(path.name + suffix)
    if path.suffix in _SUFFIXES:
        return path.with_suffix(suffix)
    return path
