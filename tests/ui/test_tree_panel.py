"""The tree panel: auto-selection, filter, expand/collapse all and "next error"."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from rlm_desktop.engine import events as ev
from rlm_desktop.ui.tree.model import CallTreeModel
from rlm_desktop.ui.tree.panel import TreePanel
from tests.synthetic_events import failed_call
from tests.ui.synthetic import rlm_call_start, synthetic_run


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
    qtbot.waitUntil(lambda: panel.proxy is not None, timeout=2000)
    view_model = panel.view.model()
    assert view_model.rowCount() == 1
    root_index = view_model.index(0, 0)
    assert view_model.rowCount(root_index) == 1
    assert panel.selected() is root
    panel.filter.clear()
    qtbot.waitUntil(lambda: panel.proxy is None, timeout=2000)
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
