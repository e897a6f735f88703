"""short_input: a run orchestrated through a REPL although one direct call would have read the
whole input comfortably.

`auto` (the default mode) answers such inputs directly, so the finding is about runs where RLM
mode was asked for; it tells whoever asked that the input did not need it. Runs that took RLM
mode for a reason other than the input are left alone: an evaluation's trials (they run RLM on
purpose, to compare settings) and follow-up questions (they go on in the REPL of the questions
before them, which one direct call cannot).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rlm_desktop import formatting as fmt
from rlm_desktop.engine.config import AUTO_DIRECT_MAX_TOKENS
from rlm_desktop.engine.direct import comfortable_tokens
from rlm_desktop.engine.estimates import estimate_tokens
from rlm_desktop.engine.pricing import PriceBook
from rlm_desktop.review.health.finding import Finding
from rlm_desktop.review.health.view import RunView

ADVICE = (
    "Use --mode auto (or direct) for inputs this short: one call reads it all, for a fraction "
    "of the tokens and with no code to go wrong."
)


def input_tokens(view: RunView, texts: Sequence[str]) -> int:
    """The documents' and the question's tokens: recorded counts where kept, else estimates."""
    model = view.session["model"] or ""
    documents = view.session["documents"]
    total = estimate_tokens(view.session["query"] or "", model)
    for index, document in enumerate(documents):
        if document["tokens"] is not None:
            total += int(document["tokens"])
        elif index < len(texts):
            total += estimate_tokens(texts[index], model)
    return total


def rlm_for_another_reason(settings: Mapping[str, Any]) -> bool:
    """Whether a run's recorded `settings` say it took RLM mode whatever its input: an
    evaluation's trial, or a follow-up question."""
    return bool(settings.get("evaluation_id") or settings.get("follows"))


def short_input_findings(view: RunView, texts: Sequence[str]) -> list[Finding]:
    """A finding when an RLM-mode run's whole input fits the direct-call threshold (none for
    `rlm_for_another_reason`)."""
    session = view.session
    if (session["chosen_mode"] or session["mode"]) != "rlm" or not session["documents"]:
        return []
    settings = session["settings"] or {}
    if rlm_for_another_reason(settings):
        return []
    prices = {name: (pair[0], pair[1]) for name, pair in (settings.get("prices") or {}).items()}
    window = PriceBook(prices).info(session["model"] or "").context_window
    ceiling = int(settings.get("auto_direct_max_tokens") or AUTO_DIRECT_MAX_TOKENS)
    limit = comfortable_tokens(window, ceiling)
    tokens = input_tokens(view, texts)
    if tokens > limit:
        return []
    spent = int(session["input_tokens"] or 0) + int(session["output_tokens"] or 0)
    root = view.root()
    return [
        Finding(
            kind="short_input",
            rule="direct_would_do",
            severity="warning",
            message=(
                f"The input is about {fmt.tokens(tokens)} tokens, within the "
                f"{fmt.tokens(limit)} a direct call handles, yet the run used RLM mode and "
                f"spent {fmt.tokens(spent)} tokens."
            ),
            advice=ADVICE,
            calls=(root["id"],) if root is not None else (),
            figures={"input_tokens": tokens, "direct_limit": limit, "spent_tokens": spent},
        )
    ]
