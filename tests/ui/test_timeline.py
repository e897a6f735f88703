"""The timeline in the window, over sessions the real engine recorded: bars on a shared time
axis, overlapping for a concurrent fan-out and stacked for a sequential loop (read from the drawn
items), cells inside their call's bar, hover tells tokens, cost and latency, a click selects the
call in the tree and the console, and the view zooms and pans."""

from __future__ import annotations

import asyncio

import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from rlm_desktop.review.call_tree import CallNode
from rlm_desktop.ui.timeline.view import TimelineView
from rlm_desktop.ui.window.detail_tabs import TIMELINE
from rlm_desktop.ui.window.main_window import MainWindow
from rlm_desktop.ui.window.workspace import Workspace
from tests.review.recorded_runs import FANOUT, LOOP, Recorded, Script, record

Rect = tuple[float, float, float, float]


def recorded(qtbot: QtBot, script: Script) -> Recorded:
    """`script` run by the real engine and recorded, inside the window's event loop."""
    task = asyncio.ensure_future(record(script))
    qtbot.waitUntil(task.done, timeout=60_000)
    return task.result()


def timeline_of(
    window: MainWindow, qtbot: QtBot, session_id: str
) -> tuple[Workspace, TimelineView]:
    """Open the session and show its timeline."""
    assert window.open_session(session_id)
    ws = window.workspace
    if not window.timeline_action.isChecked():
        window.timeline_action.trigger()
    qtbot.waitUntil(lambda: ws.timeline.view is not None)
    view = ws.timeline.view
    assert view is not None
    qtbot.waitUntil(lambda: len(view.timeline.bars) == len(ws.model.tree))
    return ws, view


def drawn(view: TimelineView) -> list[Rect]:
    """Every call bar as drawn: (left, top, right, bottom) read back from the plot's items."""
    rects: list[Rect] = []
    for item in view.items.values():
        opts = item.opts
        rects += zip(opts["x0"], opts["y0"], opts["x1"], opts["y1"], strict=True)
    return rects


def bars_of(view: TimelineView, rows: list[int]) -> list[Rect]:
    """The drawn bars whose middle lies on one of `rows`."""
    return [r for r in drawn(view) if round((r[1] + r[3]) / 2) in rows]


def rows_of(ws: Workspace, wanted: list[CallNode]) -> list[int]:
    order = list(ws.model.tree.walk())
    return [order.index(node) for node in wanted]


def sub_calls(ws: Workspace) -> list[CallNode]:
    root = ws.model.tree.root
    assert root is not None
    return list(root.children)


def on_screen(view: TimelineView, x: float, y: float) -> QPoint:
    """Where the plot point (x, y) is on the plot's viewport."""
    scene = view.box.mapViewToScene(QPointF(x, y))
    return view.plot.mapFromScene(scene)


def test_a_fan_out_overlaps_and_a_loop_stacks(window: MainWindow, qtbot: QtBot) -> None:
    fan_out = recorded(qtbot, FANOUT)
    loop = recorded(qtbot, LOOP)

    ws, view = timeline_of(window, qtbot, fan_out.session_id)
    subs = sub_calls(ws)
    assert len(subs) == 4
    bars = bars_of(view, rows_of(ws, subs))
    assert len(bars) == 4
    assert max(left for left, _t, _r, _b in bars) < min(right for _l, _t, right, _b in bars)
    assert len(drawn(view)) == len(ws.model.tree)
    assert len(view.items) <= 2  # batched: one item per colour, not one per bar

    ws, view = timeline_of(window, qtbot, loop.session_id)
    subs = sub_calls(ws)
    assert len(subs) == 3
    bars = sorted(bars_of(view, rows_of(ws, subs)))
    assert len(bars) == 3
    for earlier, later in zip(bars, bars[1:], strict=False):
        assert earlier[2] <= later[0]
    tops = [top for _l, top, _r, _b in bars]
    assert tops == sorted(tops)
    assert len(set(tops)) == 3


