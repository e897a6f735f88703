"""A trajectory file kept as a saved session: read, checked, and written by the store's own
writer in one transaction, so a refused file leaves nothing behind.

The session is marked with where it came from (`sessions.origin_*`: the file's name, never its
folder; its format; when; the digest of its bytes). The same bytes imported again give the
session made the first time.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rlm_desktop import ids
from rlm_desktop.engine.context import ContextDocument
from rlm_desktop.engine.run import new_run_id
from rlm_desktop.importing import dspy, ours, reference
from rlm_desktop.importing.detect import detect
from rlm_desktop.importing.reading import MAX_BYTES, Entry, RawFile, Refusal, read_file
from rlm_desktop.importing.to_events import to_events
from rlm_desktop.importing.trajectory import Trajectory
from rlm_desktop.store.liveness import current_writer
from rlm_desktop.store.queries import stored_lines
from rlm_desktop.store.redact import Redactor
from rlm_desktop.store.writer import SessionWriter, prepare_opening

if TYPE_CHECKING:
    from rlm_desktop.store.store import Store


@dataclass(frozen=True)
class Imported:
    """What an import made: the session, the file's format and what it could not carry."""

    session_id: str
    source: str
    """`rlm-desktop`, `rlms` or `dspy`."""
    calls: int
    turns: int
    duplicate: bool
    """True when the same file was imported before: `session_id` is that session."""
    left_out: tuple[str, ...]
    """What the file could not carry into a saved session, one line each."""


class ImportRefused(Exception):
    """A file that cannot be imported; `str()` is one line naming the file and the line."""


_READERS: dict[str, Callable[[RawFile], Trajectory]] = {
    "rlm-desktop": lambda raw: ours.read(raw.entries),
    "rlms": lambda raw: reference.read(raw.entries),
    "dspy": lambda raw: dspy.read(*dspy.steps_of(raw.entries, raw.whole_document)),
}


def import_trajectory(store: Store, path: Path, *, max_bytes: int = MAX_BYTES) -> Imported:
    """Keep the trajectory in `path` as a read-only session of `store`.

    Raises `ImportRefused` (one line) for a file that cannot be read or is not a trajectory in
    a format the app reads; nothing of it is kept then. A database that cannot be written
    raises the store's own errors.
    """
    name = path.name
    try:
        raw = read_file(path, max_bytes)
        source = detect(raw)
        earlier = _imported_before(store, raw.sha256)
        if earlier is not None:
            return earlier
        trajectory = _read(source, raw)
    except Refusal as refusal:
        where = f"line {refusal.line}: " if refusal.line is not None else ""
        raise ImportRefused(f"{ids.shown(name)[1:-1]}: {where}{refusal.message}") from None
    except OSError as error:
        raise ImportRefused(f"{name}: cannot be read: {error.strerror or error}") from None
    session_id = new_run_id()
    while _taken(store, session_id):
        session_id = new_run_id()
    _write(store, session_id, trajectory, name, raw.sha256)
    calls = trajectory.calls()
    return Imported(
        session_id, source, len(calls), sum(len(call.turns) for call in calls),
        duplicate=False, left_out=tuple(trajectory.left_out),
    )  # fmt: skip


def _read(source: str, raw: RawFile) -> Trajectory:
    try:
        return _READERS[source](raw)
    except RecursionError:
        raise Refusal(None, "nests its calls too deeply to be a run") from None
    except Refusal:
        raise
    except (TypeError, ValueError, KeyError, AttributeError, IndexError) as error:
        line = max((entry.line for entry in raw.entries), default=None)
        raise Refusal(line, f"is not in the shape of its format ({type(error).__name__})") from None


def _write(store: Store, session_id: str, trajectory: Trajectory, name: str, digest: str) -> None:
    redactor = Redactor.for_run()
    documents = [
        ContextDocument(name=d.name, text=d.text, path="", tokens=d.tokens, type=d.type or "")
        for d in trajectory.documents if d.text is not None
    ]  # fmt: skip
    opening = prepare_opening(session_id, documents, redactor, current_writer())
    opening.session.update(
        origin_name=name, origin_format=trajectory.source, imported_at=time.time(),
        origin_sha256=digest, origin_left_out=json.dumps(list(trajectory.left_out)),
    )  # fmt: skip
    events = to_events(trajectory, session_id, time.time())
    with store.transaction() as connection:
        writer = SessionWriter(connection, session_id, redactor)
        writer.open(opening)
        writer.write(events)


def _taken(store: Store, session_id: str) -> bool:
    with store.lock:
        found = store.db.execute("SELECT 1 FROM sessions WHERE id = ?", [session_id])
        return found.fetchone() is not None


def _imported_before(store: Store, digest: str) -> Imported | None:
    """The session these bytes made before, if any (a duplicate)."""
    with store.lock:
        row = store.db.execute(
            "SELECT s.id, s.origin_format, (SELECT count(*) FROM calls c WHERE c.session_id ="
            " s.id), (SELECT count(*) FROM turns t WHERE t.session_id = s.id), s.origin_left_out"
            " FROM sessions s WHERE s.origin_sha256 = ? ORDER BY s.imported_at LIMIT 1",
            [digest],
        ).fetchone()
    if row is None:
        return None
    return Imported(
        str(row[0]), str(row[1]), int(row[2]), int(row[3]),
        duplicate=True, left_out=tuple(stored_lines(row[4])),
    )  # fmt: skip


__all__ = ["Entry", "ImportRefused", "Imported", "import_trajectory"]
