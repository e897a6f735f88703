"""One cell: its code run in the REPL's namespace, its output captured, its result sized to send."""

from __future__ import annotations

import ast
import contextlib
import errno
import io
import linecache
import os
import sys
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

from .channel import MessageTooLarge, encode
from .repl import Repl

OUTPUT_CAP = int(os.environ.get("RLM_WORKER_OUTPUT_CAP", "1000000"))
"""A cell's stdout and its stderr each keep at most this many characters (the app sets it)."""
FULL_NOTE_VARIABLE = "RLM_WORKER_FULL_NOTE"
"""What the app says under an error that a full scratch folder caused (how much room it has)."""
FULL = {errno.ENOSPC, errno.EFBIG, getattr(errno, "EDQUOT", errno.ENOSPC)}


PROGRESS_EVERY_S = 0.1
"""How often a cell that reports as it goes (`Progress`) sends what it printed since."""


class Progress:
    """A cell's output and answer sent to the app as they come, at most every
    `PROGRESS_EVERY_S` (and at once for an answer): where a cell past its time limit is
    stopped with its worker (WebAssembly), what it did before is not lost with it."""

    def __init__(self, send: Callable[[dict[str, Any]], None], cell_id: Any) -> None:
        self._send = send
        self._cell = cell_id
        self._pending: dict[str, list[str]] = {"stdout": [], "stderr": []}
        self._sent_at = time.monotonic()

    def wrote(self, stream: str, text: str) -> None:
        self._pending[stream].append(text)
        if time.monotonic() - self._sent_at >= PROGRESS_EVERY_S:
            self.flush()

    def flush(self, **answer: Any) -> None:
        texts = {name: "".join(parts) for name, parts in self._pending.items()}
        self._pending = {"stdout": [], "stderr": []}
        self._sent_at = time.monotonic()
        if any(texts.values()) or answer:
            with contextlib.suppress(MessageTooLarge):  # the result, cut to fit, carries it
                self._send({"type": "cell_progress", "id": self._cell, **texts, **answer})


class CappedBuffer(io.TextIOBase):
    """A text sink that keeps the first `OUTPUT_CAP` characters and counts the rest (and hands
    what it keeps to `progress`, as `stream`, when the cell reports as it goes)."""

    def __init__(self, progress: Progress | None = None, stream: str = "stdout") -> None:
        self._parts: list[str] = []
        self._size = 0
        self.dropped = 0
        self._lock = threading.Lock()
        self._progress = progress
        self._stream = stream

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        with self._lock:
            room = OUTPUT_CAP - self._size
            if room > 0:
                self._parts.append(text[:room])
                self._size += min(len(text), room)
                if self._progress is not None:
                    self._progress.wrote(self._stream, text[:room])
            self.dropped += max(0, len(text) - max(room, 0))
        return len(text)

    def getvalue(self) -> str:
        text = "".join(self._parts)
        if self.dropped:
            text += f"\n[... {self.dropped:,} more characters not kept ...]"
        return text


class Interrupted(BaseException):
    """Raised in the main thread by SIGINT from the parent (cell timeout)."""


def on_sigint(signum: int, frame: Any) -> None:
    """SIGINT's handler while a cell or a state request runs: the parent's time limit struck."""
    raise Interrupted()


def run_cell(
    repl: Repl, code: str, index: int, progress: Progress | None = None
) -> dict[str, Any]:
    """Execute one code block; the value of a trailing expression is printed, as in a REPL.

    With `progress`, what it prints and an answer it gives are also sent as they come."""
    out, err = CappedBuffer(progress, "stdout"), CappedBuffer(progress, "stderr")
    if progress is not None:
        repl.on_answer = lambda: progress.flush(
            final=repl.final, final_source=repl.final_source, sources=repl.final_sources
        )
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
        error = format_error(exc)
    finally:
        sys.stdout, sys.stderr = saved
        repl.on_answer = None
    duration = time.perf_counter() - started
    refused = repl.check_answer_dict()
    error = error or refused
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
        "sources": repl.final_sources,
        "restored": repl.restore_tools(),
    }


def fit(result: dict[str, Any], limit: int | None) -> dict[str, Any]:
    """Cut the longest text fields of a cell result until its frame is within `limit` bytes."""
    fields = ("stdout", "stderr", "error", "partial", "final")
    for _ in range(64):
        if limit is None or len(encode(result)) <= limit:
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


def format_error(exc: BaseException) -> str:
    """`exc` as the model is shown it: the traceback's frames in cells (else its last frame), or
    a syntax error's own lines."""
    if isinstance(exc, SyntaxError):
        return "".join(traceback.format_exception_only(type(exc), exc)).rstrip()
    frames = traceback.extract_tb(exc.__traceback__)
    cell_frames = [f for f in frames if f.filename.startswith("<cell")]
    lines = ["Traceback (most recent call last):"]
    lines += [line.rstrip() for line in traceback.format_list(cell_frames or frames[-1:])]
    lines += [s.rstrip() for s in traceback.format_exception_only(type(exc), exc)]
    if isinstance(exc, OSError) and exc.errno in FULL:
        lines.append(_full_note())
    return "\n".join(lines)


def _full_note() -> str:
    room = os.environ.get(FULL_NOTE_VARIABLE) or "a bounded amount"
    return (
        f"Note: the files this run's REPL writes may take {room} in all, and that room is used "
        "up: keep data in variables, or delete files you no longer need."
    )
