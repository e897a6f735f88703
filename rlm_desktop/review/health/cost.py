"""cost_tail: a run that costs far more than the user's usual, tokens spent re-sending the same
history at every turn, and turns that fanned out into a flood of sub-calls."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from rlm_desktop import formatting as fmt
from rlm_desktop.review.health import thresholds as limits
from rlm_desktop.review.health.coverage import Coverage
from rlm_desktop.review.health.finding import Finding, TurnRef, listed, turn_name
from rlm_desktop.review.health.view import RunView

SHOWN_CALLS = 20
ADVICE_HISTORY = (
    "Set a cost cap (--max-cost) and a sub-call cap (--max-sub-calls) before re-running, and "
    "look at the turns that spent the most."
)
ADVICE_RESENT = (
    "Every turn re-sends the conversation so far: have the model print less (keep results in "
    "variables) or finish in fewer turns (--max-turns)."
)
ADVICE_RESENT_DOCUMENTS = (
    "Send each passage once: split the documents into disjoint chunks, and ask all questions "
    "about a chunk in one prompt instead of sending it again with each question."
)
ADVICE_FANOUT = (
    "Cap sub-calls (--max-sub-calls) and ask the model to chunk more coarsely: one sub-call per "
    "chunk of a few thousand tokens, not per line."
)


@dataclass(frozen=True)
class PastRun:
    """What the cost comparison needs of another saved run."""

    session_id: str
    cost_usd: float | None
    tokens: int
    unpriced: bool


def cost_findings(view: RunView, history: Sequence[PastRun]) -> list[Finding]:
    """The run against the user's other runs, its re-sent share, and runaway fan-out."""
    findings = [_against_history(view, history), _resent(view), _fanout(view)]
    return [finding for finding in findings if finding is not None]


def resent_documents_findings(quoted: Counter[str], coverage: Coverage) -> list[Finding]:
    """A finding when the same document text went to the models again and again.

    `quoted` holds, per call, the characters of document text its prompt and observations quoted.
    """
    total = sum(quoted.values())
    read = sum(document.covered for document in coverage.documents)
    again = total - read
    if not read or total < limits.RESENT_DOCUMENT_FACTOR * read:
        return []
    if again < limits.RESENT_DOCUMENT_MIN_CHARS:
        return []
    heaviest = [call_id for call_id, chars in quoted.most_common(SHOWN_CALLS) if chars]
    return [
        Finding(
            kind="cost_tail",
            rule="resent_documents",
            severity="warning",
            message=(
                f"The models were sent {total:,} characters of the documents, "
                f"{total / read:.1f}x the {read:,} distinct characters they read: the same "
                f"passages went out again and again (most in {listed(heaviest, 3)})."
            ),
            advice=ADVICE_RESENT_DOCUMENTS,
            calls=tuple(heaviest),
            figures={"quoted_chars": total, "read_chars": read, "factor": round(total / read, 2)},
        )
    ]


def percentile(value: float, others: Sequence[float]) -> float:
    """The share of `others` below `value`, ties counting half, as a percentage."""
    below = sum(1 for other in others if other < value)
    equal = sum(1 for other in others if other == value)
    return 100.0 * (below + equal / 2) / len(others)


def _against_history(view: RunView, history: Sequence[PastRun]) -> Finding | None:
    session = view.session
    this_id = session["id"]
    priced = not session["unpriced"] and session["cost_usd"] is not None
    tokens = int(session["input_tokens"] or 0) + int(session["output_tokens"] or 0)
    if priced:
        value = float(session["cost_usd"])
        others = [
            float(run.cost_usd)
            for run in history
            if run.session_id != this_id and run.cost_usd is not None and not run.unpriced
        ]
        unit = "cost"
    else:
        value = float(tokens)
        others = [float(run.tokens) for run in history if run.session_id != this_id]
        unit = "tokens"
    if len(others) < limits.HISTORY_MIN_RUNS:
        return None
    rank = percentile(value, others)
    median = sorted(others)[len(others) // 2]
    if rank < limits.HISTORY_PERCENTILE or value < limits.HISTORY_MEDIAN_FACTOR * median:
        return None
    shown = fmt.dollars(value) if priced else f"{fmt.tokens(int(value))} tokens"
    usual = fmt.dollars(median) if priced else f"{fmt.tokens(int(median))} tokens"
    root = view.root()
    return Finding(
        kind="cost_tail",
        rule="history_percentile",
        severity="warning",
        message=(
            f"This run's {unit} ({shown}) is at the {rank:.0f}th percentile of your "
            f"{len(others):,} other runs, "
            + (f"{value / median:.1f}x their median ({usual})." if median else "whose median is 0.")
        ),
        advice=ADVICE_HISTORY,
        calls=(root["id"],) if root is not None else (),
        figures={
            "unit": unit,
            "value": value,
            "percentile": round(rank, 1),
            "median": median,
            "runs": len(others),
        },
    )


def _resent(view: RunView) -> Finding | None:
    total_input = sum(int(r["input_tokens"] or 0) for r in view.detail.requests)
    resent = 0
    worst: list[tuple[int, str]] = []
    for call in view.rlm_calls():
        requests = [r for r in view.detail.requests_of(call["id"]) if r["responded_at"]]
        again = 0
        for previous, current in zip(requests, requests[1:], strict=False):
            history = int(previous["input_tokens"] or 0) + int(previous["output_tokens"] or 0)
            again += min(int(current["input_tokens"] or 0), history)
        resent += again
        worst.append((again, call["id"]))
    if not total_input:
        return None
    share = resent / total_input
    if share < limits.RESENT_SHARE or resent < limits.RESENT_MIN_TOKENS:
        return None
    calls = [call_id for again, call_id in sorted(worst, reverse=True) if again]
    return Finding(
        kind="cost_tail",
        rule="resent_context",
        severity="warning",
        message=(
            f"{share:.0%} of all input tokens ({fmt.tokens(resent)} of "
            f"{fmt.tokens(total_input)}) re-sent earlier turns, most in {listed(calls, 3)}."
        ),
        advice=ADVICE_RESENT,
        calls=tuple(calls),
        figures={"resent_tokens": resent, "input_tokens": total_input, "share": round(share, 3)},
    )


def _fanout(view: RunView) -> Finding | None:
    wide: list[tuple[TurnRef, int]] = []
    for call in view.rlm_calls():
        for turn in view.turns_of(call["id"]):
            started = len(view.sub_calls_of(call["id"], turn["idx"]))
            if started >= limits.FANOUT_SUB_CALLS:
                wide.append(((call["id"], turn["idx"]), started))
    if not wide:
        return None
    widest, most = max(wide, key=lambda item: item[1])
    return Finding(
        kind="cost_tail",
        rule="fanout",
        severity="warning",
        message=(
            f"{fmt.plural(len(wide), 'turn')} started {limits.FANOUT_SUB_CALLS} or more "
            f"sub-calls each; {turn_name(widest)} started {most:,}."
        ),
        advice=ADVICE_FANOUT,
        calls=tuple(dict.fromkeys(turn[0] for turn, _ in wide)),
        turns=tuple(turn for turn, _ in wide),
        figures={"turns": {f"{t[0]}:{t[1]}": n for t, n in wide}, "most": most},
    )
