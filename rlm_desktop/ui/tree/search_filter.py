"""The tree's filter: a proxy that shows the calls a `CallSearch` found and their ancestors.

The search itself is plain Python over the calls' full texts (`rlm_desktop.review.search`); the
proxy only looks each row's call up in its set, so filtering stays cheap on big trees.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QSortFilterProxyModel

from rlm_desktop.review.call_tree import Changes
from rlm_desktop.review.search import CallSearch
from rlm_desktop.ui.shared.indexes import Index
from rlm_desktop.ui.tree.model import CallTreeModel


class SearchFilter(QSortFilterProxyModel):
    """Shows the calls of `model` that mention a text, in their place in the tree."""

    def __init__(self, model: CallTreeModel, text: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.calls = model
        self.search = CallSearch(model.tree, text)
        self.setSourceModel(model)
        model.modelReset.connect(self._restart)

    def _restart(self) -> None:
        self.search = CallSearch(self.calls.tree, self.search.text)

    def release(self) -> None:
        """Let go of the source model, before the proxy is thrown away."""
        self.calls.modelReset.disconnect(self._restart)
        self.setSourceModel(None)  # type: ignore[arg-type]

    def set_text(self, text: str) -> None:
        """Search for `text` instead."""
        if text == self.search.text:
            return
        self.beginFilterChange()
        self.search = CallSearch(self.calls.tree, text)
        self.endFilterChange(QSortFilterProxyModel.Direction.Rows)

    def follow(self, changes: Changes) -> bool:
        """Test again the calls a batch of events changed, and show or hide rows to match;
        True when the rows shown changed."""
        if not self.search.update(changes):
            return False
        self.beginFilterChange()
        self.endFilterChange(QSortFilterProxyModel.Direction.Rows)
        return True

    def matches(self) -> int:
        """How many calls mention the text."""
        return len(self.search.matched)

    def filterAcceptsRow(self, row: int, parent: Index) -> bool:
        """Accept the calls found and their ancestors."""
        node = self.calls.node(self.calls.index(row, 0, parent))
        return node is not None and node in self.search
