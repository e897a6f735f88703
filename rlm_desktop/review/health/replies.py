"""What the model's replies say about it: a run it never replied to (`no_reply`), and replies
that are mostly the same lines over and over (`weak_coder`, rule `repeating_output`)."""

from __future__ import annotations

import zlib

from rlm_desktop import formatting as fmt
from rlm_desktop.review.health.finding import Finding, TurnRef, listed, turn_name
from rlm_desktop.review.health.thresholds import REPEAT_MAX_RATIO, REPEAT_MIN_CHARS
from rlm_desktop.review.health.view import RunView, got_reply

NO_REPLY_ADVICE = (
    "Check the model name and --api-base (a local server's API usually lives under /v1) and "
    "that the server is up and serves that model; the error above is the provider's own word."
)
REPEATING_ADVICE = (
    "The model is looping: use a stronger or instruction-tuned model, or a profile with a lower "
    "output limit so a loop costs less."
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


def packed_share(text: str) -> float:
    """The share of its size that zlib packs `text` to: small for text that repeats itself."""
    raw = text.encode("utf-8", "surrogatepass")
    return len(zlib.compress(raw, 9)) / len(raw) if raw else 1.0


def is_looping(reply: str | None) -> bool:
    """True for a reply of `REPEAT_MIN_CHARS` or more that is mostly the same text again."""
    return len(reply or "") >= REPEAT_MIN_CHARS and packed_share(reply or "") <= REPEAT_MAX_RATIO


def repeating_output_findings(view: RunView) -> list[Finding]:
    """A finding naming the replies, of `REPEAT_MIN_CHARS` or more, that are mostly repeats."""
    looping = [request for request in view.detail.requests if is_looping(request["content"])]
    if not looping:
        return []
    turns: tuple[TurnRef, ...] = tuple(
        (str(request["call_id"]), int(request["turn"]))
        for request in looping
        if request["turn"] is not None
    )
    calls = tuple(dict.fromkeys(str(request["call_id"]) for request in looping))
    where = listed([turn_name(turn) for turn in turns]) if turns else listed(list(calls))
    lowest = min(packed_share(request["content"]) for request in looping)
    return [
        Finding(
            kind="weak_coder",
            rule="repeating_output",
            severity="warning",
            message=(
                f"{fmt.plural(len(looping), 'reply', 'replies')} repeated the same text over and "
                f"over (packed to {lowest:.0%} of its size or less), in {where}."
            ),
            advice=REPEATING_ADVICE,
            calls=calls,
            turns=turns,
            figures={"replies": len(looping), "packed_share": round(lowest, 3)},
        )
    ]
