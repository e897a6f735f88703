"""Progress of an evaluation or a batch on stderr: one bar per group (a setting, a batch) on a
terminal, one line per finished trial otherwise (a log, a CI job, a pipe)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TextIO

from rlm_desktop import formatting as fmt

if TYPE_CHECKING:
    from rlm_desktop.cluster.runs import RanOn
    from rlm_desktop.evaluation.runner import EvaluationEvent

Say = Callable[[str], None]


class Ended(Protocol):
    """How a trial ended, as its progress line tells it (an evaluation's `TrialResult`, a
    batch's `RowResult`)."""

    @property
    def status(self) -> str: ...
    @property
    def cost_usd(self) -> float: ...
    @property
    def unpriced(self) -> bool: ...
    @property
    def wall_s(self) -> float: ...
    @property
    def error(self) -> str | None: ...
    @property
    def executor(self) -> str: ...
    @property
    def node(self) -> str: ...
    @property
    def attempts(self) -> int: ...
    @property
    def failed(self) -> bool: ...


def finished_line(
    done: int, total: int, name: str, result: Ended, score: float | None = None
) -> str:
    """The line of a finished trial: its place in the count, its `name` (`setting on task`,
    `row 7`), how it ended (with its `score`, if it has one), and where it ran."""
    scored = f"score {score:.2f}, " if score is not None else ""
    where = f" on {result.node}" if result.executor != "local" and result.node else ""
    retried = " (retried)" if result.attempts > 1 else ""
    text = (
        f"[{done}/{total}] {name}{where}{retried}: {scored}"
        f"{fmt.status_text(result.status)}, {fmt.cost(result.cost_usd, result.unpriced)}, "
        f"{fmt.seconds(result.wall_s)}"
    )
    return text + (f" ({fmt.one_line(result.error)})" if result.error else "")


class TrialProgress:
    """Follows an evaluation's events (`Evaluation.add_listener` takes it as it is), or any
    runner's told through `finished`, `placed` and `skipped`, bars by group."""

    def __init__(
        self,
        say: Say,
        groups: Sequence[str],
        done: dict[str, int],
        totals: dict[str, int],
        *,
        stream: TextIO,
        scored: bool = True,
        unit: str = "trial",
    ) -> None:
        self._say = say
        self._scored = scored
        self._done = sum(done.values())
        self._total = sum(totals.values())
        self._bars: dict[str, Any] = {}
        if _has_room(stream):
            from tqdm import tqdm

            width = max(len(group) for group in groups) if groups else 0
            for position, group in enumerate(groups):
                self._bars[group] = tqdm(
                    total=totals.get(group, 0),
                    initial=done.get(group, 0),
                    desc=fmt.terminal_safe(group.ljust(width)),
                    position=position,
                    file=stream,
                    unit=unit,
                    dynamic_ncols=True,
                )

    def __call__(self, event: EvaluationEvent) -> None:
        from rlm_desktop.evaluation.runner import TrialFinished, TrialPlaced, TrialSkipped

        if isinstance(event, TrialFinished):
            result = event.result
            score = result.score if self._scored else None
            self.finished(result.setting, f"{result.setting} on {result.task_id}", result, score)
        elif isinstance(event, TrialPlaced):
            self.placed(event.setting, event.task_id, event.ran_on)
        elif isinstance(event, TrialSkipped):
            self.skipped(event.setting, f"{event.setting} on {event.task_id}", event.reason)

    def finished(self, group: str, name: str, result: Ended, score: float | None = None) -> None:
        """A trial of `group` ended: its bar moves on (a line for a failure), or its line."""
        self._done += 1
        line = finished_line(self._done, self._total, name, result, score)
        bar = self._bars.get(group)
        if bar is None:
            self._say(line)
            return
        bar.update(1)
        bar.set_postfix_str(fmt.status_text(result.status), refresh=True)
        if result.failed:
            bar.write(fmt.terminal_safe(line))

    def placed(self, group: str, name: str, ran_on: RanOn) -> None:
        """A trial of `group` is under way at `ran_on`: its bar says where."""
        bar = self._bars.get(group)
        if bar is not None:
            bar.set_postfix_str(fmt.terminal_safe(f"{name} on {ran_on.label()}"), refresh=True)

    def skipped(self, group: str, name: str, reason: str) -> None:
        """A trial of `group` was not started, and why."""
        text = f"not started {name}: {reason}"
        bar = self._bars.get(group)
        if bar is None:
            self._say(text)
        else:
            bar.write(fmt.terminal_safe(text))

    def close(self) -> None:
        """End the bars (the lines after them start below)."""
        for bar in self._bars.values():
            bar.close()


MIN_BAR_COLUMNS = 40


def _has_room(stream: TextIO) -> bool:
    """Whether `stream` is a terminal wide enough for bars (a pseudo-terminal of no size, as some
    CI runners give, gets the lines)."""
    import os

    if not stream.isatty():
        return False
    try:
        return os.get_terminal_size(stream.fileno()).columns >= MIN_BAR_COLUMNS
    except (OSError, ValueError):
        return False
