"""Reading compressed formats (PDF, office files, e-books, mail, images, and any document in a
single `.gz`, `.bz2` or `.xz` file) in a worker process that has a time and a memory bound.

Their bytes are compressed: a file of a few hundred kilobytes can inflate to gigabytes, or keep a
parser busy for hours. So their text is extracted in a worker process (started with "spawn", like
the page workers of `pypdf_text`), one file after another: one worker per load, started when the
first such file comes (0.1-0.3 s: a fresh interpreter, multiprocessing's resource tracker and our
imports; the documents benchmark reports it). The worker and the page workers it starts are held
to a memory bound (reader_processes.py: the kernel's address-space limit on Linux, the
application's watch of their memory elsewhere); a file that outruns its time is stopped by killing
them all, and a file that runs out of memory ends as one line saying so. A new worker takes the
next file.

The worker also confines itself before its first request (reader_sandbox.py: no file of the
user's, no writes, no network, where the OS allows) and reports the level it got, which the
application logs and `--self-check` shows. Its answers are plain data that the application
checks field by field (reader_answers.py), never pickles: a parser taken over by a hostile file
must not be able to make the application run code. An answer that is not one the worker could
have sent stops the worker and costs that file only.

Where no process can be started (a sandbox, a frozen app without `freeze_support`), files are read
in this process without those bounds, as before.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import multiprocessing
import os
import signal
import sys
import time
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import TYPE_CHECKING, Any

import psutil

from rlm_desktop.documents import progress, reader_processes
from rlm_desktop.documents.decoding import Unreadable
from rlm_desktop.documents.extract import Extracted, Inflate, ReadSettings, extract
from rlm_desktop.documents.model import MIB, human_size
from rlm_desktop.documents.reader_answers import BadAnswer, decode, encode
from rlm_desktop.documents.reader_sandbox import PROCESS_ONLY, confine_reader, reader_folders

if TYPE_CHECKING:
    from rlm_desktop.engine.sandbox.level import SandboxReport

log = logging.getLogger(__name__)

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameters

_CONVERT = "convert it to text with another tool and load that"
REFUSED_ANSWER = (
    "the reader process sent an answer the app does not accept (the file may be crafted to "
    "attack its parser), so reading it was stopped; please report this"
)
_WORKING = encode("working")
_DONE = frozenset(("ok", "memory", "unreadable", "error"))
_VALUES: dict[str, type | tuple[type, ...]] = {
    "working": type(None),
    "memory": type(None),
    "unreadable": str,
    "error": str,
}
"""What each message but `ok` and `sandbox` carries."""


class ReadTimedOut(Unreadable):
    """The file was still being read when its time ran out; the caller words why it had to end."""


def out_of_memory(limit: int) -> str:
    """Why a file that hit the memory bound was not loaded."""
    return f"needs more than {human_size(limit)} of memory to read, so reading it was stopped; {_CONVERT}"


def _ran_out_of_memory(error: BaseException) -> bool:
    """True when `error`, or an error it was raised from, is an allocation that failed.

    lxml reports a failed allocation as a parse error (ERR_NO_MEMORY in its error log, the
    message often just "unknown error"), which the Word reader then words as a damaged file.
    """
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, MemoryError) or "NO_MEMORY" in str(getattr(seen, "error_log", "")):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _answer(
    kind: str, data: bytes, settings: ReadSettings, inflate: Inflate | None
) -> tuple[str, Any]:
    try:
        return "ok", extract(kind, data, settings, inflate)
    except Exception as error:
        if _ran_out_of_memory(error):
            return "memory", None
        if isinstance(error, Unreadable):
            return "unreadable", str(error)
        return "error", f"{type(error).__name__}: {str(error)[:100]}"


def _confine(memory_bytes: int) -> None:
    """Lead a process group of our own (so a kill reaches the page workers), dump no core and
    cap memory, where the platform has each of these."""
    if reader_processes.process_groups():
        os.setsid()
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    except (ImportError, ValueError, OSError):
        log.debug("no core dump limit on this platform", exc_info=True)
    try:
        reader_processes.bound_this_process(memory_bytes)
    except (ValueError, OSError):  # the application's watch still holds it
        log.debug("no address-space limit on this platform", exc_info=True)


def _keep_freed_memory() -> None:
    """Let glibc reuse the memory PDFium frees from one page to the next instead of returning it
    to the system: a fresh process otherwise maps and faults in ~500 MB over a 500-page PDF
    (0.2 s of its 1 s). The address-space bound still counts every byte. Elsewhere: no-op."""
    try:
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError, TypeError):  # no C library to ask, or no mallopt in it
        return
    mallopt(_M_MMAP_THRESHOLD, 32 * MIB)
    mallopt(_M_TRIM_THRESHOLD, 64 * MIB)


def serve(connection: Connection, memory_bytes: int, folders: list[str]) -> None:
    """The worker's loop: confine itself (reading only `folders` and the system's libraries)
    and say how, then read `(type, bytes, settings, inflate)` requests and send back
    `(status, value)` answers (reader_answers.py)."""
    _confine(memory_bytes)
    _keep_freed_memory()
    logging.getLogger("pypdf").setLevel(logging.CRITICAL)
    try:
        sandbox = confine_reader(folders)
    except Exception:  # each piece only narrows: what applied still holds
        sandbox = {"level": PROCESS_ONLY, "filesystem": False, "network": False}
    connection.send_bytes(encode("sandbox", sandbox))
    while True:
        try:
            kind, data, settings, inflate = connection.recv()
        except (EOFError, OSError):  # the application closed the pipe or is gone
            return
        progress.report_to(lambda: connection.send_bytes(_WORKING))
        answer = _answer(kind, data, settings, inflate)
        progress.report_to(None)
        del data
        try:
            connection.send_bytes(encode(*answer))
        except MemoryError:
            connection.send_bytes(encode("memory"))


class BoundedReader:
    """A worker process that reads one file at a time within a time and a memory bound."""

    def __init__(self, memory_bytes: int) -> None:
        self.memory_bytes = memory_bytes
        self._process: BaseProcess | None = None
        self._connection: Connection | None = None
        self._tree: reader_processes.ReaderTree | None = None
        self._unavailable = False
        self._reported = False
        self.sandbox: SandboxReport | None = None
        """The sandbox the worker reported it reads in, once one has started."""

    def read(
        self,
        kind: str,
        data: bytes,
        seconds: float,
        settings: ReadSettings | None = None,
        longest: float | None = None,
        inflate: Inflate | None = None,
    ) -> Extracted:
        """The text of `data` (decompressed first where `inflate` says how), read within
        `seconds` and the memory bound.

        Work done piece by piece (OCR, page by page: `progress.working`) has `seconds` from its
        last piece, up to `longest` in all. Raises `ReadTimedOut` when the time ran out and
        `Unreadable` for every other reason the file gives no text (damaged, locked, too big to
        hold in memory).
        """
        settings = settings or ReadSettings()
        connection = self._connection or self._start()
        if connection is None:
            return extract(kind, data, settings, inflate)
        started = time.monotonic()
        until = started + max(seconds, longest or 0.0)
        try:
            connection.send((kind, data, settings, inflate))
            while True:
                wait = min(seconds, until - time.monotonic())
                if not self._poll(connection, max(0.0, wait)):
                    self.close()
                    raise ReadTimedOut(f"still being read after {time.monotonic() - started:.0f} s")
                status, value = self._receive(connection)
                if status in _DONE:
                    break
        except (EOFError, OSError):
            raise Unreadable(self._died()) from None
        except BadAnswer:
            self.close()
            raise Unreadable(REFUSED_ANSWER) from None
        if status == "ok":
            assert isinstance(value, Extracted)
            return value
        if status == "memory":
            self.close()  # what it holds now is no use to the next file
            raise Unreadable(out_of_memory(self.memory_bytes))
        if status == "unreadable":
            raise Unreadable(value)
        raise Unreadable(f"could not read it ({value}); please report this")

    def _poll(self, connection: Connection, wait: float) -> bool:
        """Whether the worker sent something within `wait` seconds. Where the kernel does not
        bound its memory, its tree is watched meanwhile: past the bound it is stopped, and the
        file is `Unreadable` for that reason."""
        tree = self._tree
        if tree is None:
            return connection.poll(wait)
        end = time.monotonic() + wait
        while not connection.poll(min(reader_processes.WATCH_INTERVAL_S, wait)):
            if tree.resident_bytes() > self.memory_bytes:
                self.close()
                raise Unreadable(out_of_memory(self.memory_bytes))
            wait = end - time.monotonic()
            if wait <= 0:
                return False
        return True

    def _receive(self, connection: Connection) -> tuple[str, Any]:
        """The worker's next message, checked (`BadAnswer`); its sandbox report is kept.

        No answer can be larger than the memory the worker may hold it in.
        """
        status, value = decode(connection.recv_bytes(self.memory_bytes))
        if status == "sandbox" and not self._reported and isinstance(value, dict):
            self._reported = True  # sent once, before the worker read any file
            self._sandboxed(value)
        elif status != "ok" and not isinstance(value, _VALUES.get(status, ())):
            raise BadAnswer(f"a {status!r} message with a {type(value).__name__}")
        return status, value

    def _sandboxed(self, message: dict[str, Any]) -> None:
        from rlm_desktop.documents.reader_sandbox import described
        from rlm_desktop.engine.sandbox.level import SandboxReport

        report = SandboxReport.from_message(message)
        if report == self.sandbox:  # a worker started after one was stopped
            return
        self.sandbox = report
        if report.isolated or sys.platform not in ("linux", "darwin"):
            log.info("%s", described(report))
        else:
            log.warning("%s", described(report))

    def _start(self) -> Connection | None:
        if self._unavailable:
            return None
        # "spawn": forking a process that runs Qt threads is unsafe.
        context = multiprocessing.get_context("spawn")
        try:
            ours, theirs = context.Pipe()
            process = context.Process(
                target=serve,
                args=(theirs, self.memory_bytes, reader_folders()),
                name="rlm-document-reader",
            )
            process.start()
        except Exception:
            log.warning("cannot start a reader process; reading documents without bounds")
            self._unavailable = True
            return None
        theirs.close()
        self._process, self._connection, self._reported = process, ours, False
        self._tree = None
        if process.pid is not None and not reader_processes.kernel_bounds_memory():
            with contextlib.suppress(psutil.Error):  # gone already: the pipe will say so
                self._tree = reader_processes.ReaderTree(process.pid)
        return ours

    def _died(self) -> str:
        process = self._process
        if process is not None:
            process.join(1)  # the pipe can close a moment before the process has exited
        code = process.exitcode if process is not None else None
        self.close()
        if process is not None and code is None:  # alive, but its message broke the channel
            return REFUSED_ANSWER
        if code is not None and code > 0:  # it exited on its own: not the file's doing
            return f"the reader process stopped (exit code {code}); please report this"
        how = f" (signal {-code})" if code is not None and code < 0 else ""
        return (
            f"the reader process died while reading it{how}, most likely out of memory (the "
            f"limit is {human_size(self.memory_bytes)}); {_CONVERT}"
        )

    def close(self) -> None:
        """Stop the worker and every process it started, now."""
        process, connection, tree = self._process, self._connection, self._tree
        self._process = self._connection = self._tree = None
        if connection is not None:
            connection.close()
        if process is None:
            return
        if process.pid is not None and reader_processes.process_groups():
            with contextlib.suppress(OSError):
                os.killpg(process.pid, signal.SIGKILL)
        elif process.pid is not None:
            with contextlib.suppress(psutil.Error):
                (tree or reader_processes.ReaderTree(process.pid)).kill()
        with contextlib.suppress(OSError):
            process.kill()
        process.join(10)
        _stop_resource_tracker()


def _stop_resource_tracker() -> None:
    """Starting a process with "spawn" also starts multiprocessing's resource tracker, a helper
    that otherwise stays until the application exits; a finished load leaves nothing running.
    (The reader shares no semaphores or shared memory, so the tracker holds nothing.)"""
    from multiprocessing import resource_tracker

    stop = getattr(resource_tracker._resource_tracker, "_stop", None)
    if stop is not None:
        with contextlib.suppress(Exception):
            stop()
