"""What the provider's reported usage teaches the ledger about its estimates, per model.

The app estimates a request's input tokens with tiktoken; a provider counts with its own tokenizer
(or, a buggy or hostile one, however it likes). What each reply reports sets the model's ratio of
reported to estimated tokens, and later reservations hold the estimate times the largest ratio
seen so far (never less than the estimate), so a provider that counts more than the app is held
closer to what it really charges. Requests are not held back to learn it: a reply is read no
further than its `max_tokens` and settled at most what it held (`reply_stream`,
`reply_acceptance`), so the caps hold from the first request of a fan-out on.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass
class Ratios:
    """How far a model's reported usage ran above what was held for it (1.0: not above)."""

    input: float = 1.0
    output: float = 1.0


class UsageCalibration:
    """Per-model ratios of reported to estimated usage."""

    def __init__(self) -> None:
        self._ratios: dict[str, Ratios] = {}

    def known(self, model: str) -> bool:
        """True once `model` has reported its usage."""
        return model in self._ratios

    def hold(self, model: str, estimate: int, max_output: int) -> tuple[int, int]:
        """(input, output) tokens to hold for a request of `estimate` input tokens."""
        ratios = self._ratios.get(model, Ratios())
        return math.ceil(estimate * ratios.input), math.ceil(max_output * ratios.output)

    def learn(
        self, model: str, estimate: int, max_output: int, reported_input: int, reported_output: int
    ) -> None:
        """Take in one reply's reported usage: later holds of `model` grow to what it showed."""
        ratios = self._ratios.setdefault(model, Ratios())
        ratios.input = max(ratios.input, reported_input / max(1, estimate))
        ratios.output = max(ratios.output, reported_output / max(1, max_output))
