"""The batch runner: every row's question asked of its documents through the real engine, each
run a normal stored session tagged with the batch, under a concurrency limit and a total budget;
finished rows are kept as they finish, so an interrupted batch resumes where it stopped.

    batch = Batch(store, batch_id, rows, options, folders=paths.engine_folders(),
                  credentials=credentials_for, runs=LocalRuns(folders))  # or RayRuns
    batch.add_listener(print)                 # RowStarted / RowPlaced / RowFinished / RowSkipped
    results = await batch.run()               # batch.cancel() stops it; run() again resumes

As in an evaluation (`evaluation.runner`), the total budget is held here, on the machine that
sends the rows: a row is sent only with a grant (`Allowance`), through the `Dispatcher`, which
records it and retries once a row whose node died. A row's documents are loaded when it runs,
once it holds a grant; a row whose floor its grant cannot cover is not started.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from rlm_desktop.batch.loading import Loaded, NothingLoaded, load_row
from rlm_desktop.batch.records import BatchRecords, RowResult
from rlm_desktop.cluster.dispatch import CredentialsFor, Sent
from rlm_desktop.cluster.runs import RanOn, Runs
from rlm_desktop.evaluation.allowance import Grant
from rlm_desktop.evaluation.runner import run_floor, setting_config
from rlm_desktop.evaluation.sending import TrialSender

if TYPE_CHECKING:
    from rlm_desktop.batch.questions import QuestionRow
    from rlm_desktop.engine.folders import EngineFolders
    from rlm_desktop.evaluation.options import EvaluationOptions
    from rlm_desktop.store import Store

log = logging.getLogger(__name__)
SPENT = "the total budget is spent"
Json = dict[str, Any]


@dataclass(frozen=True)
class RowStarted:
    """A row's run started; `session_id` is its session in the store."""

    row_id: str
    session_id: str


@dataclass(frozen=True)
class RowPlaced:
    """A row's run is under way at `ran_on` (a node of the cluster, or here)."""

    row_id: str
    session_id: str
    ran_on: RanOn


@dataclass(frozen=True)
class RowFinished:
    """A row ended and its result was saved."""

    result: RowResult


@dataclass(frozen=True)
class RowSkipped:
    """A row was not started: what is left of the total budget cannot cover it."""

    row_id: str
    reason: str


BatchEvent = RowStarted | RowPlaced | RowFinished | RowSkipped


