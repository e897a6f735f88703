"""The live call tree: filter box, expand/collapse all, "next error", and the tree view itself.

The view shows the item model directly; a `SearchFilter` proxy is put between them only while
the filter box has text, because a proxy re-filters on every `dataChanged` and live runs send
many of those. The filter searches the calls' full texts (prompts, replies, code, output,
errors) and says how many calls matched. The keys for these tools are the main window's View
actions.
"""

from __future__ import annotations

from PySide6.QtCore import QAbstractItemModel, QEvent, QModelIndex, QRect, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QHBoxLayout, QHeaderView, QLabel, QVBoxLayout, QWidget

from rlm_desktop import formatting as fmt
from rlm_desktop.review.call_tree import CallNode, Changes
from rlm_desktop.ui.appearance.theme import repolish
from rlm_desktop.ui.shared.widgets import search_box, tool_button, when_settled
from rlm_desktop.ui.tree.columns import COLUMNS
from rlm_desktop.ui.tree.model import CallTreeModel
from rlm_desktop.ui.tree.pinned import PinnedTreeView
from rlm_desktop.ui.tree.search_filter import SearchFilter

AUTO_EXPAND_LEVELS = 2
TICKING = tuple(number for number, column in enumerate(COLUMNS) if column.ticks)
FILTER_SETTLE_MS = 150
LEAST_ROWS = 4
ROW_PADDING = 4
SEARCH_LEAST_WIDTH = 160
"""The search box's least width beside the buttons; narrower, they go under it."""
"""Pixels a tree row takes beyond its text's height."""


