"""The REPL worker: runs model-written code in its own process, one per RLM call.

Standard library only, started by path with `python -I -S`, so nothing of the application is
imported here. One launcher process per run forks a worker for each RLM call; each worker speaks
length-prefixed JSON frames with the parent over its own socket (stdin/stdout are /dev/null, so
stray writes by model code cannot corrupt the protocol). `llm_query`/`rlm_query` are proxied to the
parent with request ids, so they work from threads too.
"""

from __future__ import annotations

import ast
import io
import itertools
import json
import linecache
import os
import pickle
import queue
import reprlib
import signal
import socket
import struct
import sys
import threading
import time
import traceback
import types
from collections.abc import Callable
from typing import Any

HEADER = struct.Struct(">I")
REPL_MODULE = "__repl__"
"""The module name of everything defined in cells (what pickle records for their classes)."""
STATE_FORMAT = 1
OUTPUT_CAP = int(os.environ.get("RLM_WORKER_OUTPUT_CAP", "1000000"))
VARIABLES_SHOWN = 100
"""At most this many of the model's variables are reported after a cell (the first defined)."""
VALUE_CHARS = 200
"""A reported value's repr (or text) is cut to this many characters."""
NAME_CHARS = 100
"""A variable whose name is longer than this is not reported."""
VARIABLES_SECONDS = 0.25
"""Reading the variables after a cell stops after this long; a value whose repr was still running
is shown as too slow from then on, and its repr is not called again."""


class SubCallError(Exception):
    """Base of sub-call errors. For batched calls, `results` holds the answers that did arrive."""

    def __init__(self, message: str, results: list[Any] | None = None) -> None:
        super().__init__(message)
        self.results = results


class BudgetExceededError(SubCallError):
    """The run's budget does not allow this sub-call."""


class LLMCallError(SubCallError):
    """A sub-LLM call failed."""


class RLMChildError(LLMCallError):
    """A recursive child RLM call failed instead of answering."""


QUEUED = ("exec", "history", "save_state", "restore_state")
"""Requests served in order by the main thread, between cells."""

ERRORS = {cls.__name__: cls for cls in (BudgetExceededError, LLMCallError, RLMChildError)}


