"""What the app accepts of a reply, whatever the provider does: never more output than the call's
`max_tokens`, never usage far above what the call held.

The ledger holds each call's worst case before it is sent and settles it to the reply's usage, so
a fan-out in flight can never pass a cap — as long as replies keep to what was held. A provider
that ignores `max_tokens` (or reports usage it did not produce, or none at all) would otherwise
settle far past the hold: a first reply small, then 64 replies of 100,000 tokens each took a $0.10
cap to $2.40. Here a reply's text is cut at the call's `max_tokens`, its output is counted at most
that, its input at most what was held for it, and a missing count is the app's own estimate; what
was cut or capped is said in `stopped_early`. The ledger still learns from what the provider
reported (`calibration`), so later holds grow to a provider that really counts more.
"""

from __future__ import annotations

import dataclasses

from rlm_desktop.engine.encodings import tokenizer_for
from rlm_desktop.engine.estimates import estimate_tokens
from rlm_desktop.engine.ledger import Reservation
from rlm_desktop.engine.llm import Completion

OVERRUN_MARGIN = 1.25
"""A reply's text is cut only when the app's count of it passes `max_tokens` by this much:
tokenizers differ, and an honest reply at its limit must never lose its last words."""
CUT_FINISH_REASON = "length"


def _cut(text: str, tokens: int, model: str) -> str:
    encoding, _own = tokenizer_for(model)
    if encoding is None:
        return text.encode("utf-8", "surrogatepass")[: tokens * 3].decode("utf-8", "ignore")
    return str(encoding.decode(encoding.encode(text, disallowed_special=())[:tokens]))


def within_hold(completion: Completion, reservation: Reservation) -> Completion:
    """`completion` as the ledger may settle it (see the module's docstring); its cost is
    recounted from the counts kept."""
    model = reservation.model
    allowed = reservation.max_output
    content, notes = completion.content, []
    finish = completion.finish_reason
    own_count = None
    if len(content.encode("utf-8", "surrogatepass")) > allowed:  # a token is at least one byte
        own_count = estimate_tokens(content, model.name)
        if own_count > allowed * OVERRUN_MARGIN:
            content, finish = _cut(content, allowed, model.name), CUT_FINISH_REASON
            notes.append(
                f"the provider sent about {own_count:,} output tokens past the max_tokens of "
                f"{allowed:,} it was sent; the app kept the first {allowed:,}"
            )
    output = completion.output_tokens
    if not output and content:
        output = own_count or estimate_tokens(content, model.name)
    elif output > allowed:
        notes.append(
            f"the provider reported {output:,} output tokens for a call sent max_tokens "
            f"{allowed:,}; {allowed:,} were counted"
        )
    output = min(output, allowed)
    held = reservation.input_tokens
    reported_input = completion.input_tokens or reservation.estimate
    if reported_input > held:
        notes.append(
            f"the provider reported {reported_input:,} input tokens for a request the app "
            f"held {held:,} for; {held:,} were counted"
        )
    input_tokens = min(reported_input, held)
    if not notes and (output, input_tokens) == (completion.output_tokens, completion.input_tokens):
        return completion
    return dataclasses.replace(
        completion,
        content=content,
        input_tokens=input_tokens,
        output_tokens=output,
        cost_usd=model.cost(input_tokens, output),
        finish_reason=finish,
        stopped_early="; ".join(notes) or None,
    )