def test_cells_are_drawn_inside_their_calls_bar(window: MainWindow, qtbot: QtBot) -> None:
    ws, view = timeline_of(window, qtbot, recorded(qtbot, FANOUT).session_id)
    root = ws.model.tree.root
    assert root is not None
    (bar,) = bars_of(view, rows_of(ws, [root]))
    cells = [
        cell
        for item in view.cell_items.values()
        for cell in zip(
            item.opts["x0"], item.opts["y0"], item.opts["x1"], item.opts["y1"], strict=True
        )
    ]
    assert len(cells) == sum(len(turn.cells) for turn in root.turns) == 2
    for left, top, right, bottom in cells:
        assert bar[0] <= left < right <= bar[2]
        assert bar[1] < top < bottom < bar[3]


def test_hover_tells_and_a_click_selects_the_call(window: MainWindow, qtbot: QtBot) -> None:
    ws, view = timeline_of(window, qtbot, recorded(qtbot, FANOUT).session_id)
    window.resize(1400, 900)
    qtbot.waitUntil(lambda: view.plot.height() > 200)
    view.fit()
    QApplication.processEvents()
    target = sub_calls(ws)[2]
    bar = next(b for b in view.timeline.bars if b.node is target)
    point = on_screen(view, (bar.start + bar.end) / 2, bar.row)
    qtbot.mouseMove(view.plot.viewport(), point)
    qtbot.waitUntil(lambda: view.hover_text != "")
    assert f"{target.input_tokens:,} in, {target.output_tokens:,} out" in view.hover_text
    assert target.cost_text in view.hover_text
    assert "latency" in view.hover_text

    qtbot.mouseClick(view.plot.viewport(), Qt.MouseButton.LeftButton, pos=point)
    assert ws.tree_panel.selected() is target
    assert ws.console.node is target
    assert ws.details.node is target
    assert ws.detail_tabs.currentIndex() == TIMELINE  # choosing on the timeline stays there


def test_zoom_and_pan(window: MainWindow, qtbot: QtBot) -> None:
    ws, view = timeline_of(window, qtbot, recorded(qtbot, FANOUT).session_id)
    view.fit()
    (left, right), _rows = view.visible_range()
    qtbot.mouseClick(ws.timeline.zoom_in_button, Qt.MouseButton.LeftButton)
    (zoomed_left, zoomed_right), _rows = view.visible_range()
    assert zoomed_right - zoomed_left < (right - left) * 0.6
    start = view.plot.viewport().rect().center()
    qtbot.mousePress(view.plot.viewport(), Qt.MouseButton.LeftButton, pos=start)
    for step in range(1, 11):
        qtbot.mouseMove(view.plot.viewport(), start + QPoint(10 * step, 0))
    qtbot.mouseRelease(view.plot.viewport(), Qt.MouseButton.LeftButton, pos=start + QPoint(100, 0))
    (panned_left, panned_right), _rows = view.visible_range()
    assert panned_left < zoomed_left
    assert panned_right - panned_left == pytest.approx(zoomed_right - zoomed_left)
    assert not view.followed
    qtbot.mouseClick(ws.timeline.fit_button, Qt.MouseButton.LeftButton)
    assert view.followed


def test_rows_are_labelled_with_their_calls_and_the_pane_opens_usable(
    window: MainWindow, qtbot: QtBot
) -> None:
    fan_out = recorded(qtbot, FANOUT)
    window.pages.setCurrentWidget(window.workspace)
    ws, view = timeline_of(window, qtbot, fan_out.session_id)
    ticks = view.rows_axis._tickLevels  # what the left axis was given to draw
    assert ticks is not None
    labels = dict(ticks[0])
    assert labels == {row: node.call_id for row, node in enumerate(ws.model.tree.walk())}
    assert ws.timeline.height() >= 0.8 * ws.run_splitter.height()  # the pane's whole height