class MessageTooLarge(ValueError):
    """A message is larger than the app accepts from a worker (it would stop the worker)."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"{_megabytes(size)} is over the {_megabytes(limit)} limit")
        self.size = size
        self.limit = limit


def _megabytes(size: int) -> str:
    return f"{size / 1e6:.1f} MB"


def _encode(message: dict[str, Any]) -> bytes:
    return json.dumps(message, ensure_ascii=False).encode("utf-8", "surrogatepass")


class Channel:
    """Framed JSON over the two protocol pipes; `send` is safe from any thread.

    `limit` is the largest frame the app accepts (it sends it in the init message); the app stops a
    worker that sends more, so `send` refuses such a message instead.
    """

    def __init__(self, reader: Any, writer: Any) -> None:
        self._reader = reader
        self._writer = writer
        self._lock = threading.Lock()
        self.limit: int | None = None

    def send(self, message: dict[str, Any]) -> None:
        data = _encode(message)
        if self.limit is not None and len(data) > self.limit:
            raise MessageTooLarge(len(data), self.limit)
        with self._lock:
            self._writer.write(HEADER.pack(len(data)) + data)
            self._writer.flush()

    def receive(self) -> dict[str, Any] | None:
        header = self._reader.read(HEADER.size)
        if len(header) < HEADER.size:
            return None
        (length,) = HEADER.unpack(header)
        result: dict[str, Any] = json.loads(self._reader.read(length))
        return result


class CappedBuffer(io.TextIOBase):
    """A text sink that keeps the first `OUTPUT_CAP` characters and counts the rest."""

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._size = 0
        self.dropped = 0
        self._lock = threading.Lock()

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        with self._lock:
            room = OUTPUT_CAP - self._size
            if room > 0:
                self._parts.append(text[:room])
                self._size += min(len(text), room)
            self.dropped += max(0, len(text) - max(room, 0))
        return len(text)

    def getvalue(self) -> str:
        text = "".join(self._parts)
        if self.dropped:
            text += f"\n[... {self.dropped:,} more characters not kept ...]"
        return text


class Proxy:
    """Sends sub-call requests to the parent and waits for their results."""

    def __init__(self, channel: Channel) -> None:
        self._channel = channel
        self._ids = itertools.count(1)
        self._pending: dict[int, tuple[threading.Event, list[dict[str, Any]]]] = {}
        self._lock = threading.Lock()

    def call(self, op: str, **arguments: Any) -> Any:
        request_id = next(self._ids)
        done = threading.Event()
        slot: list[dict[str, Any]] = []
        with self._lock:
            self._pending[request_id] = (done, slot)
        try:
            try:
                self._channel.send({"type": "call", "id": request_id, "op": op, "args": arguments})
            except MessageTooLarge as error:
                raise LLMCallError(
                    f"{op}: the request is too large to send ({error}); send less text per call"
                ) from None
            done.wait()
        finally:
            with self._lock:
                self._pending.pop(request_id, None)
        reply = slot[0]
        if reply.get("ok"):
            return reply.get("value")
        error_class = ERRORS.get(reply.get("error_type", ""), LLMCallError)
        raise error_class(reply.get("message", "sub-call failed"), reply.get("results"))

    def resolve(self, message: dict[str, Any]) -> None:
        with self._lock:
            entry = self._pending.get(message.get("id", -1))
        if entry is not None:
            entry[1].append(message)
            entry[0].set()


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
        self.history: list[Any] = []
        self.namespace: dict[str, Any] = {"__name__": REPL_MODULE, "__builtins__": __builtins__}
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
            answer={"content": "", "ready": False},
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
        # A value whose repr was too slow, kept so that its id stays its own: id → (value, shown).
        self._slow: dict[int, tuple[Any, str]] = {}

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
            self.namespace["answer"] = {"content": "", "ready": False}
            restored.append("answer")
        if self.namespace.get("__builtins__") is not __builtins__:
            self.namespace["__builtins__"] = __builtins__
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

    def final_value(self, value: Any) -> str:
        """Submit `str(value)` as the answer; the run ends after this cell."""
        self.final, self.final_source = str(value), "FINAL"
        return self.final

    def final_var(self, name: Any) -> str:
        """Submit the value of the REPL variable `name`."""
        if not isinstance(name, str):
            return self.final_value(name)
        key = name.strip().strip("'\"")
        if key not in self.namespace or key in self._builtin_names - {"answer", "context"}:
            raise NameError(
                f"FINAL_VAR({name!r}): no variable named {key!r} in the REPL; "
                f"assign it first (e.g. {key} = ...) or call FINAL(value)"
            )
        self.final, self.final_source = str(self.namespace[key]), "FINAL_VAR"
        return self.final

    def show_vars(self) -> dict[str, str]:
        """The user variables and their types."""
        return {k: type(v).__name__ for k, v in self.user_variables().items()}

    def user_variables(self) -> dict[str, Any]:
        """The model's own variables: the namespace without the tools, contexts and histories."""
        hidden = self._builtin_names | {"__name__", "__builtins__"}
        return {k: v for k, v in self.namespace.items() if k not in hidden}

    def variables_shown(self) -> dict[str, Any]:
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
        previous = signal.signal(signal.SIGALRM, _too_slow)
        try:
            signal.setitimer(signal.ITIMER_REAL, VARIABLES_SECONDS, VARIABLES_SECONDS)
            try:
                self._read_variables(shown)
            except _TooSlow:
                pass
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
        except _TooSlow:
            pass
        finally:
            signal.signal(signal.SIGALRM, previous)
        return shown

    def _read_variables(self, shown: dict[str, Any]) -> None:
        for name, value in self.namespace.items():
            if len(shown) >= VARIABLES_SHOWN:
                break
            if (
                name in self._builtin_names
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

    def partial_answer(self) -> str | None:
        """`answer["content"]` when the model has started filling it in."""
        answer = self.namespace.get("answer")
        content = answer.get("content") if isinstance(answer, dict) else None
        return str(content) if content else None

    def check_answer_dict(self) -> None:
        answer = self.namespace.get("answer")
        if self.final is None and isinstance(answer, dict) and answer.get("ready"):
            self.final, self.final_source = str(answer.get("content", "")), "answer"


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
    """`value` as a reported variable shows it, or `_LEFT_OUT` (see `Repl.variables_shown`)."""
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


def _portable(value: Any) -> Any:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return list(value)
    return str(value)


class Interrupted(BaseException):
    """Raised in the main thread by SIGINT from the parent (cell timeout)."""


class _TooSlow(BaseException):
    """Raised in the main thread by SIGALRM when reading the variables takes too long."""


def _too_slow(signum: int, frame: Any) -> None:
    raise _TooSlow()


def _on_sigint(signum: int, frame: Any) -> None:
    raise Interrupted()


def run_cell(repl: Repl, code: str, index: int) -> dict[str, Any]:
    """Execute one code block; the value of a trailing expression is printed, as in a REPL."""
    out, err = CappedBuffer(), CappedBuffer()
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    error: str | None = None
    interrupted = False
    started = time.perf_counter()
    filename = f"<cell {index}>"
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    try:
        tree = ast.parse(code, filename=filename, mode="exec")
        last = tree.body[-1] if tree.body else None
        tail = tree.body.pop() if isinstance(last, ast.Expr) else None
        exec(compile(tree, filename, "exec"), repl.namespace)
        if isinstance(tail, ast.Expr):
            value = eval(compile(ast.Expression(tail.value), filename, "eval"), repl.namespace)
            if value is not None and repl.final is None:
                print(repr(value))
    except Interrupted:
        interrupted = True
        error = "TimeoutError: the cell was interrupted because it ran past the cell time limit"
    except BaseException as exc:
        error = _format_error(exc)
    finally:
        sys.stdout, sys.stderr = saved
    duration = time.perf_counter() - started
    repl.check_answer_dict()
    try:
        variables = repl.variables_shown()
    except Interrupted:  # the time limit struck while the variables were read: keep the output
        variables = {}
    return {
        "variables": variables,
        "partial": repl.partial_answer(),
        "type": "cell_result",
        "stdout": out.getvalue(),
        "stderr": err.getvalue(),
        "error": error,
        "interrupted": interrupted,
        "duration_s": duration,
        "final": repl.final,
        "final_source": repl.final_source,
        "restored": repl.restore_tools(),
    }


def _fit(result: dict[str, Any], limit: int | None) -> dict[str, Any]:
    """Cut the longest text fields of a cell result until its frame is within `limit` bytes."""
    fields = ("stdout", "stderr", "error", "partial", "final")
    for _ in range(64):
        if limit is None or len(_encode(result)) <= limit:
            break
        key = max(fields, key=lambda k: len(result.get(k) or ""))
        text = result.get(key) or ""
        if not text:
            break
        keep = len(text) // 2
        result[key] = (
            text[:keep] + f"\n[... {len(text) - keep:,} characters not sent: too large ...]"
        )
    return result


def _format_error(exc: BaseException) -> str:
    if isinstance(exc, SyntaxError):
        return "".join(traceback.format_exception_only(type(exc), exc)).rstrip()
    frames = traceback.extract_tb(exc.__traceback__)
    cell_frames = [f for f in frames if f.filename.startswith("<cell")]
    lines = ["Traceback (most recent call last):"]
    lines += [line.rstrip() for line in traceback.format_list(cell_frames or frames[-1:])]
    lines += [s.rstrip() for s in traceback.format_exception_only(type(exc), exc)]
    return "\n".join(lines)


def _apply_limits(memory_limit_mb: int | None) -> None:
    if memory_limit_mb:
        try:
            import resource

            limit = memory_limit_mb * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        except (ImportError, ValueError, OSError):
            pass


class _ReplModule:
    """The namespace seen as the module `__repl__`, so pickle finds what cells defined by name."""

    def __init__(self, namespace: dict[str, Any]) -> None:
        self.__dict__["_namespace"] = namespace

    def __getattr__(self, name: str) -> Any:
        try:
            return self.__dict__["_namespace"][name]
        except KeyError:
            raise AttributeError(name) from None


def _as_module(repl: Repl) -> None:
    sys.modules[REPL_MODULE] = _ReplModule(repl.namespace)  # type: ignore[assignment]


def _defined_in_cell(value: Any) -> bool:
    return (
        isinstance(value, type | types.FunctionType)
        and getattr(value, "__module__", None) == REPL_MODULE
    )


def _class_source(cls: type) -> str | None:
    """The source of a class defined in a cell: the last cell (or restored definition) that
    defines it at top level. (`inspect` cannot find it: the class's module has no file.)"""
    names = [n for n in linecache.cache if n.startswith(("<cell ", "<restored "))]
    names.sort(key=lambda n: (n.startswith("<cell "), int(n[6:-1]) if n[6:-1].isdigit() else 0))
    for filename in reversed(names):
        source = "".join(linecache.getlines(filename))
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in reversed(tree.body):
            if isinstance(node, ast.ClassDef) and node.name == cls.__name__:
                lines = source.splitlines(True)
                start = min([node.lineno, *(d.lineno for d in node.decorator_list)]) - 1
                return "".join(lines[start : node.end_lineno])
    return None


def _why(error: BaseException) -> str:
    text = " ".join(str(error).split())[:120]
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def save_state(repl: Repl, file: str, cap_bytes: int) -> dict[str, Any]:
    """Keep the model's variables in `file` (in this worker's own folder) for a later question.

    Values are pickled one by one, so one that does not pickle costs only itself, and kept while
    they fit in `cap_bytes`; functions and classes defined in cells are kept as their source,
    modules as their names. Contexts, histories and tools are the app's to rebuild.
    """
    import inspect
    import textwrap

    _as_module(repl)
    values: dict[str, bytes] = {}
    sources: dict[str, str] = {}
    modules: dict[str, str] = {}
    skipped: dict[str, str] = {}
    room = cap_bytes
    for name, value in repl.user_variables().items():
        if isinstance(value, types.ModuleType):
            modules[name] = value.__name__
            continue
        try:
            if getattr(value, "__name__", None) == "<lambda>":
                skipped[name] = "a lambda; define it with def to keep it"
                continue
            if _defined_in_cell(value):
                source = _class_source(value) if isinstance(value, type) else None
                sources[name] = source or textwrap.dedent(inspect.getsource(value))
                continue
            data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as error:  # pickling runs the objects' own code: anything can fail
            skipped[name] = f"cannot be kept ({_why(error)})"
            continue
        if len(data) > room:
            skipped[name] = (
                f"too large to keep ({_megabytes(len(data))}; the cap left {_megabytes(room)})"
            )
            continue
        room -= len(data)
        values[name] = data
    state = {"format": STATE_FORMAT, "values": values, "sources": sources, "modules": modules}
    payload = pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL)
    with open(file + ".part", "wb") as out:
        out.write(payload)
    os.replace(file + ".part", file)
    kept = sorted([*values, *sources, *modules])
    return {"type": "state_saved", "saved": kept, "skipped": skipped, "bytes": len(payload)}


