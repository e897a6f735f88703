"""Direct mode: one plain call with the documents in the prompt, for inputs that fit comfortably."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rlm_desktop.engine.config import AUTO_DIRECT_MAX_TOKENS
from rlm_desktop.engine.context import ContextDocument
from rlm_desktop.engine.estimates import estimate_tokens
from rlm_desktop.engine.events import AnswerSubmitted
from rlm_desktop.engine.ledger import BudgetExceededError
from rlm_desktop.engine.llm import LLMError
from rlm_desktop.engine.rlm_call import CallOutcome
from rlm_desktop.engine.runtime import Runtime

DIRECT_SYSTEM = (
    "Answer the user's question using the documents provided. Be complete and precise; say so "
    "plainly when the documents do not contain the answer."
)
COMFORTABLE_SHARE = 0.5


def document_tokens(documents: Sequence[ContextDocument], model: str) -> int:
    """The documents' tokens: the loader's counts where known, else an estimate."""
    return sum(
        doc.tokens if doc.tokens is not None else estimate_tokens(doc.text, model)
        for doc in documents
    )


@dataclass(frozen=True)
class DirectFit:
    """How the documents and question measure against the root model's window."""

    tokens: int
    window: int
    fits: bool
    """Fits with room for the reply: a direct call is possible."""
    comfortable: bool
    """Short enough that `auto` mode answers with one direct call."""


def direct_fit(runtime: Runtime, documents: Sequence[ContextDocument]) -> DirectFit:
    """Count the input once and judge both whether a direct call fits and whether it is worth it."""
    info = runtime.llm.info(runtime.config.model)
    model = runtime.config.model
    tokens = document_tokens(documents, model) + estimate_tokens(runtime.config.query, model)
    reply = min(runtime.profile.root_max_output_tokens, info.max_output_tokens)
    fits = tokens + reply <= info.context_window
    limit = comfortable_tokens(info.context_window, runtime.config.auto_direct_max_tokens)
    return DirectFit(tokens, info.context_window, fits, fits and tokens <= limit)


def comfortable_tokens(context_window: int, ceiling: int = AUTO_DIRECT_MAX_TOKENS) -> int:
    """The largest input `auto` mode answers with one direct call: at most `ceiling` tokens, and
    at most half the model's window (a nearly full window answers worse than a REPL would)."""
    return min(ceiling, int(context_window * COMFORTABLE_SHARE))


def direct_prompt(query: str, documents: Sequence[ContextDocument]) -> str:
    """The documents, each under its name, then the question."""
    parts = [f"<document name={doc.name!r}>\n{doc.text}\n</document>" for doc in documents]
    return "\n\n".join([*parts, f"Question: {query}"])


async def answer_directly(runtime: Runtime, documents: Sequence[ContextDocument]) -> CallOutcome:
    """One call, recorded as the tree's only (LLM) call."""
    config = runtime.config
    prompt = direct_prompt(config.query, documents)
    try:
        call_id, completion = await runtime.llm_call(
            parent_id=None,
            depth=1,
            model=config.model,
            prompt=prompt,
            messages=[
                {"role": "system", "content": DIRECT_SYSTEM},
                {"role": "user", "content": prompt},
            ],
            max_output_tokens=runtime.profile.root_max_output_tokens,
        )
    except BudgetExceededError as error:
        return CallOutcome(error.status, "", error.detail)
    except LLMError as error:
        return CallOutcome("error", "", str(error), error.status)
    runtime.emit(
        AnswerSubmitted(
            run_id=runtime.run_id, call_id=call_id, answer=completion.content, source="direct"
        )
    )
    return CallOutcome("ok", completion.content)
