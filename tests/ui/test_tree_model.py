"""The call tree item model, fed in batches, stays a valid Qt model and shows the tree."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtTest import QAbstractItemModelTester
from pytestqt.qtbot import QtBot

from rlm_desktop.engine import events as ev
from rlm_desktop.ui.bridge import EventBridge
from rlm_desktop.ui.theme import colors
from rlm_desktop.ui.tree.columns import COLUMNS
from rlm_desktop.ui.tree.model import NODE_ROLE, CallTreeModel
from tests.synthetic_events import call_finished, call_started, failed_call
from tests.ui.synthetic import llm_call, rlm_call_end, rlm_call_start, synthetic_run


def _column(title: str) -> int:
    return next(number for number, column in enumerate(COLUMNS) if column.title == title)


def _tester(model: CallTreeModel) -> QAbstractItemModelTester:
    return QAbstractItemModelTester(model, QAbstractItemModelTester.FailureReportingMode.Fatal)


def test_batches_build_the_nested_tree(qapp: object) -> None:
    model = CallTreeModel()
    tester = _tester(model)
    events = list(synthetic_run(fanout=5))
    for start in range(0, len(events), 7):
        model.apply_events(events[start : start + 7])
    assert model.rowCount() == 1
    root = model.index(0, 0)
    assert model.rowCount(root) == 6
    child = model.index(5, 0, root)
    assert model.data(child).startswith("RLM ")
    grandchild = model.index(0, 0, child)
    assert model.data(grandchild).startswith("LLM ")
    assert model.parent(grandchild) == child
    assert model.data(model.index(0, _column("Status"), root)) == "ok"
    assert model.data(model.index(0, _column("In"), root)) == "100"
    assert "7 sub" in model.data(model.index(0, _column("Subtree")))
    assert model.data(root, NODE_ROLE) is model.tree.root
    del tester


def test_updates_emit_one_ranged_signal_per_parent(qapp: object) -> None:
    model = CallTreeModel()
    root_id, opening = rlm_call_start("r", None, 0, 1.0)
    model.apply_events(opening)
    calls = [llm_call("r", root_id, 1, 2.0, n) for n in range(50)]
    model.apply_events([c[0] for c in calls])
    assert model.rowCount(model.index(0, 0)) == 50
    seen: list[tuple[QModelIndex, QModelIndex]] = []
    model.dataChanged.connect(lambda a, b, _roles=None: seen.append((a, b)))
    model.apply_events([e for c in calls for e in c[1:]])
    child_ranges = [(a.row(), b.row()) for a, b in seen if a.parent().isValid()]
    assert child_ranges == [(0, 49)]
    assert len(seen) == 2


def test_bridge_coalesces_events_into_batches(qtbot: QtBot) -> None:
    bridge = EventBridge(interval_ms=30)
    batches: list[list[ev.Event]] = []
    bridge.batch.connect(batches.append)
    for event in synthetic_run(fanout=20):
        bridge.push(event)
    assert batches == []
    qtbot.waitUntil(lambda: bool(batches), timeout=2000)
    assert len(batches) == 1
    assert isinstance(batches[0][0], ev.RunStarted)
    assert bridge.pending() == 0


def test_find_next_wraps_in_display_order(qapp: object) -> None:
    model = CallTreeModel()
    root_id, opening = rlm_call_start("r", None, 0, 1.0)
    model.apply_events(opening)
    for call_id in ("bad-1", "bad-2"):
        model.apply_events(failed_call("r", call_id, root_id, "boom"))
    first = model.find_next(None, lambda n: n.failed)
    assert first is not None
    assert first.call_id == "bad-1"
    second = model.find_next(first, lambda n: n.failed)
    assert second is not None
    assert second.call_id == "bad-2"
    assert model.find_next(second, lambda n: n.failed) is first
    index = model.index_of(first, _column("Status"))
    assert model.data(index, Qt.ItemDataRole.ForegroundRole) is not None


def test_columns_show_what_is_known_and_repaint_the_clock(qapp: object) -> None:
    model = CallTreeModel()
    model.apply_events(
        [call_started("r", "root", None, kind="rlm", depth=0, prompt="Why?", ts=1.0)]
    )
    model.apply_events(failed_call("r", "bad", "root", "RateLimitError: slow down"))
    root, bad = model.tree.nodes["root"], model.tree.nodes["bad"]
    cost = model.index_of(root, _column("Cost"))
    assert model.data(cost) == "", "no usage is known before the first reply"
    assert model.data(cost, Qt.ItemDataRole.TextAlignmentRole) is not None
    assert model.data(model.index_of(root, _column("Model")), Qt.ItemDataRole.ToolTipRole) is None
    assert "slow down" in model.data(
        model.index_of(bad, _column("Status")), Qt.ItemDataRole.ToolTipRole
    )
    assert "1 failed" in model.data(
        model.index_of(root, _column("Subtree")), Qt.ItemDataRole.ToolTipRole
    )
    repainted: list[tuple[int, int]] = []
    model.dataChanged.connect(lambda a, b, _roles=None: repainted.append((a.column(), b.column())))
    model.refresh_running()
    assert repainted == [(_column("Time"), _column("Time"))]


def test_rows_say_what_each_call_was_asked(qapp: object) -> None:
    model = CallTreeModel()
    model.apply_events(list(synthetic_run(fanout=1)))
    root = model.tree.root
    assert root is not None
    call = _column("Call")
    assert model.data(model.index_of(root, call)).endswith("What is this about?")
    leaf = root.children[0]
    assert "Summarise part 0" in model.data(model.index_of(leaf, call))
    assert model.data(model.index_of(leaf, _column("Result"))) == "summary 0"


def test_a_call_whose_code_raised_carries_a_warning_mark(qapp: object) -> None:
    model = CallTreeModel()
    root_id, opening = rlm_call_start("r", None, 1, 1.0)
    model.apply_events(opening)
    status = model.index_of(model.tree.nodes[root_id], _column("Status"))
    assert model.data(status, Qt.ItemDataRole.DecorationRole) is None
    repainted: list[int] = []
    model.dataChanged.connect(lambda a, _b, _roles=None: repainted.append(a.row()))
    model.apply_events(rlm_call_end("r", root_id, 2.0, "42", error="ZeroDivisionError"))
    assert repainted
    assert model.data(status) == "ok"
    assert model.data(status, Qt.ItemDataRole.DecorationRole) is not None
    assert "1 cell raised an exception (turn 1)" in model.data(status, Qt.ItemDataRole.ToolTipRole)


def test_endings_are_coloured_by_what_happened(qapp: object) -> None:
    model = CallTreeModel()
    root_id, opening = rlm_call_start("r", None, 1, 1.0)
    model.apply_events(opening)
    model.apply_events(failed_call("r", "bad", root_id, "boom"))
    model.apply_events(
        [
            call_started("r", "cut", root_id),
            call_finished("r", "cut", status="cancelled", error="cancelled"),
        ]
    )
    colour = {
        call_id: model.data(
            model.index_of(model.tree.nodes[call_id], _column("Status")),
            Qt.ItemDataRole.ForegroundRole,
        ).name()
        for call_id in ("bad", "cut")
    }
    assert colour == {"bad": colors().error, "cut": colors().muted}
