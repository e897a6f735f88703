"""Compressed single files in the window (#43, item 4): the documents pane loads `app.log.1.gz`
as a log under its real name, refuses a `.tar.gz` with its hint, and loads a kept `.gz` again
when the window reopens what a session was left with."""

from __future__ import annotations

import gzip
from pathlib import Path

from pytestqt.qtbot import QtBot

from tests.ui.test_documents_pane import _pane


def test_the_pane_loads_a_compressed_log_and_reloads_it_by_path(
    qtbot: QtBot, qloop: object, tmp_path: Path
) -> None:
    log = tmp_path / "app.log.1.gz"
    log.write_bytes(gzip.compress(b"2025-03-14 ERROR disk full\n"))
    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / "backup.tar.gz").write_bytes(gzip.compress(b"not really a tar"))
    (folder / "app.log.2.gz").write_bytes(gzip.compress(b"2025-03-13 INFO quiet\n"))
    pane = _pane(qtbot)
    try:
        pane.add_paths([log, folder])
        qtbot.waitUntil(lambda: not pane.loading, timeout=30_000)
        documents = pane.documents()
        assert [(d.name, d.type, d.text) for d in documents] == [
            ("app.log.1.gz", "text", "2025-03-14 ERROR disk full\n"),
            ("logs/app.log.2.gz", "text", "2025-03-13 INFO quiet\n"),
        ]
        assert pane.skipped.entries() == [
            (
                "logs/backup.tar.gz",
                "compressed archive file (.tar.gz), not a text document; "
                "extract it and load the folder",
            )
        ]
        kept = pane.kept()
        assert kept == [
            (str(log), "app.log.1.gz"),
            (str(folder / "app.log.2.gz"), "logs/app.log.2.gz"),
        ]

        pane.clear()
        pane.reload(kept)
        qtbot.waitUntil(lambda: not pane.loading, timeout=30_000)
        assert [(d.name, d.path, d.type) for d in pane.documents()] == [
            ("app.log.1.gz", log, "text"),
            ("logs/app.log.2.gz", folder / "app.log.2.gz", "text"),
        ]
    finally:
        pane.shutdown()
