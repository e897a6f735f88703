"""weak_coder: the model cannot drive its REPL — cells that raise, the same error again and
again, replies with no code to run."""

from __future__ import annotations

from rlm_desktop.review.health import thresholds as limits
from rlm_desktop.review.health.finding import Finding, TurnRef, listed
from rlm_desktop.review.health.view import RunView, had_no_code

ADVICE_ERRORS = (
    "Use a stronger coding model for the root (--model), or a prompt profile written for small "
    "models (--profile small), and lower --max-depth so failures do not multiply."
)
ADVICE_REPEATED = (
    "The model does not read its tracebacks: give it a stronger root model or the 'small' "
    "profile, whose instructions are simpler."
)
ADVICE_NO_CODE = (
    "The model answers in prose instead of code: use a profile that insists on ```repl blocks "
    "(--profile small) or a model that follows tool formats."
)


def failing_turns(view: RunView, call_id: str) -> list[TurnRef]:
    """The turns of an RLM call in which a cell raised."""
    return [
        (call_id, turn["idx"])
        for turn in view.turns_of(call_id)
        if view.turn_error(call_id, turn["idx"]) is not None
    ]


def fails_often(view: RunView, call_id: str) -> bool:
    """True when enough of a call's turns raised to call its model a weak coder."""
    turns = len(view.turns_of(call_id))
    failing = len(failing_turns(view, call_id))
    return failing >= limits.ERROR_TURNS and failing >= limits.ERROR_SHARE * turns


def weak_coder_findings(view: RunView) -> list[Finding]:
    """Every weak_coder finding of the run (one per rule, listing the calls it applies to)."""
    return [
        finding
        for finding in (_error_share(view), _repeated_errors(view), _no_code(view))
        if finding is not None
    ]


def _error_share(view: RunView) -> Finding | None:
    calls = [call["id"] for call in view.rlm_calls() if fails_often(view, call["id"])]
    if not calls:
        return None
    failing = [turn for call_id in calls for turn in failing_turns(view, call_id)]
    total = sum(len(view.turns_of(call_id)) for call_id in calls)
    share = len(failing) / total
    return Finding(
        kind="weak_coder",
        rule="error_share",
        severity="warning",
        message=(
            f"{len(failing)} of {total} turns ({share:.0%}) ran code that raised an error, "
            f"in {listed(calls)}."
        ),
        advice=ADVICE_ERRORS,
        calls=tuple(calls),
        turns=tuple(failing),
        figures={"failing_turns": len(failing), "turns": total, "share": round(share, 3)},
    )


def _repeated_errors(view: RunView) -> Finding | None:
    runs: list[tuple[str, list[TurnRef]]] = []
    for call in view.rlm_calls():
        previous: str | None = None
        streak: list[TurnRef] = []
        for turn in view.turns_of(call["id"]):
            error = view.turn_error(call["id"], turn["idx"])
            if error is not None and error == previous:
                streak.append((call["id"], turn["idx"]))
            else:
                if len(streak) >= limits.REPEATED_ERROR_TURNS and previous is not None:
                    runs.append((previous, streak))
                streak = [(call["id"], turn["idx"])] if error is not None else []
            previous = error
        if len(streak) >= limits.REPEATED_ERROR_TURNS and previous is not None:
            runs.append((previous, streak))
    if not runs:
        return None
    error, first = max(runs, key=lambda run: len(run[1]))
    turns = [turn for _, streak in runs for turn in streak]
    calls = list(dict.fromkeys(call_id for call_id, _ in turns))
    return Finding(
        kind="weak_coder",
        rule="repeated_error",
        severity="warning",
        message=(
            f"The same error came back in {len(first)} turns in a row of {first[0][0]}: "
            f"{error[:160]}" + (f" ({len(runs) - 1} more such streaks)" if len(runs) > 1 else "")
        ),
        advice=ADVICE_REPEATED,
        calls=tuple(calls),
        turns=tuple(turns),
        figures={"error": error, "longest_streak": len(first), "streaks": len(runs)},
    )


def _no_code(view: RunView) -> Finding | None:
    turns: list[TurnRef] = []
    for call in view.rlm_calls():
        answering = view.answering_turn(call)
        found = [
            (call["id"], turn["idx"])
            for turn in view.turns_of(call["id"])
            if had_no_code(turn) and turn["idx"] != answering
        ]
        if len(found) >= limits.NO_CODE_TURNS:
            turns.extend(found)
    if not turns:
        return None
    calls = list(dict.fromkeys(call_id for call_id, _ in turns))
    return Finding(
        kind="weak_coder",
        rule="no_code",
        severity="warning",
        message=f"{len(turns)} replies had no runnable code and no answer, in {listed(calls)}.",
        advice=ADVICE_NO_CODE,
        calls=tuple(calls),
        turns=tuple(turns),
        figures={"replies_without_code": len(turns)},
    )
