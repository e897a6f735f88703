"""The evaluation runner: every (setting, task) pair run through the real engine, each run a
normal stored session tagged with the evaluation, under a concurrency limit and a total budget;
finished trials are kept as they finish, so an interrupted evaluation resumes where it stopped.

    evaluation = Evaluation(store, evaluation_id, tasks, settings, options,
                            folders=paths.engine_folders(), credentials=credentials_for,
                            runs=LocalRuns(folders))   # or RayRuns: each trial a cluster task
    evaluation.add_listener(print)            # TrialStarted / TrialPlaced / TrialFinished / ...
    results = await evaluation.run()          # evaluation.cancel() stops it; run() again resumes

The total budget is held here, on the machine that sends the trials: a trial is sent only with a
grant (`allowance`), so it holds however many trials are in flight on however many nodes. A trial
whose node died (`NodeLost`) is run once more, as a new session; what the lost attempt had
committed stays counted.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from rlm_desktop.cluster.dispatch import CredentialsFor, Sent
from rlm_desktop.cluster.runs import RanOn, Runs
from rlm_desktop.engine import Budget, ContextDocument, RunConfig
from rlm_desktop.engine.config import ConfigError
from rlm_desktop.engine.pricing import PriceBook, refuse_unpriced_under_cap
from rlm_desktop.engine.profiles import choose_profile
from rlm_desktop.engine.run_choices import RunChoices, build_run_config
from rlm_desktop.engine.sandbox.choice import backend_for
from rlm_desktop.evaluation.allowance import Grant
from rlm_desktop.evaluation.options import EvaluationOptions
from rlm_desktop.evaluation.records import EvaluationRecords
from rlm_desktop.evaluation.scoring import score
from rlm_desktop.evaluation.sending import TrialSender
from rlm_desktop.evaluation.settings import Setting
from rlm_desktop.evaluation.source_scores import SourceTally, checked_sources, tally
from rlm_desktop.evaluation.tasks import Task, count
from rlm_desktop.evaluation.trial import TrialResult

if TYPE_CHECKING:
    from rlm_desktop.engine.folders import EngineFolders
    from rlm_desktop.engine.run import RunResult
    from rlm_desktop.store import Store

RLM_FLOOR_TOKENS = 1_000
"""The least an RLM run's first call reads: its system prompt and the question."""
PROBE = Task("probe", "probe", (), "probe", "", "exact", 0)
"""A stand-in task, to check a setting's configuration before any task is run."""


@dataclass(frozen=True)
class TrialStarted:
    """A run of the evaluation started; `session_id` is its session in the store."""

    setting: str
    task_id: str
    session_id: str


@dataclass(frozen=True)
class TrialPlaced:
    """A run of the evaluation is under way at `ran_on` (a node of the cluster, or here)."""

    setting: str
    task_id: str
    session_id: str
    ran_on: RanOn


@dataclass(frozen=True)
class TrialFinished:
    """A run ended and its answer was scored (already saved)."""

    result: TrialResult


@dataclass(frozen=True)
class TrialSkipped:
    """A run was not started: what is left of the total budget cannot cover it."""

    setting: str
    task_id: str
    reason: str


EvaluationEvent = TrialStarted | TrialPlaced | TrialFinished | TrialSkipped


def run_config(setting: Setting, task: Task, options: EvaluationOptions, grant: Grant) -> RunConfig:
    """The engine configuration of one trial, its budget capped at its grant."""
    return setting_config(setting, task.question, options, grant)


def setting_config(
    setting: Setting, question: str, options: EvaluationOptions, grant: Grant
) -> RunConfig:
    """The engine configuration of `question` asked under `setting`, its budget capped at
    `grant` (an evaluation's trial, a batch's row)."""
    budget = Budget(
        max_depth=setting.depth,
        max_turns=setting.max_turns or Budget().max_turns,
        max_cost_usd=grant.cost_usd,
        max_tokens=grant.tokens,
        timeout_s=options.run_timeout_s,
    )
    choices = RunChoices(
        query=question,
        **setting.model_choices(),
        api_base=options.api_base,
        prices=options.prices,
        budget=budget,
        auto_direct_max_tokens=setting.auto_max_tokens,
    )
    # A model the endpoint's server serves without a price counts at $0, as in `run` and the
    # window; a provider's own API (no endpoint) without a price is still refused.
    return build_run_config(choices, local_models_free=True)


