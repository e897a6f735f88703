"""The model's variables after a cell, as short values within bounds of count, size and time."""

from __future__ import annotations

import itertools
import reprlib
import signal
import sys
import time
import types
from collections.abc import Callable
from typing import Any

from .cell_module import REPL_MODULE

VARIABLES_SHOWN = 100
"""At most this many of the model's variables are reported after a cell (the first defined)."""
VALUE_CHARS = 200
"""A reported value's repr (or text) is cut to this many characters."""
NAME_CHARS = 100
"""A variable whose name is longer than this is not reported."""
VARIABLES_SECONDS = 0.25
"""Reading the variables after a cell stops after this long; a value whose repr was still running
is shown as too slow from then on, and its repr is not called again."""


_LEFT_OUT = object()
_REPR_INT_BITS = 14_000
"""Past about 4,300 digits Python refuses to write an int in decimal (and it gets slow)."""
_IMPORTABLE = (
    type,
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodType,
    types.BuiltinMethodType,
)


class _ShortRepr(reprlib.Repr):
    """`reprlib`'s bounded repr without its sorting (a dict's keys, a set's items), which costs
    a sort of the whole container; a subclass of a container (a `Counter`, a `defaultdict`) is
    bounded as its base is, instead of falling back to its own unbounded repr."""

    def __init__(self) -> None:
        super().__init__()
        self.maxlevel = 3
        self.maxother = self.maxlong = VALUE_CHARS
        self.maxstring = 60  # a string inside a container: the whole is cut at VALUE_CHARS
        self.maxlist = self.maxtuple = self.maxset = self.maxdict = 10
        self.maxfrozenset = self.maxdeque = self.maxarray = 10
        self._containers: dict[type, Callable[[Any, int], str]] = {
            dict: self.repr_dict,
            list: self.repr_list,
            tuple: self.repr_tuple,
            set: self.repr_set,
            frozenset: self.repr_frozenset,
        }

    def repr1(self, x: Any, level: int) -> str:
        shown = self._containers.get(type(x))
        if shown is not None:
            return str(shown(x, level))
        if isinstance(x, tuple) and hasattr(type(x), "_fields"):  # a named tuple
            fields = getattr(type(x), "_fields")  # noqa: B009  (a named tuple's, not tuple's)
            pairs = itertools.islice(zip(fields, x, strict=False), self.maxtuple)
            inner = ", ".join(f"{name}={self.repr1(item, level - 1)}" for name, item in pairs)
            return f"{type(x).__name__}({inner}{', ...' if len(x) > self.maxtuple else ''})"
        for base, shown in self._containers.items():
            if isinstance(x, base):
                return f"{type(x).__name__}({shown(x, level)})"
        return super().repr1(x, level)

    def repr_dict(self, x: Any, level: int) -> str:
        if not x:
            return "{}"
        if level <= 0:
            return "{" + self.fillvalue + "}"
        pieces = [
            f"{self.repr1(key, level - 1)}: {self.repr1(x[key], level - 1)}"
            for key in itertools.islice(x, self.maxdict)
        ]
        if len(x) > self.maxdict:
            pieces.append(self.fillvalue)
        return "{" + ", ".join(pieces) + "}"

    def repr_set(self, x: Any, level: int) -> str:
        return self._items(x, level, "{", "}", self.maxset) if x else "set()"

    def repr_frozenset(self, x: Any, level: int) -> str:
        return self._items(x, level, "frozenset({", "})", self.maxfrozenset) if x else "frozenset()"

    def _items(self, x: Any, level: int, left: str, right: str, most: int) -> str:
        if level <= 0:
            return left + self.fillvalue + right
        pieces = [self.repr1(item, level - 1) for item in itertools.islice(x, most)]
        if len(x) > most:
            pieces.append(self.fillvalue)
        return left + ", ".join(pieces) + right


_SHORT = _ShortRepr()


def _cut(text: str) -> str:
    return text if len(text) <= VALUE_CHARS else text[: VALUE_CHARS - 3] + "..."


