"""The waterfall of one run, laid out with no Qt: a bar per call on a shared time axis.

`layout(tree)` gives every call one row, in the tree's display order (a call's sub-calls just
below it), and a bar from its dispatch to its end (or to the run's clock while it runs), in
seconds since the run started. The cells an RLM call ran become thinner bars inside its own.
Concurrent calls show as bars that overlap in time; a sequential loop as bars one after another.
The GUI draws these bars; `Timeline.hit` says which one a point of the plot falls on.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from rlm_desktop import formatting as fmt
from rlm_desktop.review.call_tree import CallNode, CallTree

BAR_HEIGHT = 0.8
"""A call's bar, as a share of its row's height."""
CELL_HEIGHT = 0.4
"""A cell's bar inside its call's bar, as a share of the row's height."""


@dataclass(frozen=True, eq=False)
class Bar:
    """One call's bar: its `row` (0 at the top), and `start` and `end` in run seconds."""

    node: CallNode
    row: int
    start: float
    end: float

    @property
    def kind(self) -> str:
        """`rlm` or `llm`."""
        return self.node.kind

    @property
    def tone(self) -> str:
        """How the call's status reads at a glance (`formatting.status_tone`)."""
        return fmt.status_tone(self.node.status)

    @property
    def top(self) -> float:
        """The bar's upper edge (rows grow downwards)."""
        return self.row - BAR_HEIGHT / 2

    def describe(self) -> str:
        """What hovering over the bar tells: the call, its timing, tokens and cost."""
        node = self.node
        lines = [
            f"{node.kind.upper()} {fmt.short_id(node.call_id)} · {fmt.status_text(node.status)}",
            node.about(80),
            f"Started at {fmt.seconds(self.start)}, took {fmt.seconds(self.end - self.start)}"
            f" · latency {fmt.seconds(node.provider_wait_s)}"
            f" over {fmt.plural(node.requests, 'request')}",
            f"{fmt.tokens(node.input_tokens)} in, {fmt.tokens(node.output_tokens)} out"
            f" · {node.cost_text}",
        ]
        if node.children:
            lines.append(f"With its sub-calls: {node.subtree.summary()}")
        if node.error:
            lines.append(fmt.one_line(node.error, 200))
        return "\n".join(lines)


@dataclass(frozen=True)
class CellBar:
    """One executed cell, drawn inside its RLM call's bar."""

    call_id: str
    row: int
    start: float
    end: float
    turn: int
    index: int
    failed: bool

    @property
    def top(self) -> float:
        """The cell's upper edge."""
        return self.row - CELL_HEIGHT / 2

    def describe(self) -> str:
        """What hovering over the cell tells."""
        how = "raised an exception" if self.failed else "ran"
        return (
            f"Cell {self.index + 1} of turn {self.turn + 1} of {fmt.short_id(self.call_id)}"
            f" {how} in {fmt.seconds(self.end - self.start)}"
        )


@dataclass
class Timeline:
    """The bars of a run's calls (one per row) and of their cells, over `length` run seconds
    from `origin` (the wall-clock time of the run's start)."""

    bars: list[Bar] = field(default_factory=list)
    cells: list[CellBar] = field(default_factory=list)
    origin: float = 0.0
    length: float = 0.0
    _cells_by_row: dict[int, list[CellBar]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        grouped: defaultdict[int, list[CellBar]] = defaultdict(list)
        for cell in self.cells:
            grouped[cell.row].append(cell)
        self._cells_by_row = dict(grouped)

    def groups(self) -> dict[tuple[str, str], list[Bar]]:
        """The bars by (kind, tone): each group is drawn in one colour, as one item."""
        grouped: defaultdict[tuple[str, str], list[Bar]] = defaultdict(list)
        for bar in self.bars:
            grouped[(bar.kind, bar.tone)].append(bar)
        return dict(grouped)

    def row_of(self, call_id: str) -> int | None:
        """The row of the call `call_id`, if it is laid out."""
        for bar in self.bars:
            if bar.node.call_id == call_id:
                return bar.row
        return None

    def hit(self, x: float, y: float, slack: float = 0.0) -> Bar | CellBar | None:
        """The cell or else the call bar at (`x` run seconds, `y` rows), allowing `slack`
        seconds either side so that very short bars can still be pointed at."""
        row = round(y)
        if not 0 <= row < len(self.bars) or abs(y - row) > BAR_HEIGHT / 2:
            return None
        if abs(y - row) <= CELL_HEIGHT / 2:
            for cell in self._cells_by_row.get(row, []):
                if cell.start - slack <= x <= cell.end + slack:
                    return cell
        bar = self.bars[row]
        return bar if bar.start - slack <= x <= bar.end + slack else None


def layout(tree: CallTree, now: float | None = None) -> Timeline:
    """Lay out every call of `tree`; a call still running ends at `now` (the run's clock when
    not given)."""
    nodes = list(tree.walk())
    if not nodes:
        return Timeline()
    origin = tree.run.started_ts or min(node.started_ts for node in nodes)
    clock = tree.run.now() if now is None else now
    bars: list[Bar] = []
    cells: list[CellBar] = []
    for row, node in enumerate(nodes):
        end = node.ended_ts if node.ended_ts is not None else clock
        start = node.started_ts - origin
        bars.append(Bar(node, row, start, max(start, end - origin)))
        for turn in node.turns:
            for cell in turn.cells:
                finished = cell.ts - origin
                cells.append(
                    CellBar(
                        node.call_id,
                        row,
                        max(start, finished - cell.duration_s),
                        finished,
                        turn.index,
                        cell.index,
                        bool(cell.error or cell.timed_out),
                    )
                )
    length = max(bar.end for bar in bars)
    return Timeline(bars, cells, origin, length)
