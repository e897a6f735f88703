"""A batch opened for running: a new one planned (its questions read and checked) and then
recorded in the store, or a stored one reopened (its questions file read again) to resume."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rlm_desktop import ids
from rlm_desktop.batch.questions import QuestionRow, digest, read_questions
from rlm_desktop.batch.records import BatchRecords
from rlm_desktop.batch.runner import Batch
from rlm_desktop.cluster.dispatch import CredentialsFor
from rlm_desktop.engine.config import ConfigError
from rlm_desktop.evaluation.options import EvaluationOptions
from rlm_desktop.evaluation.runner import check_settings
from rlm_desktop.evaluation.settings import Setting

if TYPE_CHECKING:
    from rlm_desktop.cluster.runs import Runs
    from rlm_desktop.engine.folders import EngineFolders
    from rlm_desktop.store import Store

DIGEST = "questions_sha256"
"""The key of the questions file's digest among a batch's stored options."""


class RowError(ConfigError):
    """A setting of one row that the engine refuses: its `FILE:LINE` before the engine's words."""

    def __init__(self, where: str, error: ConfigError) -> None:
        super().__init__(error.problem, error.setting)
        self.where = where

    def __str__(self) -> str:
        return f"{self.where}: {super().__str__()}"

    def worded(self, names: Mapping[str, str]) -> str:
        """The engine's words, the setting named as the caller names it, after `FILE:LINE`."""
        return f"{self.where}: {super().worded(names)}"


@dataclass(frozen=True)
class BatchPlan:
    """A new batch, read and checked, not yet recorded."""

    questions: Path
    """The questions file, absolute."""
    shown: str
    """The file as the user named it (messages say it so)."""
    rows: list[QuestionRow]
    setting: Setting
    options: EvaluationOptions


def new_batch_id() -> str:
    """A sortable, readable id, in the form of a run's (`20261130-101530-3fa2c1`)."""
    from rlm_desktop.engine.run import new_run_id

    return new_run_id()


def distinct_settings(rows: Sequence[QuestionRow]) -> list[Setting]:
    """The settings the rows run under, each once, in the order rows first use them."""
    return list(dict.fromkeys(row.setting for row in rows))


def check_rows(
    rows: Sequence[QuestionRow],
    default: Setting,
    options: EvaluationOptions,
    folders: EngineFolders,
    shown: str,
) -> None:
    """Raise `ConfigError` for a setting the engine would refuse (a dollar cap over a model
    without a price, an unknown profile): the default's as it is, a row's own naming the
    first line that uses it."""
    for setting in distinct_settings(rows):
        try:
            check_settings([setting], options, folders)
        except ConfigError as error:
            if setting == default:
                raise
            line = next(row.line for row in rows if row.setting == setting)
            raise RowError(f"{shown}:{line}", error) from None


def plan_batch(
    questions: Path,
    default: Setting,
    options: EvaluationOptions,
    *,
    folders: EngineFolders,
    shown: str | None = None,
) -> BatchPlan:
    """Read and check a new batch (nothing is recorded: a `ConfigError` says what is wrong)."""
    options.validate()
    name = shown or str(questions)
    rows = read_questions(questions, default, name)
    check_rows(rows, default, options, folders, name)
    return BatchPlan(questions.resolve(), name, rows, default, options)


def create_batch(
    store: Store,
    plan: BatchPlan,
    *,
    folders: EngineFolders,
    credentials: CredentialsFor,
    runs: Runs | None = None,
) -> Batch:
    """Record the planned batch, ready to run."""
    batch_id = new_batch_id()
    options = {**plan.options.to_json(), DIGEST: digest(plan.questions)}
    BatchRecords(store).create(
        batch_id, str(plan.questions), len(plan.rows), plan.setting.to_json(), options
    )
    return Batch(
        store, batch_id, plan.rows, plan.options, folders=folders, credentials=credentials,
        runs=runs,
    )  # fmt: skip


def reopen_batch(
    store: Store,
    batch_id: str,
    overrides: dict[str, Any],
    *,
    folders: EngineFolders,
    credentials: CredentialsFor,
    runs: Runs | None = None,
) -> Batch:
    """A stored batch, to resume (with `runs`, the executor: here by default); `overrides`
    replace its options (a larger budget, a new endpoint) and are recorded. Its questions file
    must be the one it started with."""
    records = BatchRecords(store)
    if not ids.is_well_formed(batch_id):
        raise ConfigError(ids.malformed(batch_id, "batch"))
    record = records.find(batch_id)
    if record is None:
        raise ConfigError(f"{batch_id!r} is not a stored batch", "resume")
    names = {f.name for f in fields(EvaluationOptions)}
    stored = {key: value for key, value in record.options.items() if key in names}
    options = EvaluationOptions.from_json({**stored, **overrides})
    options.validate()
    questions = Path(record.questions)
    if not questions.is_file():
        raise ConfigError(
            f"{questions}: the questions file of batch {batch_id} is not there any more: put it "
            "back to resume the batch"
        )
    if digest(questions) != record.options.get(DIGEST):
        raise ConfigError(
            f"{questions} has changed since batch {batch_id} started, so its rows may not be "
            "the same: put the original back to resume, or start a new batch with it"
        )
    default = Setting.from_json(record.setting)
    rows = read_questions(questions, default)
    check_rows(rows, default, options, folders, str(questions))
    if overrides:
        records.update_options(batch_id, {**options.to_json(), DIGEST: record.options[DIGEST]})
    return Batch(
        store, batch_id, rows, options, folders=folders, credentials=credentials, runs=runs
    )
