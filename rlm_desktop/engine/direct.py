"""Direct mode: one plain call with the documents in the prompt, for inputs that fit comfortably."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from rlm_desktop.engine.context import ContextDocument
from rlm_desktop.engine.events import AnswerSubmitted, CallFinished, CallStarted
from rlm_desktop.engine.ledger import BudgetExceededError
from rlm_desktop.engine.llm import LLMError
from rlm_desktop.engine.rlm_call import CallOutcome
from rlm_desktop.engine.runtime import Runtime
from rlm_desktop.engine.tokens import estimate_tokens

DIRECT_SYSTEM = (
    "Answer the user's question using the documents provided. Be complete and precise; say so "
    "plainly when the documents do not contain the answer."
)
COMFORTABLE_SHARE = 0.5


def document_tokens(documents: Sequence[ContextDocument]) -> int:
    """The documents' tokens: the loader's counts where known, else an estimate."""
    return sum(
        doc.tokens if doc.tokens is not None else estimate_tokens(doc.text) for doc in documents
    )


def direct_fit(runtime: Runtime, documents: Sequence[ContextDocument]) -> tuple[bool, int, int]:
    """(fits in the window with room for the reply, tokens, window) for a direct call."""
    info = runtime.llm.info(runtime.config.model)
    tokens = document_tokens(documents) + estimate_tokens(runtime.config.query)
    reply = min(runtime.profile.root_max_output_tokens, info.max_output_tokens)
    return tokens + reply <= info.context_window, tokens, info.context_window


def should_answer_directly(runtime: Runtime, documents: Sequence[ContextDocument]) -> bool:
    """`auto` mode: short inputs gain nothing from orchestration."""
    fits, tokens, window = direct_fit(runtime, documents)
    limit = min(runtime.config.auto_direct_max_tokens, int(window * COMFORTABLE_SHARE))
    return fits and tokens <= limit


def direct_prompt(query: str, documents: Sequence[ContextDocument]) -> str:
    """The documents, each under its name, then the question."""
    parts = [f"<document name={doc.name!r}>\n{doc.text}\n</document>" for doc in documents]
    return "\n\n".join([*parts, f"Question: {query}"])


async def answer_directly(runtime: Runtime, documents: Sequence[ContextDocument]) -> CallOutcome:
    """One call, recorded as the tree's only (LLM) call."""
    config = runtime.config
    call_id = runtime.new_id("c")
    prompt = direct_prompt(config.query, documents)
    runtime.emit(
        CallStarted(
            run_id=runtime.run_id,
            call_id=call_id,
            parent_id=None,
            kind="llm",
            depth=1,
            model=config.model,
            prompt=prompt,
        )
    )
    messages = [{"role": "system", "content": DIRECT_SYSTEM}, {"role": "user", "content": prompt}]
    outcome: CallOutcome
    tokens, cost = (0, 0), 0.0
    try:
        completion = await runtime.request(
            call_id, config.model, messages, runtime.profile.root_max_output_tokens
        )
    except BudgetExceededError as error:
        outcome = CallOutcome(error.status, "", error.detail)
    except LLMError as error:
        outcome = CallOutcome("error", "", str(error))
    except asyncio.CancelledError:
        _finish(runtime, call_id, CallOutcome("cancelled", "", "cancelled"), (0, 0), 0.0)
        raise
    else:
        outcome = CallOutcome("ok", completion.content)
        tokens = (completion.input_tokens, completion.output_tokens)
        runtime.emit(
            AnswerSubmitted(
                run_id=runtime.run_id, call_id=call_id, answer=completion.content, source="direct"
            )
        )
        _finish(runtime, call_id, outcome, tokens, completion.cost_usd)
        return outcome
    _finish(runtime, call_id, outcome, tokens, cost)
    return outcome


def _finish(
    runtime: Runtime,
    call_id: str,
    outcome: CallOutcome,
    tokens: tuple[int, int],
    cost: float | None,
) -> None:
    runtime.emit(
        CallFinished(
            run_id=runtime.run_id,
            call_id=call_id,
            status=outcome.status,
            response=outcome.answer,
            input_tokens=tokens[0],
            output_tokens=tokens[1],
            cost_usd=cost,
            error=outcome.error,
        )
    )
