"""The status bar: elapsed time, cost against the budget, tokens, sub-calls in flight and done,
and how fast the model is writing while replies stream."""

from __future__ import annotations

from PySide6.QtCore import QSize
from PySide6.QtWidgets import QLabel, QStatusBar, QWidget

from rlm_desktop import formatting as fmt
from rlm_desktop.review.call_tree import CallTree
from rlm_desktop.review.cap_watch import CapWatch
from rlm_desktop.ui.appearance.theme import repolish


class RunStatusBar(QStatusBar):
    """Shows the live figures of the run in view; `update_from(tree)` refreshes them."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.elapsed = self._field("Elapsed time")
        self.cost = self._field("Cost against the budget")
        self.tokens = self._field("Tokens")
        self.calls = self._field("Sub-calls")
        self.writing = self._field("Writing speed")
        self.writing.setToolTip(
            "Tokens a second the model is writing now, over the last few seconds, across every "
            "reply streaming at once"
        )
        self.max_cost_usd: float | None = None
        self.max_tokens: int | None = None
        self._fields = {
            "cost": self.cost,
            "p90": self.cost,
            "tokens": self.tokens,
            "sub_calls": self.calls,
            "seconds": self.elapsed,
        }
        self.messageChanged.connect(self._fit_message)
        self.watch: CapWatch | None = None
        """The caps of the live run, to say when it passes half and four fifths of one (its
        figures are shown a few times a second, so a mark passed just before the end is said
        with the final figures); dropped when the run has ended."""
        self.clear_run()

    def _field(self, name: str) -> QLabel:
        label = _Figure()
        label.setObjectName("statusField")
        label.setAccessibleName(name)
        self.addPermanentWidget(label)
        return label

    def _fit_message(self, text: str) -> None:
        """A message too long for the room the figures leave hides them while it is shown
        (it had been cut to its first word at 1024 px); they come back when it goes."""
        figures = (self.elapsed, self.cost, self.tokens, self.calls)
        shown = sum(label.sizeHint().width() for label in figures if label.text())
        room = self.width() - shown - 40
        crowded = bool(text) and self.fontMetrics().horizontalAdvance(text) > room
        for label in figures:
            label.setHidden(crowded)

    def clear_run(self) -> None:
        """No run in view."""
        for label in (self.elapsed, self.cost, self.tokens, self.calls, self.writing):
            label.setText("")
            label.setProperty("warning", False)
            repolish(label)

    def update_from(self, tree: CallTree) -> None:
        """Refresh every field from the tree's run-level figures."""
        run = tree.run
        if run.started_ts is None:
            self.clear_run()
            return
        self.elapsed.setText(f"Elapsed {fmt.seconds(run.elapsed())}")
        budget = run.budget
        finished = run.finished
        if finished is not None:
            cost, tokens = finished.cost_usd, finished.input_tokens + finished.output_tokens
        elif budget is not None:
            cost, tokens = budget.cost_usd, budget.tokens
        else:
            root = tree.root
            cost = root.subtree.cost_usd if root else 0.0
            tokens = root.subtree.tokens if root else 0
        cap = f" of {fmt.cost(self.max_cost_usd)}" if self.max_cost_usd else ""
        unpriced = budget.unpriced_calls if budget is not None else 0
        shown = fmt.cost(cost, bool(unpriced), long=True)
        if shown == fmt.UNPRICED:
            self.cost.setText(f"Cost unknown: {fmt.plural(unpriced, 'call')} to unpriced models")
        else:
            self.cost.setText(f"Cost {shown}{cap}")
        self.cost.setToolTip(
            f"{fmt.plural(unpriced, 'call')} to models without a price: their cost is not counted"
            if unpriced
            else ""
        )
        token_cap = f" of {fmt.tokens(self.max_tokens)}" if self.max_tokens else ""
        self.tokens.setText(f"Tokens {fmt.tokens(tokens)}{token_cap}")
        self.calls.setText(sub_calls_text(tree))
        rate = run.writing.per_second(run.now()) if finished is None else None
        self.writing.setText(f"Writing {rate:,.0f} tokens/s" if rate is not None else "")
        self.writing.setVisible(rate is not None)
        if self.watch is not None:
            figures = {
                "cost": cost,
                "tokens": float(tokens),
                "sub_calls": float(tree.sub_calls_running + tree.sub_calls_done),
                "seconds": run.elapsed(),
            }
            for passed in self.watch.update(figures):
                self.showMessage(passed.text, 15000)
                field = self._fields.get(passed.limit)
                if passed.serious and field is not None:
                    field.setProperty("warning", True)
                    field.setToolTip(passed.text)
                    repolish(field)


def sub_calls_text(tree: CallTree) -> str:
    """The sub-calls in flight and how the others ended: "done" only for those that
    succeeded, stopped (by the user or a cap) and failed ones said apart."""
    endings = tree.sub_call_endings
    parts = [f"Sub-calls {tree.sub_calls_running:,} running", f"{endings.get('ok', 0):,} done"]
    stopped = endings.get("stopped", 0) + endings.get("limit", 0)
    if stopped:
        parts.append(f"{stopped:,} stopped")
    if endings.get("error"):
        parts.append(f"{endings['error']:,} failed")
    return " · ".join(parts)


class _Figure(QLabel):
    """A figure of the status bar: its whole text where there is room, cut where there is not
    (at the largest interface size the four figures are wider than a screen, and the window
    must never be)."""

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        """No least width."""
        return QSize(0, super().minimumSizeHint().height())
