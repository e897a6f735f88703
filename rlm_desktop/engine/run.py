"""A run: the public entry point that the CLI, the GUI and the tests all use.

run = Run(config, documents, folders=paths.engine_folders(), credentials=Credentials(api_key=...))
run.bus.add_listener(print)          # or: async for event in run.bus.subscribe()
result = await run.execute()         # run.cancel() stops the whole tree
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import shutil
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from rlm_desktop.engine.bus import EventBus
from rlm_desktop.engine.config import ConfigError, RunConfig
from rlm_desktop.engine.context import ContextDocument
from rlm_desktop.engine.direct import answer_directly, direct_fit
from rlm_desktop.engine.events import ModeChosen, RunFinished, RunStarted, RunStatus
from rlm_desktop.engine.folders import EngineFolders
from rlm_desktop.engine.ledger import BudgetLedger
from rlm_desktop.engine.litellm_loader import release_logging_worker, warm_up
from rlm_desktop.engine.llm import Credentials, LLMClient
from rlm_desktop.engine.pricing import PriceBook
from rlm_desktop.engine.profiles import choose_profile
from rlm_desktop.engine.rlm_call import CallOutcome, RLMCall
from rlm_desktop.engine.runtime import Runtime
from rlm_desktop.engine.sandbox.launcher import Launcher

STATUS_BY_OUTCOME: dict[str, RunStatus] = {
    "ok": "completed",
    "max_turns": "max_turns",
    "budget_exceeded": "budget_exceeded",
    "error": "error",
    "cancelled": "cancelled",
    "timeout": "timeout",
}


@dataclass(frozen=True)
class RunResult:
    """How a run ended, with tree-wide totals."""

    session_id: str
    status: RunStatus
    answer: str
    cost_usd: float
    input_tokens: int
    output_tokens: int
    turns: int
    sub_calls: int
    max_depth_reached: int
    wall_s: float
    unpriced: bool = False
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The `run --json` object of DESIGN.md (plus `unpriced` and `error`)."""
        return asdict(self)


def new_run_id() -> str:
    """A sortable, readable id: local time plus random hex, e.g. `20261129-101530-3fa2c1`."""
    return datetime.now().strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(3)


