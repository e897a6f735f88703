"""Sending one trial through an executor: recorded as a session of the local store as it runs,
with where it ran, and run once more (as a new session) if its node died mid-way.

    dispatcher = Dispatcher(store, runs, credentials_for)
    sent = await dispatcher.send(config, documents, tag=tag_session, started=..., placed=...)
    sent.outcome          # the run's result; None when it was refused or lost (`reason`)

The evaluation runner and the batch runner both send their trials this way.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rlm_desktop.cluster.runs import NodeLost, RanOn, Runs, TrialLost, TrialRun
from rlm_desktop.engine import ConfigError, ContextDocument, Credentials, RunConfig
from rlm_desktop.engine.run import RunResult, new_run_id

if TYPE_CHECKING:
    from rlm_desktop.store import Store

CredentialsFor = Callable[[str, "str | None"], Credentials]
Tag = Callable[[str], None]
"""Marks a session id as the trial's, before its run starts."""


@dataclass(frozen=True)
class Sent:
    """What came of sending a trial: its `outcome`, or why there is none (`refused` by the
    engine, or `lost`: its result never came back). `retried` says why it ran a second time;
    `lost_usd` and `lost_tokens` are what its lost attempts had committed."""

    outcome: RunResult | None
    session_id: str | None = None
    warnings: list[str] = field(default_factory=list)
    refused: str | None = None
    lost: str | None = None
    retried: str | None = None
    ran_on: RanOn | None = None
    attempts: int = 1
    lost_usd: float = 0.0
    lost_tokens: int = 0

    @property
    def reason(self) -> str | None:
        """Why there is no outcome (None when there is one)."""
        return self.refused or self.lost

    @property
    def status(self) -> str:
        """The run's status; without an outcome, `refused` (by the engine) or `error` (lost)."""
        if self.outcome is not None:
            return self.outcome.status
        return "refused" if self.refused else "error"

    @property
    def spent(self) -> tuple[float, int]:
        """Dollars and tokens the trial spent: its outcome's and what lost attempts committed."""
        usd, tokens = self.lost_usd, self.lost_tokens
        if self.outcome is not None:
            outcome = self.outcome
            usd, tokens = (
                usd + outcome.cost_usd,
                tokens + outcome.input_tokens + outcome.output_tokens,
            )
        return usd, tokens

    @property
    def notes(self) -> list[str]:
        """The recorder's warnings, after why the trial ran a second time (if it did)."""
        return [f"retried: {self.retried}", *self.warnings] if self.retried else list(self.warnings)

    @property
    def node(self) -> str:
        """Where it ran (`RanOn.label`); empty when it never reached a node."""
        return self.ran_on.label() if self.ran_on else ""


class Dispatcher:
    """Sends trials with one executor, writing each run to one store."""

    def __init__(self, store: Store, runs: Runs, credentials: CredentialsFor) -> None:
        self.store = store
        self.runs = runs
        self._credentials = credentials

    async def send(
        self,
        config: RunConfig,
        documents: Sequence[ContextDocument],
        *,
        tag: Tag,
        started: Callable[[str], None] = lambda session_id: None,
        placed: Callable[[str, RanOn], None] = lambda session_id, ran_on: None,
    ) -> Sent:
        """Run `config` over `documents`; a trial whose node died runs once more, within what
        is left of its caps once the lost attempt's commitments are counted."""
        try:
            return await self._attempt(config, documents, 1, tag, started, placed)
        except NodeLost as failure:
            usd, tokens = failure.spent_usd, failure.spent_tokens
            retry = _less(config, usd, tokens)
            try:
                sent = await self._attempt(retry, documents, 2, tag, started, placed)
            except TrialLost as second:
                return Sent(
                    None,
                    lost=f"{failure}; on retry, {second}",
                    attempts=2,
                    lost_usd=usd + second.spent_usd,
                    lost_tokens=tokens + second.spent_tokens,
                )
            return dataclasses.replace(sent, retried=str(failure), lost_usd=usd, lost_tokens=tokens)
        except TrialLost as failure:
            return Sent(
                None,
                lost=str(failure),
                lost_usd=failure.spent_usd,
                lost_tokens=failure.spent_tokens,
            )

    async def _attempt(
        self,
        config: RunConfig,
        documents: Sequence[ContextDocument],
        attempt: int,
        tag: Tag,
        started: Callable[[str], None],
        placed: Callable[[str, RanOn], None],
    ) -> Sent:
        run_id = new_run_id()
        try:
            run = self.runs.make(
                config,
                documents,
                self._credentials(config.model, config.api_base),
                run_id=run_id,
                attempt=attempt,
                placed=lambda ran_on: placed(run_id, ran_on),
            )
        except ConfigError as error:
            return Sent(None, refused=str(error), attempts=attempt)
        tag(run.run_id)
        recorder = self.store.record(run, documents=documents)
        started(run.run_id)
        if (here := self.runs.place_of(run)) is not None:
            placed(run.run_id, here)  # the local executor knows at once; a node reports it
        try:
            outcome = await run.execute()
        except ConfigError as error:
            return Sent(None, run.run_id, refused=str(error), attempts=attempt)
        finally:
            recorder.close()
            self._note_place(run)
        return Sent(
            outcome,
            run.run_id,
            warnings=list(recorder.warnings),
            ran_on=self.runs.place_of(run),
            attempts=attempt,
        )

    def _note_place(self, run: TrialRun) -> None:
        ran_on = self.runs.place_of(run)
        if ran_on is not None:
            self.store.note_ran_on(run.run_id, ran_on.to_json())


def _less(config: RunConfig, usd: float, tokens: int) -> RunConfig:
    """`config` with its dollar and token caps lowered by what a lost attempt committed."""
    budget = config.budget
    cost = None if budget.max_cost_usd is None else max(0.0, budget.max_cost_usd - usd)
    held = None if budget.max_tokens is None else max(0, budget.max_tokens - tokens)
    return dataclasses.replace(
        config, budget=dataclasses.replace(budget, max_cost_usd=cost, max_tokens=held)
    )
