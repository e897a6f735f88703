"""What the model's replies say about it: a run it never replied to (`no_reply`)."""

from __future__ import annotations

from rlm_desktop import formatting as fmt
from rlm_desktop.review.health.finding import Finding
from rlm_desktop.review.health.view import RunView, got_reply

NO_REPLY_ADVICE = (
    "Check the model name and --api-base (a local server's API usually lives under /v1) and "
    "that the server is up and serves that model; the error above is the provider's own word."
)


def no_reply_findings(view: RunView) -> list[Finding]:
    """A finding when the run sent requests and not one of them got a reply."""
    requests = view.detail.requests
    if not requests or any(got_reply(request) for request in requests):
        return []
    errors = [request["error"] for request in requests if request["error"]]
    error = errors[-1] if errors else "no reply came back"
    return [
        Finding(
            kind="no_reply",
            rule="every_request_failed",
            severity="warning",
            message=(
                f"The model never replied: the provider refused or failed all "
                f"{fmt.plural(len(requests), 'request')} ({fmt.one_line(error, 300)})."
            ),
            advice=NO_REPLY_ADVICE,
            calls=tuple(dict.fromkeys(str(request["call_id"]) for request in requests)),
            figures={"requests": len(requests), "error": error},
        )
    ]
