"""A suggestion for `auto` mode's threshold (`RunConfig.auto_direct_max_tokens`, default
`AUTO_DIRECT_MAX_TOKENS`) from measured scores: below it `auto` answers with one direct call.

For each root model measured both in `direct` and in `rlm` mode, the scores are compared
length by length (the task lengths of the evaluation). The suggestion is the longest length up to
which direct scored at least as well as RLM at every measured length (a tie goes to direct: it
is one call, cheaper and faster); past it RLM scored better.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from rlm_desktop.engine.config import AUTO_DIRECT_MAX_TOKENS
from rlm_desktop.evaluation.settings import Setting
from rlm_desktop.evaluation.trial import TrialResult
from rlm_desktop.formatting import tokens


@dataclass(frozen=True)
class LengthScores:
    """Mean scores of direct and RLM at one task length."""

    length: int
    direct: float
    rlm: float


@dataclass(frozen=True)
class Suggestion:
    """The threshold suggested for one model (None: RLM won even at the shortest length)."""

    model: str
    threshold: int | None
    by_length: tuple[LengthScores, ...]

    def sentence(self) -> str:
        """The suggestion in one line, against the current default."""
        default = f"(default {tokens(AUTO_DIRECT_MAX_TOKENS)})"
        measured = ", ".join(
            f"{tokens(s.length)}: direct {s.direct:.2f} vs rlm {s.rlm:.2f}" for s in self.by_length
        )
        if self.threshold is None:
            advice = (
                f"rlm scored better from the shortest length measured: use rlm, or a threshold "
                f"under {tokens(self.by_length[0].length)} tokens"
            )
        elif self.threshold == self.by_length[-1].length:
            advice = (
                f"direct held up to the longest length measured: a threshold of at least "
                f"{tokens(self.threshold)} tokens (measure longer inputs to find its limit)"
            )
        else:
            advice = f"suggested threshold {tokens(self.threshold)} tokens"
        return f"auto mode, {self.model}: {advice} {default} [{measured}]"


def suggest(settings: Sequence[Setting], results: Sequence[TrialResult]) -> list[Suggestion]:
    """One suggestion per model measured in both modes."""
    suggestions = []
    for model in dict.fromkeys(s.model for s in settings):
        direct = _by_length(settings, results, model, "direct")
        rlm = _by_length(settings, results, model, "rlm")
        lengths = sorted(set(direct) & set(rlm))
        if not lengths:
            continue
        rows = tuple(LengthScores(n, direct[n], rlm[n]) for n in lengths)
        threshold = None
        for row in rows:
            if row.direct < row.rlm:
                break
            threshold = row.length
        suggestions.append(Suggestion(model, threshold, rows))
    return suggestions


def _by_length(
    settings: Sequence[Setting], results: Sequence[TrialResult], model: str, mode: str
) -> dict[int, float]:
    """Mean score per nominal length of the model's settings in `mode`."""
    names = {s.name for s in settings if s.model == model and s.mode == mode}
    scores: dict[int, list[float]] = {}
    for result in results:
        if result.setting in names:
            scores.setdefault(result.length, []).append(result.score)
    return {length: statistics.fmean(values) for length, values in scores.items()}
