"""Progress of an evaluation or a batch on stderr: one bar per setting (or per batch) on a
terminal, one line per finished trial otherwise (a log, a CI job, a pipe)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TextIO

from rlm_desktop import formatting as fmt

if TYPE_CHECKING:
    from rlm_desktop.evaluation.runner import EvaluationEvent
    from rlm_desktop.evaluation.trial import TrialResult

Say = Callable[[str], None]


def finished_line(done: int, total: int, result: TrialResult, *, scored: bool = True) -> str:
    """The line of a finished trial: its place in the count, how it ended, and where it ran."""
    score = f"score {result.score:.2f}, " if scored else ""
    where = f" on {result.node}" if result.executor != "local" and result.node else ""
    retried = " (retried)" if result.attempts > 1 else ""
    text = (
        f"[{done}/{total}] {result.setting} on {result.task_id}{where}{retried}: {score}"
        f"{fmt.status_text(result.status)}, {fmt.cost(result.cost_usd, result.unpriced)}, "
        f"{fmt.seconds(result.wall_s)}"
    )
    return text + (f" ({fmt.one_line(result.error)})" if result.error else "")


class TrialProgress:
    """Follows an evaluation's events (`Evaluation.add_listener`)."""

    def __init__(
        self,
        say: Say,
        groups: Sequence[str],
        done: dict[str, int],
        totals: dict[str, int],
        *,
        stream: TextIO,
        scored: bool = True,
    ) -> None:
        self._say = say
        self._scored = scored
        self._done = sum(done.values())
        self._total = sum(totals.values())
        self._bars: dict[str, Any] = {}
        if stream.isatty():
            from tqdm import tqdm

            width = max(len(group) for group in groups) if groups else 0
            for position, group in enumerate(groups):
                self._bars[group] = tqdm(
                    total=totals.get(group, 0),
                    initial=done.get(group, 0),
                    desc=group.ljust(width),
                    position=position,
                    file=stream,
                    unit="trial",
                    dynamic_ncols=True,
                )

    def __call__(self, event: EvaluationEvent) -> None:
        from rlm_desktop.evaluation.runner import TrialFinished, TrialPlaced, TrialSkipped

        if isinstance(event, TrialFinished):
            self._done += 1
            line = finished_line(self._done, self._total, event.result, scored=self._scored)
            bar = self._bars.get(event.result.setting)
            if bar is None:
                self._say(line)
                return
            bar.update(1)
            bar.set_postfix_str(fmt.status_text(event.result.status), refresh=True)
            if event.result.failed:
                bar.write(fmt.terminal_safe(line))
        elif isinstance(event, TrialPlaced):
            bar = self._bars.get(event.setting)
            if bar is not None:
                bar.set_postfix_str(f"{event.task_id} on {event.ran_on.label()}", refresh=True)
        elif isinstance(event, TrialSkipped):
            text = f"not started {event.setting} on {event.task_id}: {event.reason}"
            bar = self._bars.get(event.setting)
            if bar is None:
                self._say(text)
            else:
                bar.write(fmt.terminal_safe(text))

    def close(self) -> None:
        """End the bars (the lines after them start below)."""
        for bar in self._bars.values():
            bar.close()
