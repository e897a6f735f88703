"""Opening the evaluation the page is about to run, off the GUI thread where it waits: a new one
(after the pre-flight check of its models, server and keys) or a partial one to resume, with
its trials on this machine or on the Ray cluster the form names. Whatever stops it is one line
for the page (`NotStarted`), and nothing is recorded."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from rlm_desktop import paths
from rlm_desktop.engine.config import ConfigError
from rlm_desktop.ui.evaluation.form import FIELD_NAMES

if TYPE_CHECKING:
    from rlm_desktop.cluster.runs import Runs
    from rlm_desktop.evaluation.options import EvaluationOptions
    from rlm_desktop.evaluation.runner import Evaluation
    from rlm_desktop.evaluation.settings import Setting
    from rlm_desktop.evaluation.task_sets import TaskSpec
    from rlm_desktop.store import Store
    from rlm_desktop.ui.evaluation.cluster import ClusterLink

Say = Callable[[str], None]
JOINING = {
    "local": "Starting a Ray cluster on this machine…",
    "auto": "Joining the Ray cluster RAY_ADDRESS names or this machine runs…",
}
"""What the page says while it joins a cluster named by a word rather than its address."""


class NotStarted(Exception):
    """Why the evaluation did not start, in one line for the page."""


async def executor(cluster: ClusterLink, address: str | None, say: Say) -> Runs:
    """This machine, or the cluster at `address` joined (`NotStarted` when it cannot be)."""
    if address is not None and cluster.joined != address:
        say(JOINING.get(address, f"Joining the Ray cluster at {address}…"))
    try:
        return await cluster.executor(address, paths.engine_folders())
    except ConfigError as error:
        from rlm_desktop.cluster.connect import RAY_MISSING

        problem = (
            f"running on a Ray cluster {RAY_MISSING}"
            if error.problem == RAY_MISSING
            else error.problem
        )
        raise NotStarted(f"Not started: {problem}") from None


async def open_new(
    store: Store,
    spec: TaskSpec,
    settings: list[Setting],
    options: EvaluationOptions,
    *,
    cluster: ClusterLink,
    address: str | None,
    say: Say,
) -> Evaluation:
    """A new evaluation, recorded once its settings pass the pre-flight check and its
    executor is at hand."""
    from rlm_desktop.commands.eval import preflight_line
    from rlm_desktop.commands.run import credentials_for
    from rlm_desktop.evaluation.opening import create_evaluation, preflight_settings

    try:
        problems = await preflight_settings(settings, options, credentials_for)
    except ConfigError as error:
        raise NotStarted(error.worded(FIELD_NAMES)) from None
    if problems:
        raise NotStarted(f"Not started: {preflight_line(problems[0])}.")
    runs = await executor(cluster, address, say)
    try:
        return create_evaluation(
            store, spec, settings, options, folders=paths.engine_folders(),
            credentials=credentials_for, runs=runs,
        )  # fmt: skip
    except ConfigError as error:
        await cluster.leave()
        raise NotStarted(error.worded(FIELD_NAMES)) from None


async def open_partial(
    store: Store, evaluation_id: str, *, cluster: ClusterLink, address: str | None, say: Say
) -> Evaluation:
    """The stored evaluation `evaluation_id`, reopened to run what it has not run."""
    from rlm_desktop.commands.run import credentials_for
    from rlm_desktop.evaluation.opening import reopen_evaluation

    runs = await executor(cluster, address, say)
    try:
        return reopen_evaluation(
            store, evaluation_id, {}, folders=paths.engine_folders(), credentials=credentials_for,
            runs=runs,
        )  # fmt: skip
    except ConfigError as error:
        await cluster.leave()
        raise NotStarted(f"Cannot resume it: {error.worded(FIELD_NAMES)}") from None
