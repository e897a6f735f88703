"""What cells define belongs to the module `__repl__`: its name, and the module pickle finds it in."""

from __future__ import annotations

import sys
import types
from typing import Any

REPL_MODULE = "__repl__"
"""The module name of everything defined in cells (what pickle records for their classes)."""


class ReplModule:
    """The namespace seen as the module `__repl__`, so pickle finds what cells defined by name."""

    def __init__(self, namespace: dict[str, Any]) -> None:
        self.__dict__["_namespace"] = namespace

    def __getattr__(self, name: str) -> Any:
        try:
            return self.__dict__["_namespace"][name]
        except KeyError:
            raise AttributeError(name) from None


def install(namespace: dict[str, Any]) -> None:
    """Make `namespace` the module `__repl__` for pickle (saving or restoring the state)."""
    sys.modules[REPL_MODULE] = ReplModule(namespace)  # type: ignore[assignment]


def defined_in_cell(value: Any) -> bool:
    """True for a function or class that a cell defined."""
    return (
        isinstance(value, type | types.FunctionType)
        and getattr(value, "__module__", None) == REPL_MODULE
    )
