"""duplicate_sub_calls: the same prompt sent to the same model more than once — paid again for
an answer already in hand."""

from __future__ import annotations

from collections import defaultdict

from rlm_desktop import formatting as fmt
from rlm_desktop.review.health.finding import Finding, TurnRef
from rlm_desktop.review.health.view import RunView
from rlm_desktop.store.detail import Row

ADVICE = (
    "Keep sub-call answers in a variable (or a dict keyed by prompt) and reuse them instead of "
    "asking again; de-duplicate chunks before a batched call."
)


def duplicate_findings(view: RunView) -> list[Finding]:
    """One finding listing every repeated `llm_query` prompt, with what the repeats cost.

    Only answered calls count: asking again after a failure is a retry, not a waste.
    """
    groups: defaultdict[tuple[str, str], list[Row]] = defaultdict(list)
    for call in view.calls:
        if (
            call["kind"] == "llm"
            and call["parent_id"]
            and call["status"] == "ok"
            and call["prompt"]
        ):
            groups[(call["model"], call["prompt"])].append(call)
    repeated = [calls for calls in groups.values() if len(calls) > 1]
    if not repeated:
        return []
    repeats = [call for calls in repeated for call in calls[1:]]
    tokens = sum(int(c["input_tokens"] or 0) + int(c["output_tokens"] or 0) for c in repeats)
    costs = [c["cost_usd"] for c in repeats]
    cost = sum(float(c) for c in costs if c is not None)
    unpriced = any(c is None for c in costs)
    turns: list[TurnRef] = [
        (c["parent_id"], c["parent_turn"]) for c in repeats if c["parent_turn"] is not None
    ]
    return [
        Finding(
            kind="duplicate_sub_calls",
            rule="same_prompt",
            severity="warning",
            message=(
                f"{fmt.plural(len(repeated), 'sub-call prompt')} went out more than once: "
                f"{fmt.plural(len(repeats), 'repeat')} cost {fmt.tokens(tokens)} tokens "
                f"({fmt.cost(cost, unpriced)}) for answers already received."
            ),
            advice=ADVICE,
            calls=tuple(c["id"] for calls in repeated for c in calls),
            turns=tuple(dict.fromkeys(turns)),
            figures={
                "prompts": len(repeated),
                "repeats": len(repeats),
                "wasted_tokens": tokens,
                "wasted_cost_usd": None if unpriced and not cost else round(cost, 8),
            },
        )
    ]
