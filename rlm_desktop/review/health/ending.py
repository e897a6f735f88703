"""How a run that did not complete ended, as findings (`ended_early`), so a failed, stopped or
timed-out run never reads "no findings": what ended it and the calls it left without a reply;
and the requests the provider made the app retry (`provider_errors`), in any run."""

from __future__ import annotations

from rlm_desktop import formatting as fmt
from rlm_desktop.review.health.finding import Finding, listed
from rlm_desktop.review.health.view import RunView, got_reply

ENDED_EARLY = ("error", "cancelled", "timeout", "interrupted")
ADVICE = {
    "error": "Read the error above: it is the provider's or the engine's own word; the calls "
    "listed are the ones it left without a reply.",
    "cancelled": "Nothing to change if you meant to stop it; what the calls listed were given "
    "was not read, so the answer (if any) did not see it.",
    "timeout": "Give the run more time, or ask a narrower question; a local model writes "
    "slowly, so a smaller output limit per reply helps too.",
    "interrupted": "The app or the machine stopped before the run ended; run the question "
    "again.",
}
RETRY_ADVICE = (
    "A provider that keeps failing and recovering is overloaded or rate-limited: lower the "
    "concurrency or wait; a deterministic error (a 400) is never retried."
)


def ending_findings(view: RunView) -> list[Finding]:
    """Why a run that did not complete ended, with the calls left without a reply (none for a
    completed run, nor for a failure `no_reply` already explains)."""
    status = str(view.session["status"])
    if status not in ENDED_EARLY:
        return []
    requests = view.detail.requests
    if status == "error" and requests and not any(got_reply(r) for r in requests):
        return []  # no_reply says it: the model never replied at all
    unanswered = [
        call
        for call in view.calls
        if call["parent_id"] is not None and not view.replied(call["id"])
    ]
    error = str(view.session.get("error") or "")
    said = f": {fmt.one_line(error, 300)}" if error else ""
    left = (
        f" {fmt.plural(len(unanswered), 'sub-call')} never got a reply"
        f" ({listed([str(call['id']) for call in unanswered])}),"
        " so what they were given was not read."
        if unanswered
        else ""
    )
    return [
        Finding(
            kind="ended_early",
            rule=status,
            severity="info" if status == "cancelled" else "warning",
            message=f"The run ended {fmt.status_text(status)}{said}.{left}",
            advice=ADVICE[status],
            calls=tuple(str(call["id"]) for call in unanswered),
            figures={"status": status, "unanswered_sub_calls": len(unanswered), "error": error},
        )
    ]


def retry_findings(view: RunView) -> list[Finding]:
    """A finding naming the requests that needed more than one attempt, with how many."""
    retried = [r for r in view.detail.requests if int(r["attempts"] or 1) > 1]
    if not retried:
        return []
    extra = sum(int(r["attempts"]) - 1 for r in retried)
    return [
        Finding(
            kind="provider_errors",
            rule="retried",
            severity="info",
            message=(
                f"{fmt.plural(len(retried), 'request')} needed retries"
                f" ({fmt.plural(extra, 'retry', 'retries')} in all) before the provider answered"
                " or the app gave up."
            ),
            advice=RETRY_ADVICE,
            calls=tuple(dict.fromkeys(str(r["call_id"]) for r in retried)),
            figures={"requests": len(retried), "retries": extra},
        )
    ]