def check_settings(
    settings: Sequence[Setting], options: EvaluationOptions, folders: EngineFolders
) -> None:
    """Raise `ConfigError` for a setting the engine would refuse for every task (a dollar cap
    over a model without a price, an unknown profile, a sandbox this system does not give),
    before anything is sent."""
    for setting in settings:
        choose_profile(
            folders.profiles, setting.model, setting.profile, local_server=bool(options.api_base)
        )
        try:
            backend_for(setting.sandbox)
        except ConfigError as error:
            raise ConfigError(f"{setting.name!r}: sandbox {error.problem}", "setting") from None
        grant = Grant(options.max_cost_usd, options.max_tokens)
        config = run_config(setting, PROBE, options, grant)
        config.validate()
        refuse_unpriced_under_cap(config, PriceBook(config.prices))


def run_floor(
    config: RunConfig, length: int, prices: PriceBook, folders: EngineFolders
) -> tuple[float, int]:
    """Dollars and tokens the first call of a run of `config` over documents of `length` tokens
    reserves before it is sent: its input and the reply headroom (the engine's ledger refuses a
    call whose worst case the cap cannot cover)."""
    threshold = config.auto_direct_max_tokens
    direct = config.mode == "direct" or (config.mode == "auto" and length <= threshold)
    reading = count(config.query) + (length if direct else RLM_FLOOR_TOKENS)
    info = prices.info(config.model)
    profile = choose_profile(
        folders.profiles, config.model, config.profile, local_server=bool(config.api_base)
    )
    reply = min(profile.root_max_output_tokens, info.max_output_tokens)
    return info.cost(reading, reply) or 0.0, reading + reply


