"""One RLM call: a model driving its own REPL worker, turn by turn, until an executed answer."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlm_desktop import formatting as fmt
from rlm_desktop.engine.code_stop import WHOLE_REPLY, CodeStop
from rlm_desktop.engine.compaction import CompactionPolicy, compact, compaction_due
from rlm_desktop.engine.conversation import ReplMemory
from rlm_desktop.engine.events import (
    AnswerSource,
    AnswerSubmitted,
    CallStatus,
    CellExecuted,
    HistoryCompacted,
    TurnExecuted,
    TurnStarted,
    WorkerRestarted,
)
from rlm_desktop.engine.ledger import BudgetExceededError
from rlm_desktop.engine.llm import Completion, LLMError, Message
from rlm_desktop.engine.observation import format_observation
from rlm_desktop.engine.parsing import extract_code_blocks, find_prose_final, prose_without_code
from rlm_desktop.engine.prompts import first_user_message, system_prompt
from rlm_desktop.engine.runtime import Runtime, internal_error
from rlm_desktop.engine.sandbox.connection import WorkerDied
from rlm_desktop.engine.sandbox.given_sources import GivenSource
from rlm_desktop.engine.sandbox.process import CellOutcome, SubCallFailure, WorkerProcess
from rlm_desktop.engine.subcalls import BUDGET_ERROR, CHILD_ERROR, SubCallDispatcher
from rlm_desktop.engine.truncation import truncate_middle

log = logging.getLogger(__name__)

ANSWER_NOW = (
    "You have used all {turns}. Do not write more code. Reply now with your best final answer "
    "on its own line as FINAL(your answer)."
)


def answer_now(max_turns: int | None) -> str:
    """The request a call out of turns is sent for its last answer (`max_turns` None: a
    recorded run that does not say how many it had)."""
    return ANSWER_NOW.format(turns=_turns(max_turns))


def _turns(max_turns: int | None) -> str:
    return "your turns" if max_turns is None else fmt.plural(max_turns, "turn")


TRUNCATED_NOTE = (
    "Note: your last reply was cut at the output-token limit ({tokens} tokens); code in it may be "
    "incomplete. Write shorter replies and smaller cells."
)


@dataclass(frozen=True)
class CallOutcome:
    """How an RLM call ended. `http_status` is the provider's, when a provider error ended it."""

    status: CallStatus
    answer: str
    error: str | None = None
    http_status: int | None = None


