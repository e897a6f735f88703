"""Every run kept in SQLite: recording, review, replay and search. Qt-free."""

from rlm_desktop.store.recorder import Recorder
from rlm_desktop.store.store import (
    RecordableRun,
    SessionBusy,
    SessionDamaged,
    SessionNotFound,
    Store,
    StoreError,
)

__all__ = [
    "RecordableRun",
    "Recorder",
    "SessionBusy",
    "SessionDamaged",
    "SessionNotFound",
    "Store",
    "StoreError",
]
