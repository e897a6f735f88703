"""Every run kept in SQLite: recording, review, replay, search and export. Qt-free."""

from rlm_desktop.store.exports import FORMATS, export, export_bytes
from rlm_desktop.store.recorder import Recorder
from rlm_desktop.store.store import (
    RecordableRun,
    SessionBusy,
    SessionNotFound,
    Store,
    StoreError,
)

__all__ = [
    "FORMATS",
    "RecordableRun",
    "Recorder",
    "SessionBusy",
    "SessionNotFound",
    "Store",
    "StoreError",
    "export",
    "export_bytes",
]
