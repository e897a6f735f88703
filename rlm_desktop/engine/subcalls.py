"""Sub-calls made from a REPL: `llm_query`, `rlm_query` and their batched forms.

Failures come back to the model's REPL as typed errors (`SubCallFailure` carries the type's name),
never as junk strings posing as answers.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Coroutine
from typing import Any, Protocol

from rlm_desktop.engine.ledger import BudgetExceededError
from rlm_desktop.engine.llm import LLMError
from rlm_desktop.engine.runtime import Runtime
from rlm_desktop.engine.sandbox.process import SubCallFailure

BUDGET_ERROR = "BudgetExceededError"
LLM_ERROR = "LLMCallError"
CHILD_ERROR = "RLMChildError"


class ChildFactory(Protocol):
    """Runs a child RLM call and returns its answer, raising `SubCallFailure` when it fails."""

    def __call__(self, prompt: str, context: Any, model: str) -> Awaitable[str]: ...


class SubCallDispatcher:
    """Serves the sub-call requests of one RLM call's worker."""

    def __init__(
        self, runtime: Runtime, call_id: str, depth: int, model: str, spawn_child: ChildFactory
    ) -> None:
        self._rt = runtime
        self._call_id = call_id
        self._depth = depth
        self._model = model
        self._spawn_child = spawn_child

    async def handle(self, op: str, args: dict[str, Any]) -> Any:
        """Entry point for the worker's proxied calls."""
        model = args.get("model")
        if model is not None:
            self._check_model(model)
        if op == "llm_query":
            return await self.llm_query(args["prompt"], model)
        if op == "llm_query_batched":
            return await _batched([self.llm_query(p, model) for p in args["prompts"]], LLM_ERROR)
        if op == "rlm_query":
            return await self.rlm_query(args["prompt"], args.get("context"), model)
        if op == "rlm_query_batched":
            pairs = zip(args["prompts"], args.get("contexts") or [], strict=False)
            return await _batched([self.rlm_query(p, c, model) for p, c in pairs], CHILD_ERROR)
        raise SubCallFailure(LLM_ERROR, f"unknown operation {op!r}")

    async def llm_query(self, prompt: str, model: str | None, claimed: bool = False) -> str:
        """One plain sub-LLM call, counted against the budget."""
        if not claimed:
            self._claim()
        rt = self._rt
        try:
            _call_id, completion = await rt.llm_call(
                parent_id=self._call_id,
                depth=self._depth + 1,
                model=model or rt.config.effective_sub_model,
                prompt=prompt,
                messages=[{"role": "user", "content": prompt}],
                max_output_tokens=rt.profile.sub_max_output_tokens,
            )
        except BudgetExceededError as error:
            raise SubCallFailure(BUDGET_ERROR, error.detail) from error
        except LLMError as error:
            raise SubCallFailure(LLM_ERROR, f"llm_query failed: {error}") from error
        return completion.content

    async def rlm_query(self, prompt: str, context: Any, model: str | None) -> str:
        """A child RLM call, or a plain call once the depth limit is reached."""
        self._claim()
        rt = self._rt
        if self._depth + 1 > rt.config.budget.max_depth:
            text = (
                prompt if context is None or context == prompt else _with_context(prompt, context)
            )
            return await self.llm_query(text, model, claimed=True)
        return await self._spawn_child(
            prompt, prompt if context is None else context, model or self._model
        )

    def _check_model(self, model: str) -> None:
        """Model code may name another model only of the provider the run's models are on.

        A model name is also an address: litellm sends `oobabooga/http://anywhere/...` to that
        URL, and another provider's name to that provider with the user's key for it. Outside the
        sandbox, the app would carry the documents wherever model code named.
        """
        config = self._rt.config
        own = {config.model, config.effective_sub_model}
        if model in own:
            return
        llm = self._rt.llm
        providers = {llm.provider_of(m) for m in own} - {None}
        if llm.provider_of(model) not in providers:
            raise SubCallFailure(
                LLM_ERROR,
                f"model {model!r} is not a model of this run's provider "
                f"({', '.join(sorted(p for p in providers if p))}): model code may name another "
                "model of that provider only; the run's settings choose where requests go",
            )

    def _claim(self) -> None:
        try:
            self._rt.ledger.claim_sub_call()
        except BudgetExceededError as error:
            self._rt.budget_refused(self._call_id, error)
            raise SubCallFailure(BUDGET_ERROR, error.detail) from error


STARTED_PER_TURN = 16
"""Calls of a batch started per turn of the event loop. Each runs until its request waits for a
connection (building, estimating and announcing it): a thousand of them in one turn held a
window's event loop for over 100 ms."""


async def _started(calls: list[Coroutine[Any, Any, str]]) -> list[asyncio.Future[str]]:
    """`calls` as tasks, started `STARTED_PER_TURN` per loop turn, in order."""
    tasks: list[asyncio.Future[str]] = []
    try:
        for call in calls:
            tasks.append(asyncio.ensure_future(call))
            if len(tasks) % STARTED_PER_TURN == 0:
                await asyncio.sleep(0)
    except asyncio.CancelledError:
        for task in tasks:
            task.cancel()
        for call in calls[len(tasks) :]:
            call.close()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    return tasks


def _with_context(prompt: str, context: Any) -> str:
    body = context if isinstance(context, str) else "\n\n".join(map(str, context))
    return f"{prompt}\n\n--- context ---\n{body}"


async def _batched(calls: list[Coroutine[Any, Any, str]], error_type: str) -> list[str]:
    """Run calls concurrently; results in input order, or one typed error carrying partial results."""
    outcomes = await asyncio.gather(*await _started(calls), return_exceptions=True)
    failures = [o for o in outcomes if isinstance(o, BaseException)]
    if not failures:
        return [str(o) for o in outcomes]
    for failure in failures:
        if isinstance(failure, asyncio.CancelledError):
            raise failure
    first = failures[0]
    kind = (
        BUDGET_ERROR
        if any(isinstance(f, SubCallFailure) and f.error_type == BUDGET_ERROR for f in failures)
        else error_type
    )
    results = [None if isinstance(o, BaseException) else o for o in outcomes]
    detail = first.message if isinstance(first, SubCallFailure) else repr(first)
    message = (
        f"{len(failures)} of {len(calls)} calls failed (the rest are in .results); first: {detail}"
    )
    raise SubCallFailure(kind, message, results)