def restore_state(repl: Repl, file: str) -> dict[str, Any]:
    """Put back what `save_state` kept: modules first, then cell definitions, then values."""
    import importlib

    failed: dict[str, str] = {}
    restored: list[str] = []
    try:
        with open(file, "rb") as saved:
            state = pickle.load(saved)
    except Exception as error:  # a missing, cut or foreign file: nothing comes back
        return {"type": "state_restored", "restored": [], "failed": {}, "error": _why(error)}
    _as_module(repl)
    namespace = repl.namespace
    for name, module in dict(state.get("modules", {})).items():
        try:
            namespace[name] = importlib.import_module(module)
            restored.append(name)
        except Exception as error:
            failed[name] = f"import {module} failed ({_why(error)})"
    for name, source in dict(state.get("sources", {})).items():
        filename = f"<restored {name}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        try:
            exec(compile(source, filename, "exec"), namespace)
            restored.append(name)
        except Exception as error:
            failed[name] = f"its definition failed to run again ({_why(error)})"
    for name, data in dict(state.get("values", {})).items():
        try:
            namespace[name] = pickle.loads(data)
            restored.append(name)
        except Exception as error:
            failed[name] = f"cannot be unpickled ({_why(error)})"
    return {"type": "state_restored", "restored": sorted(restored), "failed": failed}


