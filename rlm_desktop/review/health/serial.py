"""serial_sub_calls: sub-calls of one cell that waited for each other although none needed
another's answer — one batched call would have run them at once."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from rlm_desktop import formatting as fmt
from rlm_desktop.review.health import thresholds as limits
from rlm_desktop.review.health.finding import Finding, listed, turn_name
from rlm_desktop.review.health.view import RunView
from rlm_desktop.store.detail import Row

ADVICE = (
    "Have the model send independent prompts together with llm_query_batched (or "
    "rlm_query_batched) instead of calling llm_query in a loop; the profile's prompt can say so."
)


@dataclass(frozen=True)
class SerialCell:
    """One cell whose independent sub-calls ran in `waves` one after another."""

    call_id: str
    turn: int
    cell: int
    calls: tuple[str, ...]
    waves: int
    elapsed_s: float
    saving_s: float


def serial_findings(view: RunView) -> list[Finding]:
    """One finding over every cell that ran batchable sub-calls one after another."""
    cells = [cell for cell in serial_cells(view) if cell.saving_s > 0]
    saving = sum(cell.saving_s for cell in cells)
    if not cells or saving < limits.SERIAL_MIN_SAVING_S:
        return []
    worst = max(cells, key=lambda cell: cell.saving_s)
    calls = [call_id for cell in cells for call_id in cell.calls]
    return [
        Finding(
            kind="serial_sub_calls",
            rule="batchable",
            severity="warning",
            message=(
                f"{len(calls):,} sub-calls in {fmt.plural(len(cells), 'cell')} ran one after "
                f"another though none used another's answer; batching would have saved about "
                f"{fmt.seconds(saving)} (most in {turn_name((worst.call_id, worst.turn))}, "
                f"{listed(list(worst.calls), 3)})."
            ),
            advice=ADVICE,
            calls=tuple(calls),
            turns=tuple(dict.fromkeys((cell.call_id, cell.turn) for cell in cells)),
            figures={
                "saving_s": round(saving, 3),
                "cells": [
                    {
                        "call_id": cell.call_id,
                        "turn": cell.turn,
                        "cell": cell.cell,
                        "calls": len(cell.calls),
                        "waves": cell.waves,
                        "elapsed_s": round(cell.elapsed_s, 3),
                        "saving_s": round(cell.saving_s, 3),
                    }
                    for cell in cells
                ],
            },
        )
    ]


def serial_cells(view: RunView) -> list[SerialCell]:
    """Every cell with at least two independent waves of sub-calls, with the time a batch saves."""
    by_cell: defaultdict[tuple[str, int, int], list[Row]] = defaultdict(list)
    for call in view.calls:
        if call["parent_id"] and call["parent_turn"] is not None and call["started_at"]:
            by_cell[(call["parent_id"], call["parent_turn"], call["parent_cell"] or 0)].append(call)
    found = []
    for (call_id, turn, cell), calls in by_cell.items():
        waves = _independent_waves(_waves(calls))
        members = [call for wave in waves for call in wave]
        if len(waves) < 2 or len(members) < limits.SERIAL_MIN_CALLS:
            continue
        spans = [_span(wave) for wave in waves]
        found.append(
            SerialCell(
                call_id=call_id,
                turn=turn,
                cell=cell,
                calls=tuple(call["id"] for call in members),
                waves=len(waves),
                elapsed_s=sum(spans),
                saving_s=sum(spans) - max(spans),
            )
        )
    return found


def _waves(calls: list[Row]) -> list[list[Row]]:
    """Calls grouped into waves: a wave starts when a call starts after all before it ended."""
    waves: list[list[Row]] = []
    latest_end = float("-inf")
    for call in sorted(calls, key=lambda c: c["started_at"]):
        if not waves or call["started_at"] >= latest_end:
            waves.append([call])
        else:
            waves[-1].append(call)
        latest_end = max(latest_end, call["ended_at"] or call["started_at"])
    return waves


def _independent_waves(waves: list[list[Row]]) -> list[list[Row]]:
    """The waves whose prompts quote no recent answer of an earlier wave (the first counts)."""
    kept: list[list[Row]] = []
    answers: list[str] = []
    for wave in waves:
        recent = answers[-limits.DEPENDENT_LOOKBACK :]
        if not any(answer in (call["prompt"] or "") for call in wave for answer in recent):
            kept.append(wave)
        answers.extend(
            text
            for call in wave
            if len(text := (call["response"] or "").strip()) >= limits.DEPENDENT_MIN_CHARS
        )
    return kept


def _span(wave: list[Row]) -> float:
    start = min(call["started_at"] for call in wave)
    end = max(call["ended_at"] or call["started_at"] for call in wave)
    return float(end - start)
