"""What the model is shown after its code ran: each cell's output, cut head-and-tail to a limit."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlm_desktop.engine.truncation import truncate_middle

if TYPE_CHECKING:
    from rlm_desktop.engine.sandbox.process import CellOutcome

NO_CODE_NOTE = (
    "Your reply had no ```repl code block, so nothing ran. Write code in a ```repl block to work "
    "with `context`, or submit your answer by running FINAL(...) in a ```repl block."
)


def restored_note(names: tuple[str, ...] | list[str]) -> str:
    """The one-line note for tools a cell overwrote or deleted and the REPL put back."""
    they = "they were" if len(names) > 1 else "it was"
    return f"Note: you overwrote {', '.join(names)}; {they} restored."


def format_cell(number: int, outcome: CellOutcome, limit: int) -> str:
    """One cell's observation (`number` counts the call's cells, as tracebacks do: `<cell 3>`)."""
    parts = [f"[cell {number}] ran in {outcome.duration_s:.2f} s"]
    if outcome.stdout:
        parts.append(outcome.stdout.rstrip("\n"))
    if outcome.stderr:
        parts.append("stderr:\n" + outcome.stderr.rstrip("\n"))
    if outcome.error:
        parts.append(outcome.error)
    if outcome.worker_note:
        parts.append(f"Note: {outcome.worker_note}.")
    if outcome.variables_lost:
        parts.append(
            "Note: the REPL was restarted; your variables are gone (`context` is loaded again)."
        )
    if outcome.restored:
        parts.append(restored_note(outcome.restored))
    if len(parts) == 1:
        parts.append("(no output)")
    return truncate_middle("\n".join(parts), limit)


def format_observation(
    outcomes: list[CellOutcome], limit: int, note: str = "", first_cell: int = 1
) -> str:
    """The observation for a whole turn; the limit is shared between its cells."""
    if not outcomes:
        return f"{note}\n\n{NO_CODE_NOTE}" if note else NO_CODE_NOTE
    share = max(200, limit // len(outcomes))
    text = "\n\n".join(format_cell(first_cell + i, o, share) for i, o in enumerate(outcomes))
    return f"{text}\n\n{note}".rstrip() if note else text
