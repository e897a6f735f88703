"""The chosen row of a batch in full, under its table: its figures, question and documents, the
whole answer, why it has none, and its findings; plain text (the model wrote the answer)."""

from __future__ import annotations

from PySide6.QtWidgets import QPlainTextEdit, QWidget

from rlm_desktop import formatting as fmt
from rlm_desktop.batch.records import RowResult
from rlm_desktop.ui.batches.listing import NOT_RUN

EMPTY = "Choose a row to read its question and answer in full."


def figures(result: RowResult) -> str:
    """`Row acme · completed · $0.0004 · 319 tokens · 3.64 s · on this machine`."""
    parts = [f"Row {result.row_id}", fmt.status_text(result.status)]
    if result.session_id and result.status not in (NOT_RUN, "running"):
        parts += [
            fmt.cost(result.cost_usd, result.unpriced),
            f"{fmt.tokens(result.input_tokens + result.output_tokens)} tokens",
            fmt.seconds(result.wall_s),
            f"on {fmt.placement(result.executor, result.node, result.attempts)}",
        ]
    return " · ".join(parts)


def details_text(result: RowResult) -> str:
    """Everything about one row, as text."""
    lines = [
        figures(result),
        f"Question: {result.question}",
        f"Documents: {'; '.join(result.documents) or '—'}",
        "",
    ]
    if result.answer:
        lines += ["Answer:", result.answer, ""]
    if result.error:
        lines += ["Why it has no answer:" if not result.answer else "Notes:", result.error, ""]
    if result.findings:
        lines.append("Findings:")
        lines += [f"- {f.get('kind', '?')}: {f.get('message', '')}" for f in result.findings]
    return "\n".join(lines).rstrip()


class RowDetails(QPlainTextEdit):
    """Read-only; `show_row(None)` empties it."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setAccessibleName("The row in full")
        self.setPlaceholderText(EMPTY)

    def show_row(self, result: RowResult | None) -> None:
        """Show `result` whole (nothing for None)."""
        self.setPlainText("" if result is None else details_text(result))