def _handle(repl: Repl, request: dict[str, Any]) -> dict[str, Any] | None:
    """Serve one request that is not a cell; returns the reply to send, if it has one."""
    kind = request.get("type")
    if kind == "history":
        repl.history.extend(request.get("messages", []))
        return None
    if kind == "save_state":
        try:
            return save_state(repl, request["file"], int(request.get("cap_bytes", 0)))
        except Interrupted:
            return {"type": "state_saved", "saved": [], "skipped": {}, "error": "interrupted"}
        except Exception as error:
            return {"type": "state_saved", "saved": [], "skipped": {}, "error": _why(error)}
    if kind == "restore_state":
        try:
            return restore_state(repl, request["file"])
        except Interrupted:
            return {"type": "state_restored", "restored": [], "failed": {}, "error": "interrupted"}
    return None


def serve(channel: Channel) -> None:
    """Serve one RLM call: receive the context, then execute cells until told to stop."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    init = channel.receive()
    if init is None:
        return
    _apply_limits(init.get("memory_limit_mb"))
    channel.limit = init.get("frame_limit")
    sys.path.extend(p for p in init.get("sys_path", []) if p not in sys.path)
    proxy = Proxy(channel)
    repl = Repl(
        proxy, init["context"], init.get("meta", []), init.get("contexts"), init.get("histories")
    )
    del init
    cells: queue.Queue[dict[str, Any] | None] = queue.Queue()

    def read_loop() -> None:
        while True:
            message = channel.receive()
            if message is None or message.get("type") == "shutdown":
                cells.put(None)
                return
            if message.get("type") == "result":
                proxy.resolve(message)
            elif message.get("type") in QUEUED:
                cells.put(message)

    threading.Thread(target=read_loop, name="protocol-reader", daemon=True).start()
    channel.send({"type": "ready", "pid": os.getpid()})
    while True:
        request = cells.get()
        if request is None:
            break
        if request.get("type") != "exec":
            signal.signal(signal.SIGINT, _on_sigint)
            try:
                reply = _handle(repl, request)
            finally:
                signal.signal(signal.SIGINT, signal.SIG_IGN)
            if reply is not None:
                reply["id"] = request.get("id")
                channel.send(reply)
            continue
        signal.signal(signal.SIGINT, _on_sigint)
        try:
            result = run_cell(repl, request["code"], request.get("index", 0))
        except Interrupted:
            result = {
                "type": "cell_result",
                "stdout": "",
                "stderr": "",
                "error": "TimeoutError: interrupted",
                "interrupted": True,
                "duration_s": 0.0,
                "restored": repl.restore_tools(),
            }
        finally:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        result["id"] = request.get("id")
        channel.send(_fit(result, channel.limit))


def _become_worker(request: dict[str, Any], data: socket.socket) -> Channel:
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    os.setsid()
    cwd = request["cwd"]
    os.makedirs(os.path.join(cwd, "tmp"), exist_ok=True)
    os.chdir(cwd)
    os.environ["HOME"] = cwd
    os.environ["TMPDIR"] = os.path.join(cwd, "tmp")
    if "module" in SANDBOX:
        # A layer of this call's own: write only its scratch folder, read only its own /proc.
        SANDBOX["module"].confine_worker(SANDBOX, SANDBOX["spec"], cwd)
    reader = data.makefile("rb", buffering=1 << 20)
    writer = data.makefile("wb", buffering=1 << 16)
    return Channel(reader, writer)


def launcher(control: socket.socket) -> None:
    """Fork a worker per request, handing each the socket the parent sent along.

    Forking this warm, single-threaded process costs about a millisecond, where starting a fresh
    interpreter costs tens: it is what lets 64 child RLM calls start at once.
    """
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    while True:
        try:
            message, fds, _flags, _address = socket.recv_fds(control, 65536, 1)
        except OSError:
            return
        if not message or not fds:
            return
        request = json.loads(message)
        try:
            pid = os.fork()
        except OSError as error:  # the sandbox's task cap is reached
            os.close(fds[0])
            control.send(json.dumps({"error": f"cannot start a worker: {error}"}).encode())
            continue
        if pid == 0:
            try:
                # The worker answers itself: the kernel attaches its pid as the app sees it
                # (SCM_CREDENTIALS), which differs from os.getpid() inside a PID namespace.
                control.send(json.dumps({"pid": os.getpid()}).encode())
                control.close()
                serve(_become_worker(request, socket.socket(fileno=fds[0])))
            finally:
                os._exit(0)
        os.close(fds[0])


SANDBOX: dict[str, Any] = {}
"""What `confine.confine_launcher` applied (`level`, `filesystem`, ...), its `spec` and `module`."""


def _confine_module() -> Any:
    """confine.py from this script's folder (`python -I` leaves the folder off sys.path)."""
    import importlib.util

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "confine.py")
    spec = importlib.util.spec_from_file_location("rlm_worker_confine", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


FROZEN_LAUNCHER_FLAG = "--repl-launcher"
"""How a frozen bundle starts itself as the launcher (packaging/bundle_entry.py calls `main`)."""


def main(argv: list[str] | None = None) -> None:
    """`worker.py --launcher FD`: confine this process, report the level, serve spawn requests.

    `argv` defaults to the command line's arguments; a frozen bundle passes them itself.
    """
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2 or args[0] != "--launcher" or not args[1].isdigit():
        sys.exit("usage: worker.py --launcher FD (started by RLM Desktop, not by hand)")
    fd = int(args[1])
    spec = json.loads(os.environ.pop("RLM_SANDBOX", "null") or "null")
    report: dict[str, Any] = {"level": "none", "filesystem": False, "network": False}
    if spec is not None:
        module = _confine_module()
        report = module.confine_launcher(spec, fd)
        SANDBOX.update(report, spec=spec, module=module)
    control = socket.socket(fileno=fd)
    control.send(json.dumps({"sandbox": report}).encode())
    launcher(control)


if __name__ == "__main__":
    main()