class TreePanel(QWidget):
    """The call tree with its tools; emits `call_selected` with the chosen `CallNode` or None.

    `error_reached` is emitted with the call "next error" stopped at, after it was selected.
    """

    call_selected = Signal(object)
    error_reached = Signal(object)

    def __init__(self, model: CallTreeModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.proxy: SearchFilter | None = None
        self._last: CallNode | None = None

        self.filter = search_box(
            "Search calls: prompts, replies, code, output, errors", "Filter calls"
        )
        when_settled(self.filter.textChanged, FILTER_SETTLE_MS, self._apply_filter, self)
        self.matches = QLabel()
        self.matches.setObjectName("muted")
        self.matches.setAccessibleName("Filter matches")
        self.matches.hide()
        self.expand_button = tool_button(
            "Expand all", "Expand every call", self.expand_all, mark="⊞"
        )
        self.collapse_button = tool_button(
            "Collapse all", "Collapse every call", self.collapse_all, mark="⊟"
        )
        self.next_error_button = tool_button(
            "Next error",
            "Select the next call that failed or whose code raised",
            self.next_error,
        )

        self.view = PinnedTreeView()
        self.view.keep_in_sight = next(i for i, c in enumerate(COLUMNS) if c.title == "Status")
        self.view.setModel(model)
        self.view.setAccessibleName("Call tree")
        header = self.view.header()
        header.setStretchLastSection(True)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        for number, column in enumerate(COLUMNS):
            if column.width is not None:
                header.resizeSection(number, column.width)
        self.view.selectionModel().currentRowChanged.connect(self._on_current)
        model.changed.connect(self._on_changes)
        model.modelReset.connect(self._on_reset)

        self._tools = QHBoxLayout()
        self._tools.setContentsMargins(0, 0, 0, 0)
        self._tools.addWidget(self.filter, 1)
        self._tools.addWidget(self.matches)
        self._buttons = QHBoxLayout()
        self._buttons.setContentsMargins(0, 0, 0, 0)
        self._buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(self._tools)
        layout.addLayout(self._buttons)
        layout.addWidget(self.view, 1)
        self._tool_buttons = (self.next_error_button, self.expand_button, self.collapse_button)
        self._buttons_below = True
        self._place_buttons(below=False)
        self._fit_view()

    def _place_buttons(self, below: bool) -> None:
        """The buttons beside the search box, or on a line of their own under it when the
        pane is too narrow for both (the search box would be squeezed to nothing)."""
        if below == self._buttons_below:
            return
        self._buttons_below = below
        for index, button in enumerate(self._tool_buttons):
            if below:
                self._buttons.insertWidget(index, button)
            else:
                self._tools.addWidget(button)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt's name)
        """Put the buttons where the width has room for them."""
        super().resizeEvent(event)
        needed = sum(b.sizeHint().width() for b in self._tool_buttons) + SEARCH_LEAST_WIDTH
        self._place_buttons(below=event.size().width() < needed)

    def _fit_view(self) -> None:
        """Keep room for the header and `LEAST_ROWS` calls, so a short window takes its room
        from other panes (the run settings scroll instead) rather than from the tree."""
        view = self.view
        row = self.fontMetrics().height() + ROW_PADDING  # the view's may not have changed yet
        bar = view.horizontalScrollBar().sizeHint().height()
        frame = 2 * view.frameWidth()
        view.setMinimumHeight(view.header().sizeHint().height() + LEAST_ROWS * row + bar + frame)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 (Qt's name)
        """Fit the tree's least height to a new interface size."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            self._fit_view()

    def _apply_filter(self) -> None:
        text = self.filter.text().strip()
        selected = self.selected()
        if text:
            if self.proxy is None:
                self.proxy = SearchFilter(self.model, text, self)
                self._show_model(self.proxy)
            else:
                self.proxy.set_text(text)
            self._expand_matches()
            self._count_matches()
        elif self.proxy is not None:
            self.matches.hide()
            proxy, self.proxy = self.proxy, None
            self._show_model(self.model)
            proxy.release()
            proxy.deleteLater()
            for node in self.model.tree.walk():
                if node.level < AUTO_EXPAND_LEVELS and node.kind == "rlm":
                    self.view.expand(self.proxy_index(node))
        if selected is not None:
            self.select(selected)

    def _expand_matches(self) -> None:
        """Open every call the filter shows that has children shown (cheaper than expandAll)."""
        if self.proxy is None:
            return
        for node in self.proxy.search.shown:
            if node.children:
                self.view.expand(self.proxy_index(node))

    def _count_matches(self) -> None:
        found = self.proxy.matches() if self.proxy is not None else 0
        self.matches.setText(fmt.plural(found, "match", "matches") if found else "no matches")
        name = "muted" if found else "warningLabel"
        if self.matches.objectName() != name:
            self.matches.setObjectName(name)
            repolish(self.matches)
        self.matches.setVisible(self.proxy is not None)

    def _show_model(self, model: QAbstractItemModel) -> None:
        header = self.view.header().saveState()
        self.view.setModel(model)
        self.view.header().restoreState(header)
        self.view.selectionModel().currentRowChanged.connect(self._on_current)

    def _to_source(self, index: QModelIndex) -> QModelIndex:
        return self.proxy.mapToSource(index) if self.proxy is not None else index

    def _on_changes(self, changes: Changes) -> None:
        if self.proxy is not None:
            if self.proxy.follow(changes):
                self._expand_matches()
            self._count_matches()
        parents = {n.parent for n in changes.added if n.parent is not None}
        for parent in parents:
            if parent.level < AUTO_EXPAND_LEVELS and parent.kind == "rlm":
                self.view.expand(self.proxy_index(parent))
        if changes.added and self.selected() is None and self.model.tree.root is not None:
            self.select(self.model.tree.root)

    def repaint_clocks(self) -> None:
        """Repaint the ticking columns (running calls' clocks) where they are in sight.

        Cheaper than `dataChanged` over every running row, which Qt walks row by row through
        the model however few of them are on screen.
        """
        viewport = self.view.viewport()
        header = self.view.header()
        for column in TICKING:
            if header.isSectionHidden(column):
                continue
            left = header.sectionViewportPosition(column)
            viewport.update(QRect(left, 0, header.sectionSize(column), viewport.height()))

    def _on_current(self, current: QModelIndex, _previous: QModelIndex) -> None:
        node = self.model.node(self._to_source(current))
        if node is not None:
            self._last = node
        self.call_selected.emit(node)

    def _on_reset(self) -> None:
        self._last = None
        self.call_selected.emit(None)

    def proxy_index(self, node: CallNode) -> QModelIndex:
        """The view's index of `node` (invalid when the filter hides it)."""
        index = self.model.index_of(node)
        return self.proxy.mapFromSource(index) if self.proxy is not None else index

    def selected(self) -> CallNode | None:
        """The call that is selected, if any."""
        return self.model.node(self._to_source(self.view.currentIndex()))

    def select(self, node: CallNode) -> bool:
        """Select `node`, expanding its ancestors; False when the filter hides it."""
        index = self.proxy_index(node)
        if not index.isValid():
            return False
        for ancestor in reversed(list(node.ancestors())):
            self.view.expand(self.proxy_index(ancestor))
        self.view.setCurrentIndex(index)
        self.view.scrollTo(index)
        return True

    def expand_all(self) -> None:
        """Expand every call."""
        self.view.expandAll()

    def collapse_all(self) -> None:
        """Collapse every call, leaving the root's children in sight."""
        self.view.collapseAll()
        root = self.model.tree.root
        if root is not None:
            self.view.expand(self.proxy_index(root))

    def clear_filter(self) -> None:
        """Show every call again (a new run or a reopened session starts unfiltered)."""
        if self.filter.text():
            self.filter.clear()
            self._apply_filter()

    def next_error(self) -> CallNode | None:
        """Select the next call after the selection (wrapping) that failed or whose code raised;
        None when there is none."""
        node = self.model.find_next(self.selected() or self._last, lambda n: n.needs_attention)
        if node is None:
            return None
        if not self.select(node):
            self.clear_filter()
            self.select(node)
        self.error_reached.emit(node)
        return node
