"""What the provider's reported usage teaches the ledger about its estimates, per model.

The app estimates a request's input tokens with tiktoken; a provider counts with its own tokenizer
(or, a buggy or hostile one, however it likes). The first request to a model is its probe: it is
sent alone, and what it reports sets the model's ratio of reported to estimated tokens. Later
reservations hold the estimate times the largest ratio seen so far (never less than the estimate),
so a provider that counts more than the app is held to what it really charges from its second
request on.
"""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass

RELEASED_PER_TURN = 16


@dataclass
class Ratios:
    """How far a model's reported usage ran above what was held for it (1.0: not above)."""

    input: float = 1.0
    output: float = 1.0


class UsageCalibration:
    """Per-model ratios of reported to estimated usage, and the probe of each model."""

    def __init__(self) -> None:
        self._ratios: dict[str, Ratios] = {}
        self._probing: dict[str, asyncio.Event] = {}
        self._released = asyncio.Semaphore(RELEASED_PER_TURN)

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

    async def take_turn(self, model: str) -> bool:
        """Wait while another request is probing `model`; True when this one is its probe.

        The requests that waited go on `RELEASED_PER_TURN` per turn of the event loop: a
        fan-out's thousand waiters released in one turn would each estimate, reserve and announce
        their request before the loop could do anything else (a window's loop stalled 100 ms)."""
        while model not in self._ratios:
            probing = self._probing.get(model)
            if probing is None:
                self._probing[model] = asyncio.Event()
                return True
            await probing.wait()
            async with self._released:
                await asyncio.sleep(0)
        return False

    def probe_ended(self, model: str) -> None:
        """The probe of `model` came back (or failed): let the requests waiting for it go."""
        probing = self._probing.pop(model, None)
        if probing is not None:
            probing.set()
