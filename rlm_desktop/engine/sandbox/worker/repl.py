"""The namespace model code runs in: `context`, the tools (`llm_query`, `FINAL`, ...) and `answer`."""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

from .cell_module import REPL_MODULE
from .errors import ERRORS
from .proxy import Proxy
from .sources import SourceError, document_lengths, read_sources
from .variables import VariableReader


class Repl:
    """The namespace the model's code runs in, and the final-answer signals it can raise."""

    def __init__(
        self,
        proxy: Proxy,
        context: Any,
        meta: list[dict[str, Any]],
        contexts: list[Any] | None = None,
        histories: list[Any] | None = None,
    ) -> None:
        self.proxy = proxy
        self.final: str | None = None
        self.final_source: str | None = None
        self.final_sources: list[dict[str, Any]] = []
        self._lengths = document_lengths(context)
        self.history: list[Any] = []
        self.on_answer: Callable[[], None] | None = None
        """Told when an answer is taken (cells.Progress sends it at once)."""
        # The builtins module, as `__main__` has it (an imported module's `__builtins__` is its dict).
        self.namespace: dict[str, Any] = {"__name__": REPL_MODULE, "__builtins__": builtins}
        # As in the reference's persistent mode: `context` is `context_0`, the documents added by
        # later questions of a conversation are `context_1`, ...; earlier questions' messages are
        # `history_0`, ...; `history` is this call's own messages, compacted turns included.
        for index, extra in enumerate([context, *(contexts or [])]):
            self.namespace[f"context_{index}"] = extra
        for index, earlier in enumerate(histories or []):
            self.namespace[f"history_{index}"] = earlier
        self.namespace.update(
            context=context,
            context_meta=meta,
            history=self.history,
            answer=_blank_answer(),
            llm_query=self.llm_query,
            llm_query_batched=self.llm_query_batched,
            rlm_query=self.rlm_query,
            rlm_query_batched=self.rlm_query_batched,
            FINAL=self.final_value,
            FINAL_VAR=self.final_var,
            SHOW_VARS=self.show_vars,
            **ERRORS,
        )
        self._builtin_names = set(self.namespace)
        skip = ("__name__", "__builtins__", "answer", "history")
        self._tools = {k: v for k, v in self.namespace.items() if k not in skip}
        self._app_values = {id(context), id(meta), *(id(v) for v in contexts or ())}
        self._app_values |= {id(self.history), *(id(v) for v in histories or ())}
        self._variables = VariableReader(self._builtin_names, self._app_values)

    def restore_tools(self) -> list[str]:
        """Put back the tools and `context` a cell rebound or deleted; returns their names.

        Identity is what counts: `context` mutated in place is the model's business and stays.
        `answer` is the model's to fill in, so it is only replaced when it is no longer a dict.
        """
        restored = []
        for name, value in self._tools.items():
            if name not in self.namespace or self.namespace[name] is not value:
                self.namespace[name] = value
                restored.append(name)
        if self.namespace.get("history") is not self.history:
            self.namespace["history"] = self.history
            restored.append("history")
        if not isinstance(self.namespace.get("answer"), dict):
            self.namespace["answer"] = _blank_answer()
            restored.append("answer")
        if self.namespace.get("__builtins__") is not builtins:
            self.namespace["__builtins__"] = builtins
        return restored

    def llm_query(self, prompt: Any, model: str | None = None) -> str:
        """One sub-LLM call; returns its reply text."""
        return str(self.proxy.call("llm_query", prompt=str(prompt), model=model))

    def llm_query_batched(self, prompts: Any, model: str | None = None) -> list[str]:
        """Concurrent sub-LLM calls; replies in input order."""
        return list(
            self.proxy.call("llm_query_batched", prompts=[str(p) for p in prompts], model=model)
        )

    def rlm_query(self, prompt: Any, context: Any = None, model: str | None = None) -> str:
        """A recursive child RLM with its own REPL; its `context` defaults to the prompt."""
        return str(
            self.proxy.call(
                "rlm_query", prompt=str(prompt), context=_portable(context), model=model
            )
        )

    def rlm_query_batched(
        self, prompts: Any, contexts: Any = None, model: str | None = None
    ) -> list[str]:
        """Concurrent child RLM calls; answers in input order."""
        prompts = [str(p) for p in prompts]
        ctx = [None] * len(prompts) if contexts is None else [_portable(c) for c in contexts]
        if len(ctx) != len(prompts):
            raise ValueError(f"rlm_query_batched: {len(prompts)} prompts but {len(ctx)} contexts")
        return list(
            self.proxy.call("rlm_query_batched", prompts=prompts, contexts=ctx, model=model)
        )

    def final_value(self, value: Any, sources: Any = None) -> str:
        """Submit `str(value)` as the answer, with the passages of `context` it rests on; the run
        ends after this cell."""
        return self._submit(str(value), "FINAL", sources)

    def final_var(self, name: Any, sources: Any = None) -> str:
        """Submit the value of the REPL variable `name`, with its sources as for `FINAL`."""
        if not isinstance(name, str):
            return self.final_value(name, sources)
        key = name.strip().strip("'\"")
        if key not in self.namespace or key in self._builtin_names - {"answer", "context"}:
            raise NameError(
                f"FINAL_VAR({name!r}): no variable named {key!r} in the REPL; "
                f"assign it first (e.g. {key} = ...) or call FINAL(value)"
            )
        return self._submit(str(self.namespace[key]), "FINAL_VAR", sources)

    def _submit(self, text: str, signal: str, sources: Any) -> str:
        """Take the answer once its sources are sound: a bad one raises, and nothing is taken."""
        self.final_sources = read_sources(signal, sources, self._lengths)
        self.final, self.final_source = text, signal
        if self.on_answer is not None:
            self.on_answer()
        return text

    def show_vars(self) -> dict[str, str]:
        """The user variables and their types."""
        return {k: type(v).__name__ for k, v in self.user_variables().items()}

    def user_variables(self) -> dict[str, Any]:
        """The model's own variables: the namespace without the tools, contexts and histories."""
        hidden = self._builtin_names | {"__name__", "__builtins__"}
        return {k: v for k, v in self.namespace.items() if k not in hidden}

    def variables_shown(self) -> dict[str, Any]:
        """The model's variables as short values, for the record of a cell (variables.py)."""
        return self._variables.read(self.namespace)

    def partial_answer(self) -> str | None:
        """`answer["content"]` when the model has started filling it in."""
        answer = self.namespace.get("answer")
        content = answer.get("content") if isinstance(answer, dict) else None
        return str(content) if content else None

    def check_answer_dict(self) -> str | None:
        """Take `answer["content"]` once the model set `answer["ready"]`; returns why it could
        not be taken (its sources are unsound), which the cell reports as its error."""
        answer = self.namespace.get("answer")
        if self.final is not None or not isinstance(answer, dict) or not answer.get("ready"):
            return None
        try:
            self._submit(str(answer.get("content", "")), "answer", answer.get("sources"))
        except SourceError as error:
            answer["ready"] = False
            return f"SourceError: {error}"
        return None


def _blank_answer() -> dict[str, Any]:
    return {"content": "", "ready": False, "sources": []}


def _portable(value: Any) -> Any:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return list(value)
    return str(value)
