"""A run: the public entry point that the CLI, the GUI and the tests all use.

run = Run(config, documents, folders=paths.engine_folders(), credentials=Credentials(api_key=...))
run.bus.add_listener(print)          # or: async for event in run.bus.subscribe()
result = await run.execute()         # run.cancel() stops the whole tree
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import secrets
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from rlm_desktop.engine.bus import EventBus
from rlm_desktop.engine.config import ConfigError, RunConfig
from rlm_desktop.engine.constrained_replies import constraint_for, unavailable
from rlm_desktop.engine.context import ContextDocument
from rlm_desktop.engine.conversation import (
    EarlierQuestion,
    ReplMemory,
    context_groups,
    keep_question,
    load_thread,
    split_contexts,
)
from rlm_desktop.engine.direct import answer_directly, direct_fit
from rlm_desktop.engine.events import (
    AnswerKind,
    ModeChosen,
    RunFinished,
    RunStarted,
    RunStatus,
    RunTotals,
)
from rlm_desktop.engine.folders import EngineFolders
from rlm_desktop.engine.kept_documents import KeptDocuments, metas_of, texts_of
from rlm_desktop.engine.ledger import TIME_LIMIT, BudgetLedger
from rlm_desktop.engine.litellm_loader import release_logging_worker, warm_up
from rlm_desktop.engine.llm import Credentials, LLMClient
from rlm_desktop.engine.pricing import PriceBook, refuse_unpriced_under_cap
from rlm_desktop.engine.profiles import choose_profile
from rlm_desktop.engine.reply_stream import StreamTimes
from rlm_desktop.engine.rlm_call import CallOutcome, RLMCall
from rlm_desktop.engine.runtime import Runtime, internal_error
from rlm_desktop.engine.sandbox.choice import Backend, backend_for, make_launcher
from rlm_desktop.engine.sandbox.connection import WorkerDied
from rlm_desktop.engine.sandbox.level import NOT_USED, refuse_unless_isolated
from rlm_desktop.engine.sandbox.untrusted_files import remove_tree
from rlm_desktop.engine.sandbox.wasm.bounds import refuse_oversized_context
from rlm_desktop.engine.server_windows import learn_server_facts, window_words
from rlm_desktop.providers.base_url import try_v1
from rlm_desktop.providers.connection import address_of, may_still_generate
from rlm_desktop.providers.server_facts import ServerFacts

log = logging.getLogger(__name__)

STATUS_BY_OUTCOME: dict[str, RunStatus] = {
    "ok": "completed",
    "max_turns": "max_turns",
    "budget_exceeded": "budget_exceeded",
    "error": "error",
    "cancelled": "cancelled",
    "timeout": "timeout",
}


@dataclass(frozen=True, kw_only=True)
class RunResult(RunTotals):
    """How a run ended, with tree-wide totals; `session_id` is the run's id."""

    session_id: str

    def to_json(self) -> dict[str, Any]:
        """The `run --json` object of DESIGN.md (plus `unpriced`, `error` and `http_status`)."""
        return {"session_id": self.session_id, **asdict(self)}


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
        self._thread = load_thread(folders.scratch, config.follows) if config.follows else None
        if self._thread is not None and config.conversation_id is None:
            config = dataclasses.replace(config, conversation_id=self._thread.conversation_id)
        earlier_groups = self._thread.previous.context_groups if self._thread else ()
        self._groups = context_groups(earlier_groups, len(documents))
        self._prices = PriceBook(config.prices)
        refuse_unpriced_under_cap(config, self._prices)
        self.config = config
        self.documents = documents if isinstance(documents, KeptDocuments) else list(documents)
        self._metas = metas_of(self.documents)
        self.run_id = run_id or new_run_id()
        self.bus = EventBus()
        self.folders = folders
        self.profile = choose_profile(
            folders.profiles, config.model, config.profile, local_server=bool(config.api_base)
        )
        self._credentials = credentials or Credentials()
        self._main: asyncio.Task[CallOutcome] | None = None
        self._runtime = self._make_runtime()
        self._cancel_requested = False
        self._announced = False
        self._root_call: RLMCall | None = None
        self._server = ServerFacts({})
        self._requests_at_stop = 0

    @property
    def credentials(self) -> Credentials:
        """The run's secrets, so a recorder can scrub them from what it writes."""
        return self._credentials

    def context_value(self) -> str | Sequence[str]:
        """`context` as the model sees it: one str, or a list of str in load order (in a
        conversation, the first question's documents: later ones are `context_1`, ...)."""
        return self._contexts()[0]

    def _contexts(self) -> list[str | Sequence[str]]:
        return split_contexts(texts_of(self.documents), self._groups)

    def cancel(self) -> None:
        """Stop the whole tree now: every worker is killed and the run ends as `cancelled`."""
        self._cancel_requested = True
        self._note_requests_in_flight()
        self._runtime.kill_workers()
        if self._main is not None and not self._main.done():
            self._main.cancel()

    async def execute(self, *, started: float | None = None) -> RunResult:
        """Run to the end and return the result; events are published on `self.bus` meanwhile.

        Every run ends with one `RunFinished`: an exception the engine did not expect ends it as
        `error` ("internal error: <type>: <message>"), and cancelling the task ends it as
        `cancelled` before `CancelledError` is re-raised. Only a `ConfigError` found before the run
        starts (documents too long for `direct` mode) is raised, with nothing published.
        `started`, a `time.monotonic()` reading, starts the run's clock earlier than this call
        (the command line starts it before loading the documents, so the time limit covers that).
        """
        runtime = self._runtime
        started = time.monotonic() if started is None else started
        runtime.ledger.started = started  # the time limit covers the whole run, start-up included
        try:
            outcome = await self._start_and_wait(runtime, started)
        except asyncio.CancelledError:
            self._finish(runtime, CallOutcome("cancelled", "", "cancelled"), started)
            raise
        except Exception as error:
            if isinstance(error, ConfigError) and not self._announced:
                raise
            log.debug("run %s: unexpected error", self.run_id, exc_info=error)
            outcome = CallOutcome("error", self._draft(), internal_error(error))
        finally:
            await self._clean_up(runtime)
        return self._finish(runtime, outcome, started)

    def _note_requests_in_flight(self) -> None:
        """Count the model requests still out as the run is stopped: a local server goes on
        generating their replies."""
        self._requests_at_stop = max(
            self._requests_at_stop, self._runtime.ledger.totals().in_flight
        )

    async def _start_and_wait(self, runtime: Runtime, started: float) -> CallOutcome:
        models = (self.config.model, self.config.effective_sub_model)
        _warm, facts, _ready = await asyncio.gather(
            asyncio.to_thread(warm_up, *models),
            learn_server_facts(self.config, self._prices, self._credentials.api_key),
            runtime.llm.prepare(*models),
        )
        self._server = facts
        if self.profile.constrained_replies:
            runtime.reply_constraint = constraint_for(facts.software)
        mode, reason = self._choose_mode(runtime)
        if mode == "rlm" and self.config.require_isolation:
            await self._require_isolation(runtime)
        self._announce()
        self.bus.publish(ModeChosen(run_id=self.run_id, mode=mode, reason=reason))
        main = self._main = asyncio.create_task(self._root(runtime, mode == "direct"))
        if self._cancel_requested:
            main.cancel()
        try:
            return await self._await_main(main, started)
        except asyncio.CancelledError:
            self.cancel()
            await _settled(main)
            raise

    async def _await_main(self, main: asyncio.Task[CallOutcome], started: float) -> CallOutcome:
        timeout = self.config.budget.timeout_s
        remaining = None if timeout is None else max(0.0, timeout - (time.monotonic() - started))
        done, _ = await asyncio.wait({main}, timeout=remaining)
        if not done:
            self._note_requests_in_flight()
            why = f"the run passed its {timeout:g} s time limit"
            self._runtime.stop_reason = ("timeout", why)
            main.cancel()
            await _settled(main)
            return CallOutcome("timeout", self._draft(), why)
        try:
            return main.result()
        except asyncio.CancelledError:
            return CallOutcome("cancelled", "", "cancelled by the user")

    async def _require_isolation(self, runtime: Runtime) -> None:
        """Start the sandbox before anything else; refuse the run if it does not isolate."""
        try:
            report = await runtime.launcher.start()
        except (OSError, WorkerDied) as error:
            raise ConfigError(
                f"is set but the sandbox could not start: {error}", "require_isolation"
            ) from error
        refuse_unless_isolated(report)

    def _draft(self) -> str:
        return self._root_call.partial_answer if self._root_call else ""

    async def _clean_up(self, runtime: Runtime) -> None:
        runtime.kill_workers()
        closed = runtime.llm.aclose(), runtime.launcher.close()
        for failure in await asyncio.gather(*closed, return_exceptions=True):
            if failure is not None:
                raise failure  # both were closed first
        release_logging_worker()
        try:
            await asyncio.to_thread(remove_tree, runtime.scratch_dir)
        except OSError as error:  # the run's outcome stands; the folder is the user's to remove
            log.warning("scratch folder %s not removed: %s", runtime.scratch_dir, error)

    def _announce(self) -> None:
        """Publish `RunStarted`, once: before `ModeChosen`, or before an early `RunFinished`."""
        if self._announced:
            return
        self._announced = True
        self.bus.publish(
            RunStarted(
                run_id=self.run_id,
                query=self.config.query,
                mode=self.config.mode,
                model=self.config.model,
                sub_model=self.config.effective_sub_model,
                profile=self.profile.name,
                settings={
                    **self.config.to_settings(),
                    "system_role": self.profile.system_role,
                    **self._constraint_setting(),
                },
                documents=list(self._metas),
            )
        )

    def _constraint_setting(self) -> dict[str, str]:
        """How the run's RLM turns were held to their shape, when its profile asks them to be
        (`constrained_replies`): the server's way, or why there was none."""
        if not self.profile.constrained_replies:
            return {}
        constraint = self._runtime.reply_constraint
        if constraint is not None:
            return {"constrained_replies": constraint.name}
        return {"constrained_replies": f"none: {unavailable(self._server.software)}"}

    def _make_runtime(self) -> Runtime:
        config = self.config
        llm = LLMClient(
            prices=self._prices,
            credentials=self._credentials,
            api_base=config.api_base,
            concurrency=config.budget.concurrency,
            times=StreamTimes(config.request_timeout_s, config.stream_silence_s),
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
            launcher=make_launcher(
                self._backend(),
                scratch,
                config.stored_output_cap_chars,
                compiled_dir=self.folders.compiled_folder,
                allow_read=config.allow_read,
                max_tasks=config.max_tasks,
                memory_limit_mb=config.memory_limit_mb,
                scratch_quota_mb=config.scratch_quota_mb,
                on_over_quota=lambda reason: holder[0].stop_workers(reason),
            ),
        )
        holder.append(runtime)
        return runtime

    def _backend(self) -> Backend:
        """The sandbox backend the run's choice takes here; a context too large for the wasm
        sandbox is refused now, before anything starts."""
        backend = backend_for(self.config.sandbox)
        if backend == "wasm":
            refuse_oversized_context(texts_of(self.documents), self.config.memory_limit_mb)
        return backend

    def _choose_mode(self, runtime: Runtime) -> tuple[Any, str]:
        mode = self.config.mode
        if mode == "rlm":
            return "rlm", "requested in the run's settings"
        if self._thread is not None:
            return "rlm", "a follow-up goes on in the REPL of the questions before it"
        fit = direct_fit(runtime, self.documents)
        window = window_words(
            self.config.model, fit.window, self._server.windows.get(self.config.model)
        )
        if mode == "direct":
            if not fit.fits:
                raise ConfigError(
                    f"'direct' cannot take these documents: ~{fit.tokens:,} tokens do not fit "
                    f"{window} with room for the reply; use rlm or auto",
                    "mode",
                )
            return "direct", "requested in the run's settings"
        if fit.comfortable:
            return "direct", f"short input (~{fit.tokens:,} tokens) answered with one direct call"
        if not fit.fits:
            return "rlm", f"input of ~{fit.tokens:,} tokens does not fit {window}"
        return "rlm", f"input of ~{fit.tokens:,} tokens is worth orchestrating"

    async def _root(self, runtime: Runtime, direct: bool) -> CallOutcome:
        if direct:
            return await answer_directly(runtime, self.documents)
        contexts = self._contexts()
        call = self._root_call = RLMCall(
            runtime,
            prompt=self.config.query,
            context=contexts[0],
            meta=list(self._metas),
            depth=1,
            parent_id=None,
            model=self.config.model,
            memory=self._memory(contexts),
        )
        return await call.run()

    def _memory(self, contexts: list[str | Sequence[str]]) -> ReplMemory:
        earlier = len(self._thread.previous.context_groups) if self._thread else 1
        added = self._metas[sum(self._groups[:-1]) :] if len(self._groups) > earlier else []
        return ReplMemory(
            kept_root=self.folders.scratch,
            session_id=self.run_id,
            cap_bytes=self.config.repl_state_cap_mb * 1_000_000,
            thread=self._thread,
            contexts=tuple(c if isinstance(c, str) else list(c) for c in contexts[1:]),
            groups=self._groups,
            new_documents=tuple(str(meta["name"]) for meta in added),
        )

    def _keep_question(self, status: RunStatus, answer: str) -> None:
        """Keep the question and its answer for a follow-up (a run is not failed for it)."""
        question = EarlierQuestion(
            session_id=self.run_id,
            query=self.config.query,
            answer=answer,
            status=status,
            follows=self.config.follows,
            context_groups=self._groups,
        )
        try:
            keep_question(self.folders.scratch, question)
        except (OSError, ValueError) as error:
            log.info("run %s: the question was not kept for follow-ups: %s", self.run_id, error)

    def _finish(self, runtime: Runtime, outcome: CallOutcome, started: float) -> RunResult:
        self._announce()
        ledger = runtime.ledger
        runtime.ledger_changed(ledger.totals(), force=True)
        status = STATUS_BY_OUTCOME.get(outcome.status, "error")
        if self._cancel_requested and status != "completed":
            status = "cancelled"
        error = outcome.error
        answered = status == "completed"
        if ledger.refused_calls and status in ("completed", "max_turns"):
            status, error = _after_refusals(ledger)
        error = self._with_server_advice(status, error, outcome.http_status)
        totals = RunTotals(
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
            error=None if status == "completed" else error,
            http_status=None if status == "completed" else outcome.http_status,
            sandbox=runtime.launcher.sandbox.level if runtime.launcher.sandbox else NOT_USED,
            refused_calls=ledger.refused_calls,
            held_tokens=ledger.held_tokens,
            answer_kind=self._answer_kind(outcome.answer, answered),
        )
        fields = dataclasses.asdict(totals)
        self._keep_question(status, outcome.answer)
        self.bus.publish(RunFinished(run_id=self.run_id, **fields))
        return RunResult(session_id=self.run_id, **fields)

    def _answer_kind(self, answer: str, answered: bool) -> AnswerKind:
        if answered:
            return "answer"
        if not answer:
            return "none"
        root = self._root_call
        return "draft" if root is not None and root.has_draft else "last_reply"

    def _with_server_advice(
        self, status: RunStatus, error: str | None, http: int | None
    ) -> str | None:
        """`error` with what the run's server needs said: that it may still be generating after
        a stop, or that its base URL lacks the `/v1` its API lives under."""
        api_base = self.config.api_base
        if not api_base or status == "completed":
            return error
        if status in ("cancelled", "timeout") and self._requests_at_stop:
            return f"{error}; {may_still_generate(address_of(api_base))}"
        if status == "error" and (hint := try_v1(api_base, http)):
            return f"{error} — {hint}"
        return error


def _after_refusals(ledger: BudgetLedger) -> tuple[RunStatus, str]:
    """How a run that the model ended, but in which a cap refused calls, ended: over its budget
    (or its time, when only the clock refused), its answer kept and said to come after."""
    refused = ledger.refused_calls
    only_time = set(ledger.refusals) == {TIME_LIMIT}
    noun = "call" if refused == 1 else "calls"
    ran_out = "time limit" if only_time else "budget"
    status: RunStatus = "timeout" if only_time else "budget_exceeded"
    return status, f"answered after the {ran_out} ran out ({refused} {noun} refused)"


async def _settled(task: asyncio.Task[CallOutcome]) -> None:
    """Wait for a task being cancelled to end; how it ended no longer matters."""
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await task
