"""Past evaluations read back from the store: a line each for the evaluation page's list, and
one reopened whole (its results, table rows, chart points and footer) without running anything.

An evaluation is `complete` when every trial it planned has a result, `running` while one of its
sessions is being written by a live process, and `partial` otherwise (stopped, cut short by the
total budget, or killed midway): the trials without a result are what a resume would run.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from rlm_desktop import formatting as fmt
from rlm_desktop.engine.config import ConfigError
from rlm_desktop.evaluation.options import EvaluationOptions
from rlm_desktop.evaluation.records import SESSIONS, EvaluationRecord, EvaluationRecords
from rlm_desktop.evaluation.report import footer
from rlm_desktop.evaluation.settings import Setting
from rlm_desktop.evaluation.summary import SettingSummary, summarize_all
from rlm_desktop.evaluation.task_sets import GENERATORS, TaskSpec
from rlm_desktop.evaluation.threshold import suggest
from rlm_desktop.evaluation.trial import TrialResult
from rlm_desktop.evaluation.user_tasks import tasks_file

if TYPE_CHECKING:
    from rlm_desktop.store import Store

State = Literal["complete", "partial", "running"]


@dataclass(frozen=True)
class PastEvaluation:
    """One line of the list of past evaluations."""

    id: str
    created_at: str
    """When it was created, ISO 8601 with the local offset."""
    tasks: str
    """The task set in a few words (`needle · 4,000/16,000 tokens · 5 each`)."""
    settings: tuple[str, ...]
    planned: int | None
    """Trials it was asked to run (None when a user's task file is gone)."""
    done: int
    state: State
    scores: tuple[tuple[str, float | None], ...]
    """Each setting's mean score (None for a setting without a finished trial)."""

    @property
    def trials(self) -> str:
        """`3 of 4 trials`, or `3 trials` when the plan is unknown."""
        if self.planned is None:
            return f"{self.done:,} trials" if self.done != 1 else "1 trial"
        return f"{self.done:,} of {self.planned:,} trials"

    @property
    def score_line(self) -> str:
        """`good 1.00 · bad 0.00` (`–` for a setting without results)."""
        return " · ".join(
            f"{name} {'–' if value is None else f'{value:.2f}'}" for name, value in self.scores
        )


@dataclass(frozen=True)
class EvaluationView:
    """A stored evaluation as the page shows it after a run: its results and what follows."""

    past: PastEvaluation
    setting_names: tuple[str, ...]
    results: tuple[TrialResult, ...]
    summaries: tuple[SettingSummary, ...]
    footer: tuple[str, ...]
    spent_usd: float
    max_cost_usd: float | None
    tasks_per_setting: int | None


def describe_tasks(spec: TaskSpec) -> str:
    """The task set in a few words: the generated kinds with their lengths and count, and the
    names of users' task files."""
    generated = [kind for kind in spec.kinds if kind in GENERATORS]
    parts = []
    if generated:
        lengths = "/".join(f"{n:,}" for n in spec.lengths)
        parts.append(f"{', '.join(generated)} · {lengths} tokens · {spec.count} each")
    parts.extend(fmt.file_name(kind) for kind in spec.kinds if kind not in GENERATORS)
    return " + ".join(parts) or "no tasks"


def planned_tasks(spec: TaskSpec) -> int | None:
    """How many tasks the spec generates, each run once under every setting (None when a
    user's task file cannot be read any more). A user's file counts a task a non-blank line, as
    `user_tasks` reads it, without loading the documents its tasks name."""
    total = 0
    for kind in spec.kinds:
        if kind in GENERATORS:
            total += spec.count * len(spec.lengths)
            continue
        try:
            text = tasks_file(Path(kind)).read_text(encoding="utf-8")
        except (ConfigError, OSError, UnicodeDecodeError):
            return None
        total += sum(1 for line in text.splitlines() if line.strip())
    return total


def _running(store: Store) -> set[str]:
    """The evaluations one of whose sessions is still being written."""
    with store.lock:
        rows = store.db.execute(
            f"SELECT DISTINCT e.evaluation_id FROM {SESSIONS} e "
            "JOIN sessions s ON s.id = e.session_id WHERE s.status = 'running'"
        ).fetchall()
    return {row[0] for row in rows}


def _past(
    record: EvaluationRecord, results: list[TrialResult], running: bool
) -> tuple[PastEvaluation, int | None]:
    spec = TaskSpec.from_json(record.spec)
    names = tuple(str(s.get("name", "?")) for s in record.settings)
    per_setting = planned_tasks(spec)
    planned = None if per_setting is None else per_setting * len(names)
    state: State = "running" if running else "partial"
    if not running and planned is not None and len(results) >= planned:
        state = "complete"
    scores = tuple((name, _mean([r.score for r in results if r.setting == name])) for name in names)
    past = PastEvaluation(
        id=record.id, created_at=record.created_at, tasks=describe_tasks(spec), settings=names,
        planned=planned, done=len(results), state=state, scores=scores,
    )  # fmt: skip
    return past, per_setting


def _mean(values: list[float]) -> float | None:
    return statistics.fmean(values) if values else None


def past_evaluations(store: Store) -> list[PastEvaluation]:
    """Every stored evaluation, newest first (an unreadable record is left out)."""
    records = EvaluationRecords(store)
    running = _running(store)
    found = []
    for record in records.all():
        try:
            past, _ = _past(record, records.results(record.id), record.id in running)
        except (KeyError, TypeError, ValueError):
            continue
        found.append(past)
    return found


def reopen_view(store: Store, evaluation_id: str) -> EvaluationView | None:
    """The stored evaluation `evaluation_id` as the page shows it after a run, or None when
    there is none (or its record cannot be read)."""
    records = EvaluationRecords(store)
    record = records.find(evaluation_id)
    if record is None:
        return None
    try:
        settings = [Setting.from_json(s) for s in record.settings]
        options = EvaluationOptions.from_json(record.options)
        results = records.results(evaluation_id)
        past, per_setting = _past(record, results, evaluation_id in _running(store))
    except (KeyError, TypeError, ValueError):
        return None
    names = tuple(s.name for s in settings)
    spent, _tokens = records.spent(evaluation_id)
    pending = 0 if past.planned is None else max(past.planned - past.done, 0)
    lines = footer(suggest(settings, results), spent, options.max_cost_usd, pending)
    return EvaluationView(
        past=past, setting_names=names, results=tuple(results),
        summaries=tuple(summarize_all(names, results)), footer=tuple(lines), spent_usd=spent,
        max_cost_usd=options.max_cost_usd, tasks_per_setting=per_setting,
    )  # fmt: skip