def _short_value(value: Any) -> Any:
    """`value` as a reported variable shows it, or `_LEFT_OUT` (see `VariableReader.read`)."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int) and -(2**63) <= value < 2**63:
        return value
    if isinstance(value, int) and value.bit_length() > _REPR_INT_BITS:
        return f"<int of {value.bit_length():,} bits>"
    if isinstance(value, float) and value == value and abs(value) != float("inf"):
        return value
    if isinstance(value, str):
        return _cut(value)
    if isinstance(value, types.ModuleType):
        return _LEFT_OUT
    if isinstance(value, _IMPORTABLE):
        if getattr(value, "__module__", None) != REPL_MODULE:
            return _LEFT_OUT
        return f"<{type(value).__name__} '{getattr(value, '__name__', '?')}'>"
    return _cut(_SHORT.repr(value))


class _TooSlow(BaseException):
    """Raised in the main thread by SIGALRM when reading the variables takes too long."""


def _too_slow(signum: int, frame: Any) -> None:
    raise _TooSlow()


def _within(seconds: float, work: Callable[[], None]) -> None:
    """Run `work`, stopping the Python code it runs once `seconds` have passed (a trace
    function checks the clock at each line): where there is no timer signal to do it."""
    deadline = time.monotonic() + seconds

    def check(frame: Any, event: str, argument: Any) -> Any:
        if time.monotonic() > deadline:
            raise _TooSlow()
        return check

    previous = sys.gettrace()
    sys.settrace(check)
    try:
        work()
    except _TooSlow:
        pass
    finally:
        sys.settrace(previous)


class VariableReader:
    """Reads a namespace's model variables, leaving out `hidden` names and the app's own values
    (by id: the contexts and histories under any other name)."""

    def __init__(self, hidden: set[str], app_values: set[int]) -> None:
        self._hidden = hidden
        self._app_values = app_values
        # A value whose repr was too slow, kept so that its id stays its own: id → (value, shown).
        self._slow: dict[int, tuple[Any, str]] = {}

    def read(self, namespace: dict[str, Any]) -> dict[str, Any]:
        """The model's variables as short values, for the record of a cell.

        As the reference's logger writes `locals`: None, booleans, numbers and text as they are
        (text cut to `VALUE_CHARS`), anything else as its repr, functions and classes defined in
        cells as `<function 'name'>`. Left out: names starting with `_`, modules, functions and
        classes imported from elsewhere, and the contexts and histories under any other name.
        At most `VARIABLES_SHOWN` of them; a repr is bounded before it is built (`reprlib`), and
        the whole reading by `VARIABLES_SECONDS` (a repr is the object's own code: it may never
        return), so that the cell's result, its output and a FINAL it gave are not held up.
        """
        shown: dict[str, Any] = {}
        if not hasattr(signal, "setitimer"):  # WebAssembly: no timer signal, a trace instead
            _within(VARIABLES_SECONDS, lambda: self._read_variables(namespace, shown))
            return shown
        previous = signal.signal(signal.SIGALRM, _too_slow)
        try:
            signal.setitimer(signal.ITIMER_REAL, VARIABLES_SECONDS, VARIABLES_SECONDS)
            try:
                self._read_variables(namespace, shown)
            except _TooSlow:
                pass
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
        except _TooSlow:
            pass
        finally:
            signal.signal(signal.SIGALRM, previous)
        return shown

    def _read_variables(self, namespace: dict[str, Any], shown: dict[str, Any]) -> None:
        for name, value in namespace.items():
            if len(shown) >= VARIABLES_SHOWN:
                break
            if (
                name in self._hidden
                or name.startswith("_")
                or len(name) > NAME_CHARS
                or id(value) in self._app_values
            ):
                continue
            if id(value) in self._slow:
                shown[name] = self._slow[id(value)][1]
                continue
            try:
                summary = _short_value(value)
            except _TooSlow:
                shown[name] = f"<{type(value).__name__}: repr too slow>"
                self._slow[id(value)] = (value, shown[name])
                return
            except Exception as error:  # a __repr__ is the object's own code: anything can fail
                summary = f"<{type(value).__name__}: repr failed ({type(error).__name__})>"
            if summary is not _LEFT_OUT:
                shown[name] = summary
