"""The call tree's columns as one table: the item model and the panel both read it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rlm_desktop import formatting as fmt
from rlm_desktop.review.call_nodes import CallNode, RunInfo


@dataclass(frozen=True)
class Column:
    """One column: its title and width, how its text is made, and how it looks.

    `text` gets the run too, for the clock of calls still running. `tooltip` returning None (or
    no `tooltip`) shows the call's error, if any. `ticks` marks a column whose text changes
    while the call runs, so the tree panel repaints it on the clock.
    """

    title: str
    text: Callable[[CallNode, RunInfo], str]
    width: int | None = None
    """Initial width in pixels; None leaves it to the view (the last column stretches)."""
    numeric: bool = False
    """Right-aligned, as figures are."""
    alarm: bool = False
    """Painted in the colour of the call's ending when it did not end well."""
    status_icon: bool = False
    """Shows the icon of the call's status."""
    warning_icon: bool = False
    """Shows a warning mark when some of the call's code raised an exception."""
    ticks: bool = False
    tooltip: Callable[[CallNode], str | None] | None = None


def _call_text(node: CallNode, _run: RunInfo) -> str:
    return f"{node.kind.upper()} {fmt.short_id(node.call_id)}  {node.about()}"


def _made_by(node: CallNode) -> str:
    """Which of the parent's cells made the call, as a row's tooltip says it."""
    parent = node.parent
    if parent is None or not node.spawned_by:
        return ""
    return f", made by {parent.call_id}'s {node.spawned_by}"


def _status_tooltip(node: CallNode) -> str | None:
    if not node.cell_errors:
        return None
    turns = [str(t.index + 1) for t in node.turns if t.cell_errors]
    where = f"turn {turns[0]}" if len(turns) == 1 else f"turns {', '.join(turns)}"
    text = f"{fmt.plural(node.cell_errors, 'cell')} raised an exception ({where})"
    return f"{node.error[-500:]}\n\n{text}" if node.error else text


def _once_replied(figure: Callable[[CallNode], str]) -> Callable[[CallNode, RunInfo], str]:
    """Blank while the call waits for its first reply: its tokens and cost are not known yet."""

    def text(node: CallNode, _run: RunInfo) -> str:
        return "" if node.running and not node.requests_done else figure(node)

    return text


def _subtree_tooltip(node: CallNode) -> str | None:
    if not node.children:
        return None
    s = node.subtree
    return (
        f"{s.calls} calls ({s.running} running, {s.errors} failed, {s.stopped} stopped)\n"
        f"{fmt.tokens(s.input_tokens)} in, {fmt.tokens(s.output_tokens)} out\n"
        f"{fmt.cost(s.cost_usd, bool(s.unpriced), long=True)}"
    )


COLUMNS: tuple[Column, ...] = (
    Column(
        "Call",
        _call_text,
        width=300,
        alarm=True,
        status_icon=True,
        tooltip=lambda n: (
            f"{n.kind.upper()} {n.call_id}{_made_by(n)}\n{fmt.one_line(n.prompt, 500)}"
        ),
    ),
    Column("Model", lambda n, _r: fmt.model_name(n.model), width=120),
    Column(
        "Status",
        lambda n, _r: fmt.status_text(n.status),
        width=90,
        alarm=True,
        warning_icon=True,
        tooltip=_status_tooltip,
    ),
    Column("Depth", lambda n, _r: str(n.depth), width=46, numeric=True),
    Column("In", _once_replied(lambda n: fmt.tokens(n.input_tokens)), width=62, numeric=True),
    Column("Out", _once_replied(lambda n: fmt.tokens(n.output_tokens)), width=52, numeric=True),
    Column("Cost", _once_replied(lambda n: n.cost_text), width=64, numeric=True),
    Column(
        "Time",
        lambda n, run: fmt.seconds(n.duration(run.now())),
        width=58,
        numeric=True,
        ticks=True,
    ),
    Column(
        "Subtree",
        lambda n, _r: n.subtree.summary() if n.children else "",
        width=170,
        tooltip=_subtree_tooltip,
    ),
    Column("Result", lambda n, _r: n.result(), alarm=True, tooltip=lambda n: n.result() or None),
)
"""The columns in display order."""