class RLMCall:
    """Runs one RLM call (root or child) to completion."""

    def __init__(
        self,
        runtime: Runtime,
        *,
        prompt: str,
        context: Any,
        meta: list[dict[str, Any]],
        depth: int,
        parent_id: str | None,
        model: str,
        memory: ReplMemory | None = None,
    ) -> None:
        self.rt = runtime
        self.prompt = prompt
        self.context = context
        self.meta = meta
        self.depth = depth
        self.parent_id = parent_id
        self.model = model
        self.call_id = runtime.new_id("c")
        self.turns = 0
        self._tokens = [0, 0]
        self._cost: float | None = 0.0
        self._answer_draft = ""
        self._last_prose = ""
        self._memory = memory
        self._history: list[Message] = []
        """Every message of the call, compacted ones included (the REPL's `history`)."""
        self._compactions = 0
        self._dispatcher = SubCallDispatcher(runtime, self.call_id, depth, model, self._run_child)
        self._worker = WorkerProcess(
            context,
            meta,
            scratch_dir=self._worker_folder,
            memory_limit_mb=runtime.config.memory_limit_mb,
            output_cap_chars=runtime.config.stored_output_cap_chars,
            handler=self._dispatcher.handle,
            launcher=runtime.launcher,
            contexts=memory.contexts if memory else (),
            histories=memory.histories if memory else (),
        )
        self._worker_start: asyncio.Task[None] | None = None

    async def run(self) -> CallOutcome:
        """Drive the model until it submits an answer, runs out of turns or budget, or fails."""
        rt = self.rt
        rt.stats.max_depth_reached = max(rt.stats.max_depth_reached, self.depth)
        rt.call_started(self.call_id, self.parent_id, "rlm", self.depth, self.model, self.prompt)
        rt.workers.add(self._worker)
        self._worker_start = asyncio.create_task(self._worker.start())
        try:
            outcome = await self._loop()
            await self._keep_state()
        except asyncio.CancelledError:
            self._finish(CallOutcome(rt.stop_reason[0], self.partial_answer, rt.stop_reason[1]))
            raise
        except Exception as error:
            self._finish(CallOutcome("error", self.partial_answer, internal_error(error)))
            raise
        finally:
            rt.workers.discard(self._worker)
            await self._stop_worker()
        self._finish(outcome)
        return outcome

    async def _loop(self) -> CallOutcome:
        budget = self.rt.config.budget
        try:
            follow_up = await self._restore_state()
            opening = first_user_message(self.prompt, self.context, self.meta, follow_up)
            messages: list[Message] = [
                {"role": "system", "content": system_prompt(self.rt, self.context)},
                {"role": "user", "content": opening},
            ]
            self.rt.call_opened(self.call_id, messages)
            self._remember(messages)
            for turn in range(budget.max_turns):
                answer = await self._turn(turn, messages)
                if answer is not None:
                    return CallOutcome("ok", answer)
            return await self._answer_now(messages)
        except BudgetExceededError as error:
            return CallOutcome(error.status, self.partial_answer, error.detail)
        except LLMError as error:
            return CallOutcome("error", self.partial_answer, str(error), error.status)
        except WorkerDied as error:
            return CallOutcome(
                "error", self.partial_answer, f"the REPL could not be started: {error}"
            )

    async def _turn(self, turn: int, messages: list[Message]) -> str | None:
        rt = self.rt
        self.turns += 1
        if self.depth == 1:
            rt.stats.root_turns += 1
        rt.emit(TurnStarted(run_id=rt.run_id, call_id=self.call_id, index=turn))
        loop = asyncio.get_running_loop()
        started = loop.time()
        await self._compact_if_due(turn, messages)
        completion = await self._ask(messages, code_turn=True)
        reply = completion.content
        self._remember_prose(reply)
        blocks = extract_code_blocks(reply)
        first_cell = self._worker.cells_run + 1
        outcomes: list[CellOutcome] = []
        answer: Submitted | None = None
        if blocks:
            for index, code in enumerate(blocks):
                outcome = await self._execute(turn, index, code)
                outcomes.append(outcome)
                if outcome.final is not None:
                    answer = _submitted(outcome)
                    break
        else:
            answer = await self._prose_answer(turn, reply, outcomes)
        note = (
            TRUNCATED_NOTE.format(tokens=completion.output_tokens) if completion.truncated else ""
        )
        observation = format_observation(outcomes, rt.config.output_limit_chars, note, first_cell)
        rt.emit(
            TurnExecuted(
                run_id=rt.run_id,
                call_id=self.call_id,
                index=turn,
                reply=reply,
                code_blocks=len(blocks),
                observation=observation,
                duration_s=loop.time() - started,
            )
        )
        exchange: list[Message] = [
            {"role": "assistant", "content": reply},
            {"role": "user", "content": observation},
        ]
        self._remember(exchange)
        if answer is not None:
            text, source, sources = answer
            rt.emit(
                AnswerSubmitted(
                    run_id=rt.run_id,
                    call_id=self.call_id,
                    answer=text,
                    source=source,
                    sources=[given.to_json() for given in sources],
                )
            )
            return text
        messages += exchange
        return None

    def _remember(self, messages: list[Message]) -> None:
        """Add `messages` to the call's full history, here and in the REPL's `history`."""
        self._history += messages
        self._worker.extend_history(messages)

    async def _compact_if_due(self, turn: int, messages: list[Message]) -> None:
        """Replace the older turns by a summary when the conversation nears its limits."""
        config = self.rt.config
        policy = CompactionPolicy(config.compact_window_share, config.compact_tokens)
        window = self.rt.llm.info(self.model).context_window
        if not compaction_due(messages, policy, window, self.model):
            return
        done = await compact(
            messages,
            policy,
            window=window,
            model=self.model,
            count=self._compactions + 1,
            ask=self._ask,
        )
        if done is None:
            return
        self._compactions += 1
        messages[:] = done.messages
        self._remember([{"role": "summary", "content": done.summary}])
        self.rt.emit(
            HistoryCompacted(
                run_id=self.rt.run_id,
                call_id=self.call_id,
                turn=turn,
                tokens_before=done.tokens_before,
                tokens_after=done.tokens_after,
                summary=done.summary,
            )
        )

    async def _restore_state(self) -> str:
        """A follow-up's root gets the previous question's variables back before its first
        turn; returns what its first message says of the earlier questions and what came back
        ("" for a fresh call)."""
        if self._memory is None or self._memory.thread is None:
            return ""
        await self._worker_ready()
        return await self._memory.restore(self._worker, self.rt.config.budget.cell_timeout_s)

    async def _keep_state(self) -> None:
        """The root of a run keeps its variables and history for a follow-up (never failing
        the run: a follow-up is told what could not be kept)."""
        if self._memory is None:
            return
        try:
            await self._worker_ready()
            await self._memory.keep(
                self._worker, self._history, self.rt.config.budget.cell_timeout_s
            )
        except (OSError, ValueError, WorkerDied) as error:
            log.info("run %s: the REPL state was not kept: %s", self.rt.run_id, error)

    @property
    def _worker_folder(self) -> Path:
        return self.rt.scratch_dir / self.call_id

    async def _answer_now(self, messages: list[Message]) -> CallOutcome:
        max_turns = self.rt.config.budget.max_turns
        turns = _turns(max_turns)
        messages.append({"role": "user", "content": answer_now(max_turns)})
        try:
            completion = await self._ask(messages)
        except LLMError as error:  # the turns did run out: that stays the ending, with the reason
            why = f"no answer within {turns}, and asking for one failed: {error}"
            return CallOutcome("max_turns", self.partial_answer, why, error.status)
        self._remember([messages[-1], {"role": "assistant", "content": completion.content}])
        final = find_prose_final(completion.content)
        prose = prose_without_code(completion.content)
        answer = final.value if final and final.kind == "FINAL" else (prose or self.partial_answer)
        self.rt.emit(
            AnswerSubmitted(
                run_id=self.rt.run_id, call_id=self.call_id, answer=answer, source="partial"
            )
        )
        return CallOutcome("max_turns", answer, f"no answer within {turns}")

    @property
    def partial_answer(self) -> str:
        """The best answer so far: the model's `answer["content"]` draft, else its last prose."""
        return self._answer_draft or self._last_prose

    @property
    def has_draft(self) -> bool:
        """Whether the model set a draft in `answer["content"]` (then `partial_answer` is it)."""
        return bool(self._answer_draft)

    async def _ask(self, messages: list[Message], *, code_turn: bool = False) -> Completion:
        """One request of the call; a `code_turn` (a turn whose code runs, not the turn-limit
        answer or a summary) stops after its code and is held to its shape as the profile
        says."""
        rt = self.rt
        profile = rt.profile
        reads_to_end = not code_turn or profile.code_stop == WHOLE_REPLY
        completion = await rt.request(
            self.call_id, self.model, messages, profile.root_max_output_tokens,
            None if reads_to_end else CodeStop(profile.code_stop),
            rt.reply_constraint if code_turn else None,
        )  # fmt: skip
        self._tokens[0] += completion.input_tokens
        self._tokens[1] += completion.output_tokens
        if completion.cost_usd is None:
            self._cost = None
        elif self._cost is not None:
            self._cost += completion.cost_usd
        return completion

    async def _execute(self, turn: int, index: int, code: str) -> CellOutcome:
        rt = self.rt
        await self._worker_ready()
        restarts = self._worker.restarts
        outcome = await self._worker.execute(code, rt.config.budget.cell_timeout_s)
        if self._worker.restarts > restarts:
            rt.emit(
                WorkerRestarted(
                    run_id=rt.run_id,
                    call_id=self.call_id,
                    reason=outcome.error or outcome.worker_note or "restarted",
                )
            )
        if outcome.partial:
            self._answer_draft = outcome.partial
        cap = rt.config.stored_output_cap_chars
        rt.emit(
            CellExecuted(
                run_id=rt.run_id,
                call_id=self.call_id,
                turn=turn,
                index=index,
                code=code,
                stdout=truncate_middle(outcome.stdout, cap),
                stderr=truncate_middle(outcome.stderr, cap),
                error=outcome.error,
                duration_s=outcome.duration_s,
                timed_out=outcome.timed_out,
                variables_lost=outcome.variables_lost,
                variables=outcome.variables,
            )
        )
        return outcome

    async def _prose_answer(
        self, turn: int, reply: str, outcomes: list[CellOutcome]
    ) -> Submitted | None:
        """A final-answer line in a reply without code, run in the REPL (which checks its
        sources, and reads a variable for `FINAL_VAR`)."""
        final = find_prose_final(reply)
        if final is None:
            return None
        if final.kind == "FINAL" and final.sources is None:
            return final.value, "FINAL", ()
        sources = f", sources={final.sources}" if final.sources else ""
        outcome = await self._execute(turn, 0, f"{final.kind}({final.value!r}{sources})")
        outcomes.append(outcome)
        return _submitted(outcome) if outcome.final is not None else None

    async def _worker_ready(self) -> None:
        if self._worker_start is not None:
            task, self._worker_start = self._worker_start, None
            await task

    async def _stop_worker(self) -> None:
        task = self._worker_start
        if task is not None and not task.done():
            task.cancel()
        if task is not None:
            with contextlib.suppress(BaseException):
                await task
        await self._worker.close()

    async def _run_child(self, prompt: str, context: Any, model: str) -> str:
        meta = [{"name": "context", "path": "", "chars": _size(context), "tokens": None}]
        child = RLMCall(
            self.rt,
            prompt=prompt,
            context=context,
            meta=meta,
            depth=self.depth + 1,
            parent_id=self.call_id,
            model=model,
        )
        outcome = await child.run()
        if outcome.status in ("ok", "max_turns"):
            return outcome.answer
        if outcome.status == "budget_exceeded":
            raise SubCallFailure(BUDGET_ERROR, f"child RLM call {child.call_id}: {outcome.error}")
        raise SubCallFailure(
            CHILD_ERROR, f"child RLM call {child.call_id} failed: {outcome.error or outcome.status}"
        )

    def _remember_prose(self, reply: str) -> None:
        prose = prose_without_code(reply)
        if prose:
            self._last_prose = prose

    def _finish(self, outcome: CallOutcome) -> None:
        self.rt.call_finished(
            self.call_id,
            outcome.status,
            response=outcome.answer,
            tokens=(self._tokens[0], self._tokens[1]),
            cost=self._cost,
            error=outcome.error,
        )


Submitted = tuple[str, AnswerSource, tuple[GivenSource, ...]]
"""An answer as a cell submitted it: its text, the signal, and the sources it came with."""


def _submitted(outcome: CellOutcome) -> Submitted:
    return str(outcome.final), _source(outcome.final_source), outcome.sources


def _source(name: str | None) -> AnswerSource:
    if name == "FINAL_VAR":
        return "FINAL_VAR"
    if name == "answer":
        return "answer"
    return "FINAL"


def _size(context: Any) -> int:
    if isinstance(context, str):
        return len(context)
    return sum(len(str(c)) for c in context) if isinstance(context, list) else len(str(context))
