"""truncated: replies cut at the output-token limit — a reasoning model that ran out of room
mid-thought, or code cut mid-line. Replies that reached the limit repeating themselves (a model
that never stops) are told so: more room would buy more of the same."""

from __future__ import annotations

from collections.abc import Sequence

from rlm_desktop import formatting as fmt
from rlm_desktop.engine.pricing import PriceBook
from rlm_desktop.engine.profiles import Profile
from rlm_desktop.review.health.finding import Finding, TurnRef, listed
from rlm_desktop.review.health.replies import is_looping
from rlm_desktop.review.health.view import RunView
from rlm_desktop.store.detail import Row

NEVER_STOPS_ADVICE = (
    "These replies ran to the limit repeating themselves: the model does not stop by itself, and "
    "more room would only buy more of the same. Keep the limit low; on your own server, let the "
    "profile hold replies to prose and one code block (Settings → Profiles); or use an "
    "instruction-tuned model."
)


def truncation_findings(view: RunView, profiles: Sequence[Profile]) -> list[Finding]:
    """One finding for root (REPL) replies cut short and one for sub-call replies."""
    kinds = {call["id"]: call["kind"] for call in view.calls}
    cut = [r for r in view.detail.requests if r["truncated"]]
    findings = []
    for is_repl in (True, False):
        requests = [r for r in cut if (kinds.get(r["call_id"]) == "rlm") == is_repl]
        if requests:
            findings.append(_finding(view, requests, is_repl, profiles))
    return findings


def _finding(
    view: RunView, requests: list[Row], is_repl: bool, profiles: Sequence[Profile]
) -> Finding:
    calls = list(dict.fromkeys(r["call_id"] for r in requests))
    turns: list[TurnRef] = [(r["call_id"], r["turn"]) for r in requests if r["turn"] is not None]
    models = sorted({r["model"] for r in requests if r["model"]})
    longest = max(int(r["output_tokens"] or 0) for r in requests)
    one, many = ("REPL turn", "REPL turns") if is_repl else ("sub-call reply", "sub-call replies")
    cut = fmt.plural(len(requests), one, many) + (" was" if len(requests) == 1 else " were")
    return Finding(
        kind="truncated",
        rule="repl_reply" if is_repl else "sub_call_reply",
        severity="warning",
        message=(
            f"{cut} cut at the output-token limit (up to "
            f"{longest:,} tokens, {', '.join(models)}), in {listed(calls)}."
        ),
        advice=(
            NEVER_STOPS_ADVICE
            if all(is_looping(r["content"]) for r in requests)
            else headroom_advice(view, models, is_repl, longest, profiles)
        ),
        calls=tuple(calls),
        turns=tuple(turns),
        figures={"replies": len(requests), "output_tokens": longest, "models": models},
    )


def headroom_advice(
    view: RunView, models: list[str], is_repl: bool, used: int, profiles: Sequence[Profile]
) -> str:
    """Which profile would give the replies room, or why none can."""
    settings = view.session["settings"] or {}
    prices = {name: (pair[0], pair[1]) for name, pair in (settings.get("prices") or {}).items()}
    ceiling = min((PriceBook(prices).info(model).max_output_tokens for model in models), default=0)
    setting = "root_max_output_tokens" if is_repl else "sub_max_output_tokens"
    current = next((p for p in profiles if p.name == view.session["profile"]), None)
    current_limit = getattr(current, setting) if current is not None else used
    if ceiling and ceiling <= max(current_limit, used):
        return (
            f"{listed(models, 2)} cannot write more than {ceiling:,} tokens a reply: ask for "
            "shorter replies, or choose a model with a larger output limit."
        )

    def room(profile: Profile) -> int:
        limit = int(getattr(profile, setting))
        return min(limit, ceiling) if ceiling else limit

    roomier = sorted((p for p in profiles if room(p) > current_limit), key=room, reverse=True)
    if roomier:
        best = roomier[0]
        return (
            f"Run with --profile {best.name} ({room(best):,} output tokens for "
            f"{'root calls' if is_repl else 'sub-calls'}, against {current_limit:,} now), or "
            f"raise {setting} in Settings → Profiles."
        )
    profile = view.session["profile"] or "the run's profile"
    return f"Raise {setting} of profile {profile} in Settings → Profiles (now {current_limit:,})."
