"""The timeline's layout over sessions the real engine recorded: a concurrent fan-out overlaps in
time, a sequential loop does not; cells sit inside their call's bar; rows follow the tree."""

from __future__ import annotations

from rlm_desktop.review.call_tree import CallTree
from rlm_desktop.review.timeline import BAR_HEIGHT, Bar, CellBar, layout
from tests.review.recorded_runs import FANOUT, LOOP, Script, record, stored_events


async def laid_out(script: Script) -> tuple[CallTree, list[Bar], list[Bar]]:
    """The session's tree rebuilt from the store, its bars, and the bars of the sub-calls."""
    recorded = await record(script)
    tree = CallTree()
    tree.apply(stored_events(recorded.session_id))
    timeline = layout(tree)
    subs = [bar for bar in timeline.bars if bar.node.parent is not None]
    return tree, timeline.bars, subs


async def test_a_concurrent_fan_out_overlaps_in_time() -> None:
    _tree, _bars, subs = await laid_out(FANOUT)
    assert len(subs) == 4
    assert max(bar.start for bar in subs) < min(bar.end for bar in subs)


async def test_a_sequential_loop_is_stacked_one_after_another() -> None:
    _tree, _bars, subs = await laid_out(LOOP)
    assert len(subs) == 3
    ordered = sorted(subs, key=lambda bar: bar.start)
    for earlier, later in zip(ordered, ordered[1:], strict=False):
        assert earlier.end <= later.start


async def test_rows_follow_the_tree_and_bars_span_each_call() -> None:
    tree, bars, subs = await laid_out(FANOUT)
    assert [bar.node for bar in bars] == list(tree.walk())
    assert [bar.row for bar in bars] == list(range(len(bars)))
    root = bars[0]
    assert root.start >= 0.0
    assert tree.run.started_ts is not None
    for bar in bars:
        assert bar.node.ended_ts is not None
        assert bar.start == bar.node.started_ts - tree.run.started_ts
        assert bar.end == bar.node.ended_ts - tree.run.started_ts
        assert root.start <= bar.start <= bar.end <= root.end
    assert all(bar.kind == "llm" and bar.tone == "ok" for bar in subs)


async def test_cells_sit_inside_their_calls_bar() -> None:
    recorded = await record(FANOUT)
    tree = CallTree()
    tree.apply(stored_events(recorded.session_id))
    timeline = layout(tree)
    root = timeline.bars[0]
    assert tree.root is not None
    assert len(timeline.cells) == sum(len(t.cells) for t in tree.root.turns) == 2
    for cell in timeline.cells:
        assert (cell.call_id, cell.row) == (root.node.call_id, root.row)
        assert root.start <= cell.start < cell.end <= root.end
        assert root.top < cell.top < cell.top + 0.4 < root.top + BAR_HEIGHT


async def test_a_point_finds_its_cell_or_bar_and_says_what_it_cost() -> None:
    recorded = await record(FANOUT)
    tree = CallTree()
    tree.apply(stored_events(recorded.session_id))
    timeline = layout(tree)
    sub = timeline.bars[1]
    middle = (sub.start + sub.end) / 2
    assert timeline.hit(middle, sub.row) is sub
    assert timeline.hit(middle, sub.row + BAR_HEIGHT / 2 + 0.05) is None
    assert timeline.hit(sub.end + 1.0, sub.row) is None
    assert timeline.hit(sub.end + 1.0, sub.row, slack=1.5) is sub
    text = sub.describe()
    node = sub.node
    assert f"{node.input_tokens:,} in, {node.output_tokens:,} out" in text
    assert node.cost_text in text
    assert "latency" in text
    cell = timeline.cells[0]
    found = timeline.hit((cell.start + cell.end) / 2, cell.row)
    assert isinstance(found, CellBar)
    assert "Cell 1 of turn 1" in found.describe()


async def test_a_call_still_running_ends_at_the_runs_clock() -> None:
    recorded = await record(LOOP)
    events = stored_events(recorded.session_id)
    tree = CallTree()
    first_sub = next(i for i, e in enumerate(events) if getattr(e, "parent_id", None))
    tree.apply(events[: first_sub + 1])
    assert tree.run.started_ts is not None
    now = events[first_sub].ts + 2.0
    bar = layout(tree, now=now).bars[-1]
    assert bar.node.running
    assert bar.end == now - tree.run.started_ts