class Batch(TrialSender[BatchEvent]):
    """Runs the rows of one batch that have no saved result yet."""

    def __init__(
        self,
        store: Store,
        batch_id: str,
        rows: Sequence[QuestionRow],
        options: EvaluationOptions,
        *,
        folders: EngineFolders,
        credentials: CredentialsFor,
        runs: Runs | None = None,
    ) -> None:
        self.records = BatchRecords(store)
        super().__init__(
            store, options, self.records.spent(batch_id), folders=folders,
            credentials=credentials, runs=runs,
        )  # fmt: skip
        self.batch_id = batch_id
        self.rows = list(rows)
        self.skipped: list[RowSkipped] = []

    def add_listener(self, listener: Callable[[BatchEvent], None]) -> None:
        """Call `listener` with every `RowStarted`, `RowPlaced`, `RowFinished` and `RowSkipped`."""
        super().add_listener(listener)

    def results(self) -> list[RowResult]:
        """The rows finished so far, this time and before, in the order they finished."""
        return self.records.results(self.batch_id)

    def pending(self) -> list[QuestionRow]:
        """The rows without a result, in the file's order."""
        done = {result.row_id for result in self.results()}
        return [row for row in self.rows if row.row_id not in done]

    async def run(self) -> list[RowResult]:
        """Run every pending row; returns all results. After `cancel()` it returns early, with
        `cancelled` set; runs cut short are not kept as results and run again on resume."""
        self.skipped = []
        await self._send_all([partial(self._row, row) for row in self.pending()])
        return self.results()

    def _floor(self, row: QuestionRow, tokens: int) -> tuple[float, int]:
        """What the row's first call reserves over documents of `tokens` (`run_floor`)."""
        config = setting_config(row.setting, row.question, self.options, Grant(None, None))
        return run_floor(config, tokens, self._prices, self.folders)

    async def _row(self, row: QuestionRow) -> None:
        grant = self._grant(self._floor(row, 0))
        if grant is None:
            self._skip(row)
            return
        spent = (grant.cost_usd or 0.0, grant.tokens or 0)
        try:
            result, sent = await self._attempt(row, grant)
            spent = sent.spent if sent is not None else (0.0, 0)
        finally:
            self._settle(grant, *spent)
        if result is None:
            self._skip(row)
            return
        self.records.save(result)
        self._publish(RowFinished(result))

    def _skip(self, row: QuestionRow) -> None:
        skipped = RowSkipped(row.row_id, SPENT)
        self.skipped.append(skipped)
        self._publish(skipped)

    async def _attempt(
        self, row: QuestionRow, grant: Grant
    ) -> tuple[RowResult | None, Sent | None]:
        """The row's result and what its sending came to; no result (and nothing sent) when
        its floor, known once its documents are loaded, is more than `grant`."""
        try:
            loaded = await asyncio.to_thread(
                load_row, row.paths, row.setting.model, self.options.run_timeout_s
            )
        except NothingLoaded as error:
            return unrun_result(self.batch_id, row, "error", str(error), self.runs.executor), None
        except Exception as error:  # one folder the loader cannot cope with stops no other row
            log.debug("row %s: documents not loaded", row.row_id, exc_info=error)
            reason = f"the documents could not be loaded: {type(error).__name__}: {error}"
            return unrun_result(self.batch_id, row, "error", reason, self.runs.executor), None
        usd, tokens = self._floor(row, loaded.tokens)
        if (grant.cost_usd is not None and grant.cost_usd < usd) or (
            grant.tokens is not None and grant.tokens < tokens
        ):
            return None, None
        sent = await self._send(row, loaded, grant)
        # A run that ended is paid for: its result is kept even if the batch is stopped now.
        finishing = asyncio.ensure_future(self._result(row, sent, loaded.warnings))
        try:
            return await asyncio.shield(finishing), sent
        except asyncio.CancelledError:
            self.records.save(await finishing)
            raise

    async def _send(self, row: QuestionRow, loaded: Loaded, grant: Grant) -> Sent:
        config = setting_config(row.setting, row.question, self.options, grant)
        return await self._dispatcher.send(
            config,
            loaded.documents,
            tag=lambda session_id: self.records.tag(session_id, self.batch_id, row.row_id),
            started=lambda session_id: self._publish(RowStarted(row.row_id, session_id)),
            placed=lambda session_id, ran_on: self._publish(
                RowPlaced(row.row_id, session_id, ran_on)
            ),
        )

    async def _result(self, row: QuestionRow, sent: Sent, warnings: list[str]) -> RowResult:
        """The row's result: its answer with its sources and findings, or why it has none."""
        outcome = sent.outcome
        if outcome is None:
            reason = sent.reason or "not run"
            return unrun_result(self.batch_id, row, sent.status, reason, self.runs.executor, sent)
        notes = [*warnings, *sent.notes]
        sources, findings = await self._health(outcome.session_id, notes)
        return RowResult(
            batch_id=self.batch_id,
            row_id=row.row_id,
            question=row.question,
            documents=list(row.documents),
            session_id=outcome.session_id,
            status=outcome.status,
            answer=outcome.answer if outcome.answer_kind == "answer" else "",
            sources=sources,
            cost_usd=outcome.cost_usd,
            input_tokens=outcome.input_tokens,
            output_tokens=outcome.output_tokens,
            wall_s=outcome.wall_s,
            unpriced=outcome.unpriced,
            findings=findings,
            error=outcome.error or ("; ".join(notes) if notes else None),
            executor=self.runs.executor,
            node=sent.node,
            attempts=sent.attempts,
        )

    async def _health(self, session_id: str, notes: list[str]) -> tuple[list[Json], list[Json]]:
        """The answer's sources checked against the row's documents, and the run's findings; a
        check that fails is a note, never the loss of a finished (and paid for) run."""
        from rlm_desktop.review.health import session_health

        try:
            report = await asyncio.to_thread(session_health, self.store, session_id)
        except Exception as error:
            log.debug("session %s: health not checked", session_id, exc_info=error)
            notes.append(f"sources and findings not checked: {error}")
            return [], []
        return (
            [source.to_json() for source in report.sources],
            [finding.to_json() for finding in report.findings],
        )


def unrun_result(
    batch_id: str,
    row: QuestionRow,
    status: str,
    reason: str,
    executor: str,
    sent: Sent | None = None,
) -> RowResult:
    """The result of a row whose run gave no outcome (`sent` None: it was never sent), or of a
    row not run at all (`skipped`, `not_run`)."""
    return RowResult(
        batch_id=batch_id, row_id=row.row_id, question=row.question,
        documents=list(row.documents), session_id=sent.session_id if sent else None,
        status=status, answer="", sources=[], cost_usd=0.0, input_tokens=0, output_tokens=0,
        wall_s=0.0, unpriced=False, findings=[], error=reason, executor=executor,
        node=sent.node if sent else "", attempts=sent.attempts if sent else 1,
    )  # fmt: skip
