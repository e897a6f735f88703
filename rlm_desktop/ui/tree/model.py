"""`QAbstractItemModel` over the plain-Python `CallTree`.

The tree's children lists only grow, so the adapter shows a prefix of each list: `_shown[node]`
rows. After a batch of events has been folded into the tree, `apply` makes up the difference
with one `beginInsertRows` per parent (parents before children) and one `dataChanged` per run of
changed siblings, which keeps views smooth with thousands of calls.

Each insertion makes Qt's tree view lay out all its rows again, so under a parent that already
shows `PACED_ROWS` rows, new rows are shown at most every `PACE_MS` (all at once when the run
ends). A call asked for by index (selected, expanded, found) is shown at once.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence

from PySide6.QtCore import (
    QAbstractItemModel,
    QModelIndex,
    QObject,
    Qt,
    Signal,
)
from PySide6.QtGui import QColor

from rlm_desktop.engine.events import Event
from rlm_desktop.review.call_tree import CallNode, CallTree, Changes
from rlm_desktop.ui.appearance.theme import status_icon, tone_color, warning_icon
from rlm_desktop.ui.shared.indexes import Index
from rlm_desktop.ui.shared.pacer import Pacer
from rlm_desktop.ui.tree.columns import COLUMNS, Column

PACED_ROWS = 200
PACE_MS = 250
RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
NODE_ROLE = Qt.ItemDataRole.UserRole + 1
_ROLES = frozenset(
    {
        Qt.ItemDataRole.DisplayRole,
        Qt.ItemDataRole.DecorationRole,
        Qt.ItemDataRole.ForegroundRole,
        Qt.ItemDataRole.TextAlignmentRole,
        Qt.ItemDataRole.ToolTipRole,
        NODE_ROLE,
    }
)


class CallTreeModel(QAbstractItemModel):
    """An item model over a `CallTree`; feed it event batches with `apply_events`."""

    changed = Signal(object)
    """Emitted with the `Changes` record after every batch."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.tree = CallTree()
        self._shown: dict[CallNode | None, int] = {}
        self._waiting: set[CallNode | None] = set()
        self._pacer = Pacer(self._show_waiting, PACE_MS, self)

    def reset(self) -> None:
        """Start over with an empty tree (a new run or a newly opened session)."""
        self.beginResetModel()
        self.tree = CallTree()
        self._shown = {}
        self._waiting = set()
        self._pacer.cancel()
        self.endResetModel()

    @property
    def rows_waiting(self) -> int:
        """Calls in the tree whose rows wait for the next paced insertion."""
        return sum(len(self.tree.children_of(p)) - self._shown.get(p, 0) for p in self._waiting)

    def apply_events(self, events: Sequence[Event]) -> Changes:
        """Fold a batch of events into the tree and tell the views what changed."""
        return self._publish(self.tree.apply(events))

    def close_unfinished(self) -> Changes:
        """Show the calls of a cut-off saved run as interrupted instead of running."""
        return self._publish(self.tree.close_unfinished())

    def _publish(self, changes: Changes) -> Changes:
        self._insert_rows(changes)
        self._emit_updates(changes)
        self.changed.emit(changes)
        return changes

    def _insert_rows(self, changes: Changes) -> None:
        for parent in _by_level({node.parent for node in changes.added}):
            if self._shown.get(parent, 0) >= PACED_ROWS:
                self._waiting.add(parent)
            else:
                self._show_children(parent)
        if not self._waiting:
            return
        if self.tree.run.finished is not None or self.tree.run.closed:
            self._pacer.cancel()
            self._show_waiting()
        else:
            self._pacer.request()

    def _show_waiting(self) -> None:
        waiting, self._waiting = self._waiting, set()
        for parent in _by_level(waiting):
            self._show_children(parent)

    def _show_children(self, parent: CallNode | None) -> None:
        have = self._shown.get(parent, 0)
        total = len(self.tree.children_of(parent))
        if total > have:
            parent_index = self.index_of(parent)
            self.beginInsertRows(parent_index, have, total - 1)
            self._shown[parent] = total
            self.endInsertRows()

    def _emit_updates(self, changes: Changes) -> None:
        fresh = set(changes.added)
        rows: dict[CallNode | None, list[int]] = defaultdict(list)
        for node in changes.updated:
            if node not in fresh and node.row < self._shown.get(node.parent, 0):
                rows[node.parent].append(node.row)
        last = len(COLUMNS) - 1
        for parent, members in rows.items():
            parent_index = self.index_of(parent)
            for first, final in _runs(members):
                self.dataChanged.emit(
                    self.index(first, 0, parent_index), self.index(final, last, parent_index)
                )

    def index_of(self, node: CallNode | None, column: int = 0) -> QModelIndex:
        """The index of `node` (the invisible root for None)."""
        if node is None:
            return QModelIndex()
        if node.row >= self._shown.get(node.parent, 0):
            self._waiting.discard(node.parent)
            self._show_children(node.parent)
        return self.createIndex(node.row, column, node)

    def node(self, index: Index) -> CallNode | None:
        """The call at `index`, or None for the invisible root."""
        if not index.isValid():
            return None
        node = index.internalPointer()
        return node if isinstance(node, CallNode) else None

    def index(self, row: int, column: int, parent: Index = QModelIndex()) -> QModelIndex:  # noqa: B008
        node = self.node(parent)
        children = self.tree.children_of(node)
        if 0 <= row < self._shown.get(node, 0) and 0 <= column < len(COLUMNS):
            return self.createIndex(row, column, children[row])
        return QModelIndex()

    def parent(self, index: Index = QModelIndex()) -> QModelIndex:  # type: ignore[override]  # noqa: B008
        node = self.node(index)
        if node is None or node.parent is None:
            return QModelIndex()
        return self.createIndex(node.parent.row, 0, node.parent)

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        if parent.isValid() and parent.column() > 0:
            return 0
        return self._shown.get(self.node(parent), 0)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return len(COLUMNS)

    def hasChildren(self, parent: Index = QModelIndex()) -> bool:  # noqa: B008
        return self.rowCount(parent) > 0

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> object:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section].title
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if role not in _ROLES:
            return None
        node = index.internalPointer() if index.isValid() else None
        if not isinstance(node, CallNode):
            return None
        column = COLUMNS[index.column()]
        if role == Qt.ItemDataRole.DisplayRole:
            return column.text(node, self.tree.run)
        if role == Qt.ItemDataRole.DecorationRole:
            if column.status_icon:
                return status_icon(node.status)
            if column.warning_icon and node.cell_errors:
                return warning_icon()
            return None
        if role == Qt.ItemDataRole.ForegroundRole and column.alarm and node.failed:
            return QColor(tone_color(node.status))
        if role == Qt.ItemDataRole.TextAlignmentRole and column.numeric:
            return RIGHT
        if role == Qt.ItemDataRole.ToolTipRole:
            return _tooltip(node, column)
        if role == NODE_ROLE:
            return node
        return None

    def find_next(
        self, start: CallNode | None, predicate: Callable[[CallNode], bool]
    ) -> CallNode | None:
        """The first node after `start` in display order (wrapping) that satisfies `predicate`."""
        order = list(self.tree.walk())
        if not order:
            return None
        begin = order.index(start) + 1 if start in order else 0
        for node in order[begin:] + order[:begin]:
            if predicate(node):
                return node
        return None


def _tooltip(node: CallNode, column: Column) -> str | None:
    """The column's own tooltip, else the end of the call's error, if any."""
    tip = column.tooltip(node) if column.tooltip is not None else None
    if tip is not None:
        return tip
    return node.error[-500:] if node.error else None


def _by_level(parents: set[CallNode | None]) -> list[CallNode | None]:
    """Parents before their children (None, the invisible root, first)."""
    return sorted(parents, key=lambda p: -1 if p is None else p.level)


def _runs(rows: list[int]) -> list[tuple[int, int]]:
    """Sorted rows as (first, last) runs of consecutive numbers: views repaint only those."""
    runs: list[tuple[int, int]] = []
    for row in sorted(rows):
        if runs and row <= runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], max(row, runs[-1][1]))
        else:
            runs.append((row, row))
    return runs
