"""An evaluation opened for running: a new one recorded in the store, or a stored one reopened
(its tasks generated again from their description) to resume where it stopped."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rlm_desktop import ids
from rlm_desktop.cluster.dispatch import CredentialsFor
from rlm_desktop.engine.config import ConfigError
from rlm_desktop.evaluation.allowance import Grant
from rlm_desktop.evaluation.options import EvaluationOptions
from rlm_desktop.evaluation.records import EvaluationRecords
from rlm_desktop.evaluation.runner import (
    PROBE,
    Evaluation,
    check_settings,
    run_config,
)
from rlm_desktop.evaluation.settings import Setting, unique_names
from rlm_desktop.evaluation.task_sets import GENERATORS, TaskSpec, generate

if TYPE_CHECKING:
    from rlm_desktop.cluster.runs import Runs
    from rlm_desktop.engine.folders import EngineFolders
    from rlm_desktop.engine.preflight import PreflightProblem
    from rlm_desktop.store import Store


def new_evaluation_id() -> str:
    """A sortable, readable id, in the form of a run's (`20261130-101530-3fa2c1`)."""
    from rlm_desktop.engine.run import new_run_id

    return new_run_id()


def absolute_kinds(spec: TaskSpec) -> TaskSpec:
    """The spec with users' task paths made absolute, so a resume finds them from anywhere."""
    kinds = tuple(k if k in GENERATORS else str(Path(k).expanduser().resolve()) for k in spec.kinds)
    return replace(spec, kinds=kinds)


def create_evaluation(
    store: Store,
    spec: TaskSpec,
    settings: Sequence[Setting],
    options: EvaluationOptions,
    *,
    folders: EngineFolders,
    credentials: CredentialsFor,
    runs: Runs | None = None,
) -> Evaluation:
    """Check everything, generate the tasks, then record a new evaluation (nothing is recorded
    when the input is wrong: a `ConfigError` says what)."""
    if not settings:
        raise ConfigError(
            'is missing: give one or more, e.g. "model=openai/gpt-5-mini,mode=rlm"', "setting"
        )
    unique_names(list(settings))
    options.validate()
    check_settings(settings, options, folders)
    spec = absolute_kinds(spec)
    tasks = generate(spec)
    evaluation_id = new_evaluation_id()
    EvaluationRecords(store).create(
        evaluation_id, spec.to_json(), [s.to_json() for s in settings], options.to_json()
    )
    return Evaluation(
        store, evaluation_id, tasks, settings, options, folders=folders, credentials=credentials,
        runs=runs,
    )  # fmt: skip


def reopen_evaluation(
    store: Store,
    evaluation_id: str,
    overrides: dict[str, Any],
    *,
    folders: EngineFolders,
    credentials: CredentialsFor,
    runs: Runs | None = None,
) -> Evaluation:
    """A stored evaluation, to resume (with `runs`, the executor: here by default); `overrides`
    replace its options (a larger budget, a new endpoint) and are recorded."""
    records = EvaluationRecords(store)
    if not ids.is_well_formed(evaluation_id):
        raise ConfigError(ids.malformed(evaluation_id, "evaluation"))
    record = records.find(evaluation_id)
    if record is None:
        raise ConfigError(f"{evaluation_id!r} is not a stored evaluation", "resume")
    options = EvaluationOptions.from_json({**record.options, **overrides})
    options.validate()
    settings = [Setting.from_json(s) for s in record.settings]
    check_settings(settings, options, folders)
    tasks = generate(TaskSpec.from_json(record.spec))
    if overrides:
        records.update_options(evaluation_id, options.to_json())
    return Evaluation(
        store, evaluation_id, tasks, settings, options, folders=folders, credentials=credentials,
        runs=runs,
    )  # fmt: skip


async def preflight_settings(
    settings: Sequence[Setting], options: EvaluationOptions, credentials: CredentialsFor
) -> list[PreflightProblem]:
    """The pre-flight problems of every setting (model names, endpoint, keys), each once;
    nothing is sent to a model."""
    from rlm_desktop.engine.preflight import preflight

    problems: list[PreflightProblem] = []
    for setting in settings:
        config = run_config(setting, PROBE, options, Grant(None, None))
        found = await preflight(config, credentials(config.model, config.api_base))
        problems.extend(p for p in found if p not in problems)
    return problems
