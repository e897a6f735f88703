"""The call tree item model, fed in batches, stays a valid Qt model and shows the tree."""

from __future__ import annotations

import random

from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtTest import QAbstractItemModelTester
from pytestqt.qtbot import QtBot

from rlm_desktop.engine import events as ev
from rlm_desktop.ui.appearance.theme import colors
from rlm_desktop.ui.bridge.events import MAX_BATCH, EventBridge
from rlm_desktop.ui.tree.columns import COLUMNS
from rlm_desktop.ui.tree.model import NODE_ROLE, PACE_MS, PACED_ROWS, CallTreeModel
from tests import synthetic_events as se
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


def test_a_burst_reaches_the_window_in_bounded_batches_in_order(qtbot: QtBot) -> None:
    bridge = EventBridge(interval_ms=30)
    batches: list[list[ev.Event]] = []
    bridge.batch.connect(batches.append)
    events = list(synthetic_run(fanout=MAX_BATCH))
    for event in events:
        bridge.push(event)
    qtbot.waitUntil(lambda: bridge.pending() == 0 and bool(batches), timeout=5000)
    assert len(batches) > 1
    assert all(len(batch) <= MAX_BATCH for batch in batches)
    assert [e for batch in batches for e in batch] == events, "nothing lost or reordered"
    for event in events:
        bridge.push(event)
    bridge.flush()
    assert batches[-1] == events, "a flush hands over everything at once"


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


def test_columns_show_what_is_known(qapp: object) -> None:
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


def _burst(run_id: str, parent_id: str, count: int) -> list[tuple[list[ev.Event], list[ev.Event]]]:
    """(start events, end events) of `count` sub-calls under `parent_id`; every 7th fails."""
    calls = []
    for n in range(count):
        call_id = f"{run_id}-{n}"
        if n % 7 == 0:
            events = failed_call(run_id, call_id, parent_id, "RateLimitError: slow down", depth=2)
        else:
            events = se.llm_call(
                run_id,
                call_id,
                parent_id,
                2,
                2.0,
                prompt=f"Summarise part {n}",
                response=f"summary {n}",
                request_id=f"{call_id}-q",
                reserved_tokens=500,
                input_tokens=100 + n,
                output_tokens=10,
                cost_usd=0.001,
                latency_s=0.5,
            )
        calls.append((events[:1], events[1:]))
    return calls


def test_a_burst_into_a_big_tree_loses_no_call(qtbot: QtBot) -> None:
    model = CallTreeModel()
    root_id, opening = rlm_call_start("burst", None, 1, 1.0)
    model.apply_events(opening)
    root = model.tree.nodes[root_id]
    count = PACED_ROWS + 300
    calls = _burst("burst", root_id, count)
    for first in range(0, count, 40):
        model.apply_events([e for start, _ in calls[first : first + 40] for e in start])
        assert model.rowCount(model.index_of(root)) <= len(root.children)
    assert model.rows_waiting > 0, "rows past PACED_ROWS wait for the pace"
    qtbot.waitUntil(lambda: model.rows_waiting == 0, timeout=5000)
    assert model.rowCount(model.index_of(root)) == count, "and come without another event"

    order = list(range(count))
    random.Random(3).shuffle(order)
    for first in range(0, count, 25):
        model.apply_events([e for n in order[first : first + 25] for e in calls[n][1]])
    model.apply_events(rlm_call_end("burst", root_id, 3.0, "done"))
    root_index = model.index_of(root)
    statuses = [model.data(model.index(row, _column("Status"), root_index)) for row in range(count)]
    assert statuses == ["error" if n % 7 == 0 else "ok" for n in range(count)]
    succeeded = [n for n in range(count) if n % 7]
    assert root.subtree.input_tokens - root.input_tokens == sum(100 + n for n in succeeded)
    assert root.subtree.calls == count + 1


def test_a_call_waiting_for_its_row_is_shown_when_asked_for(qtbot: QtBot) -> None:
    model = CallTreeModel()
    tester = _tester(model)
    root_id, opening = rlm_call_start("ask", None, 1, 1.0)
    model.apply_events(opening)
    root = model.tree.nodes[root_id]
    calls = _burst("ask", root_id, PACED_ROWS + 20)
    for first in (0, PACED_ROWS, PACED_ROWS + 10):
        model.apply_events([e for start, _ in calls[first : first + 10] for e in start])
        if first == 0:
            model.apply_events([e for start, _ in calls[10:PACED_ROWS] for e in start])
    assert model.rows_waiting == 10
    last = root.children[-1]
    index = model.index_of(last)
    assert model.node(index) is last
    assert model.rowCount(model.index_of(root)) == len(root.children)
    assert model.rows_waiting == 0
    qtbot.wait(PACE_MS * 2)
    assert model.rowCount(model.index_of(root)) == len(root.children), "the pace adds nothing twice"
    assert tester is not None
