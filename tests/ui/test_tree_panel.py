"""The tree panel: auto-selection, filter, expand/collapse all and "next error"."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QModelIndex, QObject, QPoint, QPointF, QRect, Qt
from PySide6.QtGui import QPaintEvent, QWheelEvent
from PySide6.QtWidgets import QApplication, QWidget
from pytestqt.qtbot import QtBot

from rlm_desktop.engine import events as ev
from rlm_desktop.ui.tree.columns import COLUMNS
from rlm_desktop.ui.tree.model import NODE_ROLE, CallTreeModel
from rlm_desktop.ui.tree.panel import TreePanel
from tests.synthetic_events import failed_call
from tests.ui.synthetic import llm_call, rlm_call_end, rlm_call_start, synthetic_run


def _panel(qtbot: QtBot) -> TreePanel:
    panel = TreePanel(CallTreeModel())
    qtbot.addWidget(panel)
    panel.resize(900, 600)
    panel.show()
    return panel


def _failed(run_id: str, parent: str, call_id: str, model: str) -> list[ev.Event]:
    return failed_call(run_id, call_id, parent, "RateLimitError: slow down", depth=2, model=model)


def test_root_is_selected_and_expanded(qtbot: QtBot) -> None:
    panel = _panel(qtbot)
    selected: list[object] = []
    panel.call_selected.connect(selected.append)
    panel.model.apply_events(list(synthetic_run(fanout=3)))
    root = panel.model.tree.root
    assert panel.selected() is root
    assert selected[-1] is root
    assert panel.view.isExpanded(panel.proxy_index(root))  # type: ignore[arg-type]


def test_filter_shows_matches_with_their_ancestors_then_clears(qtbot: QtBot) -> None:
    panel = _panel(qtbot)
    events = list(synthetic_run(fanout=3))
    panel.model.apply_events(events)
    root = panel.model.tree.root
    assert root is not None
    panel.model.apply_events(_failed("run-1", root.call_id, "odd-one", "anthropic/claude-x"))
    panel.filter.setText("claude")
    qtbot.waitUntil(lambda: panel.proxy is not None, timeout=10_000)
    view_model = panel.view.model()
    assert view_model.rowCount() == 1
    root_index = view_model.index(0, 0)
    assert view_model.rowCount(root_index) == 1
    assert panel.selected() is root
    panel.filter.clear()
    qtbot.waitUntil(lambda: panel.proxy is None, timeout=10_000)
    assert panel.view.model() is panel.model
    assert panel.model.rowCount(panel.model.index_of(root)) == 5
    assert panel.selected() is root


def test_next_error_walks_failed_calls_even_when_filtered_out(qtbot: QtBot) -> None:
    panel = _panel(qtbot)
    root_id, opening = rlm_call_start("r", None, 1, 1.0)
    panel.model.apply_events(opening)
    child_id, child = rlm_call_start("r", root_id, 2, 2.0)
    panel.model.apply_events(child)
    panel.model.apply_events(_failed("r", child_id, "bad-1", "m"))
    panel.model.apply_events(_failed("r", root_id, "bad-2", "m"))
    panel.collapse_all()
    first = panel.next_error()
    assert first is not None
    assert first.call_id == "bad-1"
    assert panel.selected() is first
    assert panel.view.isExpanded(panel.proxy_index(panel.model.tree.nodes[child_id]))
    panel.filter.setText("no such call")
    panel._apply_filter()
    second = panel.next_error()
    assert second is not None
    assert second.call_id == "bad-2"
    assert panel.selected() is second
    assert panel.filter.text() == ""


def test_expand_and_collapse_all(qtbot: QtBot) -> None:
    panel = _panel(qtbot)
    panel.model.apply_events(list(synthetic_run(fanout=2)))
    root = panel.model.tree.root
    assert root is not None
    child = root.children[-1]
    panel.collapse_all()
    assert panel.view.isExpanded(panel.proxy_index(root))
    assert not panel.view.isExpanded(panel.proxy_index(child))
    panel.expand_all()
    assert panel.view.isExpanded(panel.proxy_index(child))


def _rows(panel: TreePanel) -> list[str]:
    """The call ids the view shows, depth first."""
    shown: list[str] = []
    view_model = panel.view.model()

    def walk(parent: QModelIndex) -> None:
        for row in range(view_model.rowCount(parent)):
            index = view_model.index(row, 0, parent)
            node = view_model.data(index, NODE_ROLE)
            shown.append(node.call_id)
            walk(index)

    walk(QModelIndex())
    return shown


def test_filter_searches_code_output_and_errors_and_counts_matches(qtbot: QtBot) -> None:
    panel = _panel(qtbot)
    root_id, opening = rlm_call_start("r", None, 1, 1.0)
    panel.model.apply_events(opening)
    child_id, child = rlm_call_start("r", root_id, 2, 2.0, prompt="Dig into part 0")
    panel.model.apply_events(child)
    panel.model.apply_events(llm_call("r", child_id, 3, 3.0, 5))
    panel.model.apply_events(
        rlm_call_end("r", child_id, 4.0, "42", error="Traceback\nKeyError: 'payments'")
    )
    panel.filter.setText("keyerror")
    qtbot.waitUntil(lambda: panel.proxy is not None, timeout=10_000)
    assert _rows(panel) == [root_id, child_id]
    assert panel.matches.text() == "1 match"
    panel.filter.setText("llm_query_batched")
    qtbot.waitUntil(lambda: panel.matches.text() == "2 matches", timeout=10_000)
    assert _rows(panel) == [root_id, child_id]
    panel.filter.setText("no call says this")
    qtbot.waitUntil(lambda: panel.matches.text() == "no matches", timeout=10_000)
    assert _rows(panel) == []
    assert panel.matches.isVisible()
    panel.filter.clear()
    qtbot.waitUntil(lambda: panel.proxy is None, timeout=10_000)
    assert not panel.matches.isVisible()


def test_filter_follows_a_live_run(qtbot: QtBot) -> None:
    panel = _panel(qtbot)
    root_id, opening = rlm_call_start("r", None, 1, 1.0)
    panel.model.apply_events(opening)
    panel.filter.setText("summary 7")
    qtbot.waitUntil(lambda: panel.matches.text() == "no matches", timeout=10_000)
    sub = llm_call("r", root_id, 2, 2.0, 7)
    panel.model.apply_events(sub[:1])
    assert _rows(panel) == []
    panel.model.apply_events(sub[1:])
    assert _rows(panel) == [root_id, sub[0].call_id]  # type: ignore[attr-defined]
    assert panel.matches.text() == "1 match"
    panel.model.reset()
    assert _rows(panel) == []
    assert panel.proxy is not None
    assert panel.proxy.matches() == 0


def test_next_error_stops_at_a_call_whose_code_raised(qtbot: QtBot) -> None:
    panel = _panel(qtbot)
    reached: list[object] = []
    panel.error_reached.connect(reached.append)
    panel.model.apply_events(list(synthetic_run(fanout=2)))
    assert panel.next_error() is None
    root_id, opening = rlm_call_start("r", None, 1, 10.0)
    panel.model.apply_events(opening)
    panel.model.apply_events(rlm_call_end("r", root_id, 11.0, "42", error="NameError: x"))
    raised = panel.model.tree.nodes[root_id]
    assert raised.status == "ok"
    assert panel.next_error() is raised
    assert panel.selected() is raised
    assert reached == [raised]


def test_the_call_column_stays_in_place_when_scrolling_sideways(qtbot: QtBot) -> None:
    panel = _panel(qtbot)
    panel.resize(500, 300)
    panel.model.apply_events(list(synthetic_run(fanout=30)))
    view, pinned = panel.view, panel.view.pinned
    sideways, down = view.horizontalScrollBar(), view.verticalScrollBar()
    qtbot.waitUntil(lambda: sideways.maximum() > 0 and down.maximum() > 0, timeout=10_000)
    assert not view.is_pinned
    assert pinned.isHidden()
    root = panel.model.tree.root
    assert root is not None
    child = root.children[-1]
    assert view.isExpanded(panel.proxy_index(child))

    sideways.setValue(sideways.maximum())
    assert view.is_pinned
    assert pinned.isVisible()
    assert (pinned.x(), pinned.width()) == (view.frameWidth(), view.columnWidth(0))
    hidden = [pinned.isColumnHidden(c) for c in range(len(COLUMNS))]
    assert hidden == [False] + [True] * (len(COLUMNS) - 1)
    assert pinned.selectionModel() is view.selectionModel()
    assert pinned.isExpanded(panel.proxy_index(child)), "expanded rows are copied over"
    late = llm_call("run-1", root.call_id, 1, 9.0, 77)
    panel.model.apply_events(late)
    row = panel.model.index_of(panel.model.tree.nodes[late[0].call_id])  # type: ignore[attr-defined]
    last = row.siblingAtColumn(len(COLUMNS) - 1)
    qtbot.waitUntil(lambda: view.visualRect(last).height() > 0, timeout=10_000)
    assert view.visualRect(last).height() == pinned.visualRect(row).height(), "rows line up"

    _wheel_down(pinned.viewport())
    assert down.value() > 0
    qtbot.waitUntil(lambda: pinned.verticalScrollBar().value() == down.value(), timeout=10_000)

    panel.collapse_all()
    assert not pinned.isExpanded(panel.proxy_index(child))
    view.expand(panel.proxy_index(child))
    assert pinned.isExpanded(panel.proxy_index(child))
    pinned.collapse(panel.proxy_index(child))
    assert not view.isExpanded(panel.proxy_index(child))
    held = sideways.value()
    assert held > 0
    assert panel.select(child)
    assert sideways.value() == held, "selecting keeps the sideways scroll"
    view.header().resizeSection(0, 222)
    assert pinned.columnWidth(0) == pinned.width() == 222

    sideways.setValue(0)
    assert not view.is_pinned
    assert pinned.isHidden()


def _wheel_down(widget: QWidget) -> None:
    pos = QPointF(widget.rect().center())
    QApplication.sendEvent(
        widget,
        QWheelEvent(
            pos,
            QPointF(widget.mapToGlobal(pos.toPoint())),
            QPoint(0, 0),
            QPoint(0, -120),
            Qt.MouseButton.NoButton,
            Qt.KeyboardModifier.NoModifier,
            Qt.ScrollPhase.NoScrollPhase,
            False,
        ),
    )


class _Paints(QObject):
    """Records the rectangles a widget is asked to paint."""

    def __init__(self) -> None:
        super().__init__()
        self.rects: list[QRect] = []

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if isinstance(event, QPaintEvent):
            self.rects.append(event.rect())
        return False


def test_running_clocks_are_repainted_where_they_show(qtbot: QtBot) -> None:
    panel = _panel(qtbot)
    root_id, opening = rlm_call_start("run-1", None, 1, 1.0)
    panel.model.apply_events(opening)
    qtbot.waitUntil(lambda: panel.selected() is not None, timeout=10_000)
    viewport = panel.view.viewport()
    paints = _Paints()
    viewport.installEventFilter(paints)
    QApplication.processEvents()
    paints.rects.clear()
    panel.repaint_clocks()
    qtbot.waitUntil(lambda: bool(paints.rects), timeout=10_000)
    time = next(n for n, column in enumerate(COLUMNS) if column.title == "Time")
    header = panel.view.header()
    left = header.sectionViewportPosition(time)
    clock = QRect(left, 0, header.sectionSize(time), viewport.height())
    root_row = panel.view.visualRect(panel.model.index_of(panel.model.tree.nodes[root_id], time))
    assert any(rect.contains(root_row) for rect in paints.rects), "the clock's cell is repainted"
    assert all(clock.contains(rect) for rect in paints.rects), "and only the clock column"
    viewport.removeEventFilter(paints)


def test_a_narrowed_tree_keeps_the_status_beside_the_call_column(qtbot: QtBot) -> None:
    panel = _panel(qtbot)
    panel.model.apply_events(list(synthetic_run(fanout=3)))
    view = panel.view
    view.setColumnWidth(0, 300)
    panel.resize(420, 300)
    qtbot.waitUntil(lambda: view.viewport().width() < 420)
    status = next(i for i, column in enumerate(COLUMNS) if column.title == "Status")
    right = view.columnViewportPosition(status) + view.columnWidth(status)
    assert view.columnWidth(0) < 300
    assert right <= view.viewport().width()  # the status is in sight, unscrolled
