"""depth: recursion that did not pay — child RLM calls that failed or handed back junk, and
recursion used with a model that already fails at the root."""

from __future__ import annotations

from rlm_desktop.review.health.answers import answer_problem
from rlm_desktop.review.health.coding import failing_turns, fails_often
from rlm_desktop.review.health.finding import Finding, TurnRef, listed
from rlm_desktop.review.health.view import RunView
from rlm_desktop.store.detail import Row

FAILED = ("error", "max_turns", "timeout")
ADVICE_CHILDREN = (
    "Lower --max-depth (1 makes rlm_query a plain llm_query) or give the children a stronger "
    "model; a weak model does worse with every level of recursion."
)
ADVICE_WEAK_MODEL = (
    "This model already fails at the root: run it with --max-depth 1, or use a stronger model "
    "before allowing recursion."
)


def depth_findings(view: RunView) -> list[Finding]:
    """Failed or junk-returning children, and recursion with a model weak at depth 1."""
    children = [call for call in view.rlm_calls() if call["parent_id"] is not None]
    if not children:
        return []
    findings = []
    bad = [(call, why) for call in children if (why := _child_problem(view, call)) is not None]
    if bad:
        calls = [call["id"] for call, _ in bad]
        turns: list[TurnRef] = [
            (call["parent_id"], call["parent_turn"])
            for call, _ in bad
            if call["parent_turn"] is not None
        ]
        findings.append(
            Finding(
                kind="depth",
                rule="failed_children",
                severity="warning",
                message=(
                    f"{len(bad)} of {len(children)} child RLM calls failed or returned no "
                    f"usable answer ({listed(calls)}; first: {bad[0][1]})."
                ),
                advice=ADVICE_CHILDREN,
                calls=tuple(calls),
                turns=tuple(dict.fromkeys(turns)),
                figures={
                    "children": len(children),
                    "failed": len(bad),
                    "reasons": {call["id"]: why for call, why in bad},
                },
            )
        )
    root = view.root()
    if root is not None and root["kind"] == "rlm" and fails_often(view, root["id"]):
        failing = failing_turns(view, root["id"])
        deepest = max(int(call["depth"] or 0) for call in children)
        findings.append(
            Finding(
                kind="depth",
                rule="weak_model_recursed",
                severity="warning",
                message=(
                    f"Recursion reached depth {deepest} with {root['model']}, whose own root "
                    f"turns failed {len(failing)} of {len(view.turns_of(root['id']))} times."
                ),
                advice=ADVICE_WEAK_MODEL,
                calls=(root["id"], *(call["id"] for call in children)),
                turns=tuple(failing),
                figures={"depth": deepest, "root_failing_turns": len(failing)},
            )
        )
    return findings


def _child_problem(view: RunView, call: Row) -> str | None:
    if call["status"] in FAILED:
        first = (call["error"] or call["status"]).splitlines()[0]
        return f"{call['status']}: {first[:120]}"
    if call["status"] != "ok":
        return None
    problem = answer_problem(
        call["response"] or "", call["answer_source"], view.code_of(call["id"])
    )
    return f"its answer {problem[1]}" if problem is not None else None
