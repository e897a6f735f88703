"""not_stored: what a run produced that its session did not keep — the texts past the session's
stored-text cap (`store/allowance.py`), and the long prompts of calls that ended before they
were sent (each keeps its head and its length: `store/prompt_keeper.py`)."""

from __future__ import annotations

from rlm_desktop import formatting as fmt
from rlm_desktop.engine.config import DEFAULT_STORED_TEXT_CAP_CHARS
from rlm_desktop.review.health.finding import Finding, listed
from rlm_desktop.review.health.view import RunView
from rlm_desktop.store.allowance import CAP_SETTING, HEAD_CHARS, TextAllowance

CAP_ADVICE = (
    "Model code printed or sent far more than a run needs (a prompt injection in a document can "
    f"make a model do that): read the code of the calls named. To keep more, raise {CAP_SETTING}."
)
UNSENT_ADVICE = "Nothing to do: no model read these prompts; the calls are counted and kept."


def not_stored_findings(view: RunView) -> list[Finding]:
    """A warning when the session's cap cut its texts; a note for prompts never sent."""
    settings = view.session.get("settings") or {}
    cap = settings.get(CAP_SETTING) if isinstance(settings, dict) else None
    if not isinstance(cap, int):
        cap = DEFAULT_STORED_TEXT_CAP_CHARS
    reason = TextAllowance(cap).reason
    noted = [call for call in view.calls if call.get("prompt_note")]
    capped = [call["id"] for call in noted if call["prompt_note"] == reason]
    unsent = [call for call in noted if call["prompt_note"] != reason]
    findings = []
    cut = int(view.session.get("cut_chars") or 0)
    if cut:
        findings.append(
            Finding(
                kind="not_stored",
                rule="stored_text_cap",
                severity="warning",
                message=(
                    f"{cut:,} characters this run produced were not stored: {reason}. Each text "
                    f"cut keeps its first {HEAD_CHARS:,} characters and a note saying so"
                    + (f"; prompts cut in {listed(capped)}." if capped else ".")
                ),
                advice=CAP_ADVICE,
                calls=tuple(capped),
                figures={"cut_chars": cut, "cap_chars": cap, "calls": len(capped)},
            )
        )
    if unsent:
        left_out = sum(int(call["prompt_chars"] or 0) - HEAD_CHARS for call in unsent)
        findings.append(
            Finding(
                kind="not_stored",
                rule="unsent_prompts",
                severity="info",
                message=(
                    f"{fmt.plural(len(unsent), 'call')} ended before its long prompt was sent"
                    f" ({unsent[0]['prompt_note']}): each keeps the first"
                    f" {HEAD_CHARS:,} characters of it and its length ({left_out:,} characters"
                    " not stored)."
                ),
                advice=UNSENT_ADVICE,
                calls=tuple(call["id"] for call in unsent),
                figures={"calls": len(unsent), "not_stored_chars": left_out},
            )
        )
    return findings