class Run:
    """One RLM run over a set of documents."""

    def __init__(
        self,
        config: RunConfig,
        documents: Sequence[ContextDocument],
        *,
        folders: EngineFolders,
        credentials: Credentials | None = None,
        run_id: str | None = None,
    ) -> None:
        config.validate()
        self.config = config
        self.documents = list(documents)
        self.run_id = run_id or new_run_id()
        self.bus = EventBus()
        self.folders = folders
        self.profile = choose_profile(folders.profiles, config.model, config.profile)
        self._credentials = credentials or Credentials()
        self._main: asyncio.Task[CallOutcome] | None = None
        self._runtime: Runtime | None = None
        self._cancel_requested = False
        self._root_call: RLMCall | None = None

    @property
    def credentials(self) -> Credentials:
        """The run's secrets, so a recorder can scrub them from what it writes."""
        return self._credentials

    def context_value(self) -> str | list[str]:
        """`context` as the model sees it: one str, or a list of str in load order."""
        if len(self.documents) == 1:
            return self.documents[0].text
        return [doc.text for doc in self.documents]

    def cancel(self) -> None:
        """Stop the whole tree now: every worker is killed and the run ends as `cancelled`."""
        self._cancel_requested = True
        if self._runtime is not None:
            self._runtime.kill_workers()
        if self._main is not None and not self._main.done():
            self._main.cancel()

    async def execute(self) -> RunResult:
        """Run to the end and return the result; events are published on `self.bus` meanwhile."""
        started = time.monotonic()
        await asyncio.to_thread(warm_up, self.config.model, self.config.effective_sub_model)
        runtime = self._make_runtime()
        runtime.ledger.started = started  # the time limit covers the whole run, start-up included
        direct = self._choose_mode(runtime)
        self.bus.publish(
            RunStarted(
                run_id=self.run_id,
                query=self.config.query,
                mode=self.config.mode,
                model=self.config.model,
                sub_model=self.config.effective_sub_model,
                profile=self.profile.name,
                settings=self.config.to_settings(),
                documents=[doc.meta() for doc in self.documents],
            )
        )
        self.bus.publish(ModeChosen(run_id=self.run_id, mode=direct[0], reason=direct[1]))
        self._main = asyncio.create_task(self._root(runtime, direct[0] == "direct"))
        if self._cancel_requested:
            self._main.cancel()
        try:
            outcome = await self._await_main(self._main, started)
        except asyncio.CancelledError:
            self.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._main
            self._finish(runtime, CallOutcome("cancelled", "", "cancelled"), started)
            raise
        finally:
            runtime.kill_workers()
            await runtime.launcher.close()
            release_logging_worker()
            shutil.rmtree(runtime.scratch_dir, ignore_errors=True)
        return self._finish(runtime, outcome, started)

    async def _await_main(self, main: asyncio.Task[CallOutcome], started: float) -> CallOutcome:
        timeout = self.config.budget.timeout_s
        remaining = None if timeout is None else max(0.0, timeout - (time.monotonic() - started))
        done, _ = await asyncio.wait({main}, timeout=remaining)
        if not done:
            main.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await main
            draft = self._root_call.partial_answer if self._root_call else ""
            return CallOutcome("timeout", draft, f"the run passed its {timeout:g} s time limit")
        try:
            return main.result()
        except asyncio.CancelledError:
            return CallOutcome("cancelled", "", "cancelled by the user")

    def _make_runtime(self) -> Runtime:
        config = self.config
        llm = LLMClient(
            prices=PriceBook(config.prices),
            credentials=self._credentials,
            api_base=config.api_base,
            concurrency=config.budget.concurrency,
            request_timeout_s=config.request_timeout_s,
            max_retries=config.max_retries,
        )
        scratch = self.folders.scratch / self.run_id
        holder: list[Runtime] = []
        ledger = BudgetLedger(config.budget, lambda totals: holder[0].ledger_changed(totals))
        runtime = Runtime(
            run_id=self.run_id,
            config=config,
            profile=self.profile,
            bus=self.bus,
            llm=llm,
            ledger=ledger,
            scratch_dir=scratch,
            launcher=Launcher(scratch, config.stored_output_cap_chars),
        )
        holder.append(runtime)
        self._runtime = runtime
        return runtime

    def _choose_mode(self, runtime: Runtime) -> tuple[Any, str]:
        mode = self.config.mode
        if mode == "rlm":
            return "rlm", "requested with --mode rlm"
        fit = direct_fit(runtime, self.documents)
        if mode == "direct":
            if not fit.fits:
                raise ConfigError(
                    f"the documents (~{fit.tokens:,} tokens) do not fit {self.config.model}'s "
                    f"window ({fit.window:,} tokens) for a direct call: use --mode rlm or auto"
                )
            return "direct", "requested with --mode direct"
        if fit.comfortable:
            return "direct", f"short input (~{fit.tokens:,} tokens) answered with one direct call"
        return "rlm", f"input of ~{fit.tokens:,} tokens is worth orchestrating"

    async def _root(self, runtime: Runtime, direct: bool) -> CallOutcome:
        if direct:
            return await answer_directly(runtime, self.documents)
        call = self._root_call = RLMCall(
            runtime,
            prompt=self.config.query,
            context=self.context_value(),
            meta=[doc.meta() for doc in self.documents],
            depth=1,
            parent_id=None,
            model=self.config.model,
        )
        return await call.run()

    def _finish(self, runtime: Runtime, outcome: CallOutcome, started: float) -> RunResult:
        ledger = runtime.ledger
        runtime.ledger_changed(ledger.totals(), force=True)
        status = STATUS_BY_OUTCOME.get(outcome.status, "error")
        if self._cancel_requested and status != "completed":
            status = "cancelled"
        result = RunResult(
            session_id=self.run_id,
            status=status,
            answer=outcome.answer,
            cost_usd=round(ledger.spent_cost_usd, 8),
            input_tokens=ledger.input_tokens,
            output_tokens=ledger.output_tokens,
            turns=runtime.stats.root_turns,
            sub_calls=ledger.sub_calls,
            max_depth_reached=runtime.stats.max_depth_reached,
            wall_s=round(time.monotonic() - started, 3),
            unpriced=ledger.unpriced_calls > 0,
            error=None if status == "completed" else outcome.error,
        )
        self.bus.publish(
            RunFinished(
                run_id=self.run_id,
                status=result.status,
                answer=result.answer,
                cost_usd=result.cost_usd,
                input_tokens=result.input_tokens,
                output_tokens=result.output_tokens,
                turns=result.turns,
                sub_calls=result.sub_calls,
                max_depth_reached=result.max_depth_reached,
                wall_s=result.wall_s,
                unpriced=result.unpriced,
                error=result.error,
            )
        )
        return result
