"""A big folder loads with its progress in view (found, loaded, skipped, a bar once the total is
known), the window stays live meanwhile, and Cancel leaves the list as it was."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from PySide6.QtCore import QTimer
from pytestqt.qtbot import QtBot

from rlm_desktop.documents.load_progress import LoadProgress
from rlm_desktop.documents.memory_room import LIMIT_ENV
from rlm_desktop.ui.documents.model import TYPE
from tests.benchmarks.test_documents_pane_bench import plain_folder
from tests.ui.test_documents_pane import _load, _pane


class Ticks:
    """A 10 ms timer's ticks, and the longest wait between two of them."""

    def __init__(self) -> None:
        self.count, self.longest_ms = 0, 0.0
        self._last = time.perf_counter()
        self.timer = QTimer()
        self.timer.setInterval(10)
        self.timer.timeout.connect(self._tick)
        self.timer.start()

    def _tick(self) -> None:
        now = time.perf_counter()
        self.count += 1
        self.longest_ms = max(self.longest_ms, (now - self._last) * 1000)
        self._last = now


def test_4000_files_load_with_progress_advancing_and_the_loop_serviced(
    qtbot: QtBot, qloop: object, tmp_path: Path
) -> None:
    folder = plain_folder(tmp_path / "notes", 4_000)
    pane = _pane(qtbot, width=240)
    seen: list[LoadProgress] = []
    pane.load_progressed.connect(seen.append)
    ticks = Ticks()
    pane.add_paths([folder])
    assert pane.loading_bar.isVisible()
    assert pane.loading_bar.cancel_button.isVisible()
    texts: set[str] = set()
    qtbot.waitUntil(lambda: texts.add(pane.loading_bar.label.text()) or not pane.loading,
                    timeout=60_000)  # fmt: skip
    ticks.timer.stop()
    assert len(pane.documents()) == 4_000
    assert not pane.loading_bar.isVisible()
    assert len({p.read for p in seen}) >= 3, "progress did not advance in view"
    assert [p.read for p in seen] == sorted(p.read for p in seen)
    assert any(text.startswith("Loading… 4,000 found · ") for text in texts), texts
    assert ticks.count >= 20
    assert ticks.longest_ms < 1_500, f"the event loop stalled {ticks.longest_ms:.0f} ms"
    pane.shutdown()


def test_cancel_mid_load_leaves_the_list_as_it_was(
    qtbot: QtBot, qloop: object, tmp_path: Path
) -> None:
    kept = tmp_path / "kept.md"
    kept.write_text("# Kept\n", encoding="utf-8")
    pane = _pane(qtbot, width=240)
    _load(qtbot, pane, kept)
    before = pane.totals.text()
    folder = plain_folder(tmp_path / "notes", 4_000)
    changed: list[None] = []
    pane.changed.connect(lambda: changed.append(None))
    seen: list[LoadProgress] = []
    pane.load_progressed.connect(seen.append)
    pane.add_paths([folder])
    qtbot.waitUntil(lambda: any(p.read > 0 for p in seen), timeout=30_000)
    pane.loading_bar.cancel_button.click()
    assert not pane.loading  # at once, not when the thread notices
    assert not pane.loading_bar.isVisible()
    pane.shutdown()  # the thread stops at its next file
    assert seen[-1].read < 4_000
    assert [d.name for d in pane.documents()] == ["kept.md"]
    assert pane.model.rowCount() == 1
    assert len(pane.skipped) == 0
    assert pane.totals.text() == before
    assert changed == []


def test_files_that_vanish_while_a_folder_loads_are_skipped_not_fatal(
    qtbot: QtBot, qloop: object, tmp_path: Path
) -> None:
    folder = plain_folder(tmp_path / "notes", 400)
    victims = sorted(folder.rglob("note0[1-3]*.txt"))
    pane = _pane(qtbot, width=240)

    def delete(progress: LoadProgress) -> None:
        for path in victims:
            path.unlink(missing_ok=True)
        pane.load_progressed.disconnect(delete)

    pane.load_progressed.connect(delete)
    _load(qtbot, pane, folder)
    loaded = {d.path for d in pane.documents()}
    skipped = dict(pane.skipped.entries())
    survivors = set(folder.rglob("*.txt"))
    assert survivors <= loaded  # every file still there is loaded
    for path in victims:  # each gone one: read before it went, skipped, or never listed
        shown = f"notes/{path.relative_to(folder).as_posix()}"
        assert path in loaded or skipped.get(shown, "cannot read it").startswith(
            "cannot read it"
        ), shown
    assert len(loaded) + len(skipped) <= 400
    assert all(entry.ok for entry in pane.model.entries)
    pane.shutdown()


def test_a_folder_over_the_memory_limit_is_one_failed_row_and_nothing_loaded(
    qtbot: QtBot, qloop: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "reports"
    folder.mkdir()
    for number in range(30):
        (folder / f"report-{number:03}.txt").write_text(f"report {number}\n" + "x" * 100_000)
    monkeypatch.setenv(LIMIT_ENV, "2")
    pane = _pane(qtbot)

    _load(qtbot, pane, folder)

    model = pane.model
    assert model.rowCount() == 1
    shown = model.data(model.index(0, TYPE))
    assert shown.startswith("the documents weigh 2.9 MB together, over the 2.0 MB limit")
    assert pane.documents() == []
    assert "1 failed" in pane.totals.text()