class Evaluation(TrialSender[EvaluationEvent]):
    """Runs the trials of one evaluation that have no saved result yet."""

    def __init__(
        self,
        store: Store,
        evaluation_id: str,
        tasks: Sequence[Task],
        settings: Sequence[Setting],
        options: EvaluationOptions,
        *,
        folders: EngineFolders,
        credentials: CredentialsFor,
        runs: Runs | None = None,
    ) -> None:
        self.records = EvaluationRecords(store)
        super().__init__(
            store, options, self.records.spent(evaluation_id), folders=folders,
            credentials=credentials, runs=runs,
        )  # fmt: skip
        self.evaluation_id = evaluation_id
        self.tasks = list(tasks)
        self.settings = list(settings)
        self.skipped: list[TrialSkipped] = []

    def add_listener(self, listener: Callable[[EvaluationEvent], None]) -> None:
        """Call `listener` with every `TrialStarted`, `TrialPlaced`, `TrialFinished` and
        `TrialSkipped`."""
        super().add_listener(listener)

    def results(self) -> list[TrialResult]:
        """The trials finished so far, this time and before."""
        return self.records.results(self.evaluation_id)

    def pending(self) -> list[tuple[Setting, Task]]:
        """The trials without a result, task by task, each task under every setting in turn."""
        done = {(r.setting, r.task_id) for r in self.results()}
        return [
            (setting, task)
            for task in self.tasks
            for setting in self.settings
            if (setting.name, task.id) not in done
        ]

    async def run(self) -> list[TrialResult]:
        """Run every pending trial; returns all results. After `cancel()` it returns early, with
        `cancelled` set; runs cut short are not kept as results and run again on resume."""
        self.skipped = []
        await self._send_all(
            [partial(self._trial, setting, task) for setting, task in self.pending()]
        )
        return self.results()

    def _floor(self, setting: Setting, task: Task) -> tuple[float, int]:
        """What the run's first call reserves before it is sent (`run_floor`)."""
        config = run_config(setting, task, self.options, Grant(None, None))
        return run_floor(config, task.length, self._prices, self.folders)

    async def _trial(self, setting: Setting, task: Task) -> None:
        grant = self._grant(self._floor(setting, task))
        if grant is None:
            skipped = TrialSkipped(setting.name, task.id, "the total budget is spent")
            self.skipped.append(skipped)
            self._publish(skipped)
            return
        spent = (grant.cost_usd or 0.0, grant.tokens or 0)
        try:
            sent = await self._execute(setting, task, grant)
            spent = sent.spent
            result = await self._result(setting, task, sent)
        finally:
            self._settle(grant, *spent)
        self.records.save(result)
        self._publish(TrialFinished(result))

    async def _execute(self, setting: Setting, task: Task, grant: Grant) -> Sent:
        documents = [ContextDocument(name=name, text=text) for name, text in task.documents]
        config = dataclasses.replace(
            run_config(setting, task, self.options, grant), evaluation_id=self.evaluation_id
        )
        return await self._dispatcher.send(
            config,
            documents,
            tag=lambda session_id: self.records.tag(
                session_id, self.evaluation_id, setting.name, task.id
            ),
            started=lambda session_id: self._publish(
                TrialStarted(setting.name, task.id, session_id)
            ),
            placed=lambda session_id, ran_on: self._publish(
                TrialPlaced(setting.name, task.id, session_id, ran_on)
            ),
        )

    async def _result(self, setting: Setting, task: Task, sent: Sent) -> TrialResult:
        """The trial's result: its answer scored, or why it has none."""
        outcome = sent.outcome
        if outcome is None:
            result = self._refused(setting, task, sent.reason or "not run")
            result = dataclasses.replace(result, status=sent.status)
        else:
            warnings = sent.notes
            sources = await self._sources(task, outcome, warnings)
            result = self._scored(setting, task, outcome, warnings, sources)
        return dataclasses.replace(
            result,
            executor=self.runs.executor,
            node=sent.node,
            attempts=sent.attempts,
        )

    async def _sources(self, task: Task, outcome: RunResult, warnings: list[str]) -> SourceTally:
        """The answer's sources tallied against the task's gold; a check that fails is a
        warning, never the loss of a finished (and paid for) run."""
        if not outcome.answer or outcome.session_id is None:
            return SourceTally()
        try:
            checked = await asyncio.to_thread(checked_sources, self.store, outcome.session_id, task)
        except Exception as error:  # the trial is kept; its source score is "not applicable"
            warnings.append(f"sources not checked: {error}")
            return SourceTally()
        return tally(checked, task.gold_spans)

    def _scored(
        self,
        setting: Setting,
        task: Task,
        outcome: RunResult,
        warnings: list[str],
        sources: SourceTally,
    ) -> TrialResult:
        error = outcome.error or ("; ".join(warnings) if warnings else None)
        return TrialResult(
            evaluation_id=self.evaluation_id,
            setting=setting.name,
            task_id=task.id,
            kind=task.kind,
            length=task.length,
            session_id=outcome.session_id,
            status=outcome.status,
            score=score(task.scoring, outcome.answer, task.answer) if outcome.answer else 0.0,
            cost_usd=outcome.cost_usd,
            input_tokens=outcome.input_tokens,
            output_tokens=outcome.output_tokens,
            wall_s=outcome.wall_s,
            sub_calls=outcome.sub_calls,
            unpriced=outcome.unpriced,
            answer=outcome.answer,
            gold=task.answer,
            error=error,
            gold_spans=sources.gold_spans,
            gold_cited=sources.gold_cited,
            sources_checked=sources.checked,
            sources_not_found=sources.not_found,
        )

    def _refused(self, setting: Setting, task: Task, reason: str) -> TrialResult:
        return dataclasses.replace(
            _REFUSED, evaluation_id=self.evaluation_id, setting=setting.name, task_id=task.id,
            kind=task.kind, length=task.length, gold=task.answer, error=reason,
        )  # fmt: skip


_REFUSED = TrialResult(
    evaluation_id="", setting="", task_id="", kind="", length=0, session_id=None,
    status="refused", score=0.0, cost_usd=0.0, input_tokens=0, output_tokens=0, wall_s=0.0,
    sub_calls=0, unpriced=False, answer="", gold="",
)  # fmt: skip
