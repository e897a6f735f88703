"""A question's variables kept for its follow-up: pickled here and sent to the app over the
protocol in chunks; sent back to a later question's worker and put back there.

The bytes travel over the channel, not through a file in the worker's folder: the app never
opens a file model code could have made (a link to a key, a pipe), and the folder may be a file
system of the sandbox's own that the app does not see (a tmpfs sized to the run's quota)."""

from __future__ import annotations

import ast
import linecache
import pickle
import types
from collections.abc import Callable
from typing import Any

from . import cell_module
from .channel import megabytes
from .repl import Repl

STATE_FORMAT = 1
STATE_CHUNK = 512 * 1024
"""The most of a saved state one message carries (well under the app's smallest frame limit)."""


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


def why(error: BaseException) -> str:
    """`error` in one short line: its type and the first 120 characters of its message."""
    text = " ".join(str(error).split())[:120]
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def save_state(repl: Repl, cap_bytes: int, send: Callable[[bytes], None]) -> dict[str, Any]:
    """Keep the model's variables for a later question: their pickle goes to `send` in pieces of
    at most `STATE_CHUNK` bytes, and the reply says what was kept.

    Values are pickled one by one, so one that does not pickle costs only itself, and kept while
    they fit in `cap_bytes`; functions and classes defined in cells are kept as their source,
    modules as their names. Contexts, histories and tools are the app's to rebuild.
    """
    import inspect
    import textwrap

    cell_module.install(repl.namespace)
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
            if cell_module.defined_in_cell(value):
                source = _class_source(value) if isinstance(value, type) else None
                sources[name] = source or textwrap.dedent(inspect.getsource(value))
                continue
            data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as error:  # pickling runs the objects' own code: anything can fail
            skipped[name] = f"cannot be kept ({why(error)})"
            continue
        if len(data) > room:
            skipped[name] = (
                f"too large to keep ({megabytes(len(data))}; the cap left {megabytes(room)})"
            )
            continue
        room -= len(data)
        values[name] = data
    state = {"format": STATE_FORMAT, "values": values, "sources": sources, "modules": modules}
    payload = pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL)
    for start in range(0, len(payload), STATE_CHUNK):
        send(payload[start : start + STATE_CHUNK])
    kept = sorted([*values, *sources, *modules])
    return {"type": "state_saved", "saved": kept, "skipped": skipped, "bytes": len(payload)}


def restore_state(repl: Repl, data: bytes) -> dict[str, Any]:
    """Put back what `save_state` kept (`data`, its pickle): modules first, then cell
    definitions, then values."""
    import importlib

    failed: dict[str, str] = {}
    restored: list[str] = []
    try:
        state = pickle.loads(data)
        if not isinstance(state, dict):
            raise TypeError(f"a saved state is a dict, not {type(state).__name__}")
    except Exception as error:  # a cut or foreign pickle: nothing comes back
        return {"type": "state_restored", "restored": [], "failed": {}, "error": why(error)}
    cell_module.install(repl.namespace)
    namespace = repl.namespace
    for name, module in dict(state.get("modules", {})).items():
        try:
            namespace[name] = importlib.import_module(module)
            restored.append(name)
        except Exception as error:
            failed[name] = f"import {module} failed ({why(error)})"
    for name, source in dict(state.get("sources", {})).items():
        filename = f"<restored {name}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        try:
            exec(compile(source, filename, "exec"), namespace)
            restored.append(name)
        except Exception as error:
            failed[name] = f"its definition failed to run again ({why(error)})"
    for name, data in dict(state.get("values", {})).items():
        try:
            namespace[name] = pickle.loads(data)
            restored.append(name)
        except Exception as error:
            failed[name] = f"cannot be unpickled ({why(error)})"
    return {"type": "state_restored", "restored": sorted(restored), "failed": failed}
