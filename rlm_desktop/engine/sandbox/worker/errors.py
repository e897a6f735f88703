"""The errors a sub-call raises in model code, as the parent names them in its replies.

Model code knows them by their bare names (they are in its namespace), and a traceback prints
them so: a class of `__main__` prints unqualified, as they did when the worker was one script.
`launch.main` puts them in `__main__`, where pickle then finds them when a cell keeps one.
"""

from __future__ import annotations

from typing import Any

ERRORS_MODULE = "__main__"
"""The module the errors say they belong to."""


class SubCallError(Exception):
    """Base of sub-call errors. For batched calls, `results` holds the answers that did arrive."""

    __module__ = ERRORS_MODULE

    def __init__(self, message: str, results: list[Any] | None = None) -> None:
        super().__init__(message)
        self.results = results


class BudgetExceededError(SubCallError):
    """The run's budget does not allow this sub-call."""

    __module__ = ERRORS_MODULE


class LLMCallError(SubCallError):
    """A sub-LLM call failed."""

    __module__ = ERRORS_MODULE


class RLMChildError(LLMCallError):
    """A recursive child RLM call failed instead of answering."""

    __module__ = ERRORS_MODULE


ERRORS = {cls.__name__: cls for cls in (BudgetExceededError, LLMCallError, RLMChildError)}
"""The errors model code sees, by the name the parent sends as `error_type`."""
