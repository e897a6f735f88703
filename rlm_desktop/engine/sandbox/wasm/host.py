"""The wasm host process: model code's WebAssembly Pythons, one guest per RLM call, on threads.

Started by the app (launcher.py) as `python -I -m rlm_desktop.engine.sandbox.wasm.host DATA`,
spawned with pipes: envelopes (envelope.py) come on stdin and go out on stdout; nothing else is
written there. It ends when stdin closes, whatever its guests are doing, so it never outlives
the app on any system. A guest sees only what the host hands it: its scratch folder (at
`/scratch`), a few environment variables, and the two functions of guest/repl.wit; no other
file, no network, no clock beyond WASI's, no process. Each guest's memory is bounded by its
store; a guest the app interrupts traps at the next epoch tick and ends.
"""

from __future__ import annotations

import ctypes
import json
import os
import queue
import sys
import threading
import time
from pathlib import Path
from typing import Any, BinaryIO

from rlm_desktop.engine.sandbox.level import WASM_LEVEL
from rlm_desktop.engine.sandbox.wasm.compiled import load_component, make_engine, runtime_version
from rlm_desktop.engine.sandbox.wasm.envelope import CONTROL, control, pack, read_envelope

TICK_S = 0.02
"""How often the epoch advances: the longest an interrupted guest keeps running."""
MEMORY_CHECK_S = 0.05
"""How often the guests' memory together is checked against the run's limit."""
SCRATCH = "/scratch"


class Output:
    """The host's stdout, written whole envelope by envelope from any thread."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self._lock = threading.Lock()

    def send(self, guest: int, body: bytes) -> None:
        with self._lock:
            self._stream.write(pack(guest, body))
            self._stream.flush()

    def control(self, message: dict[str, Any]) -> None:
        with self._lock:
            self._stream.write(control(message))
            self._stream.flush()


class Guest:
    """One WebAssembly Python serving one RLM call, on a thread of its own."""

    def __init__(self, host: Host, number: int, request: dict[str, Any]) -> None:
        self.host = host
        self.number = number
        self.request = request
        self.inbox: queue.Queue[bytes | None] = queue.Queue()
        self.interrupted = False
        self.stop_reason: str | None = None
        """Why the host stopped it, when not at the app's word."""
        self.busy = True
        """True while its code runs (not waiting for the app in `receive`)."""
        self._callback: Any = None

    def run(self) -> None:
        """Serve until the guest returns or traps; then tell the app why it ended."""
        self.host.current.guest = self
        reason: str | None = None
        try:
            self._serve()
        except Exception as error:
            reason = self._reason(error)
        self.host.ended(self, reason)

    def _serve(self) -> None:
        import wasmtime

        store = wasmtime.Store(self.host.engine)
        wasi = wasmtime.WasiConfig()
        wasi.env = sorted(self._environment().items())
        wasi.preopen_dir(self.request["cwd"], SCRATCH)
        for folder, seen_as in self.request.get("read", []):
            wasi.preopen_dir(str(folder), str(seen_as), False)
        store.set_wasi(wasi)
        memory = self.request.get("memory_bytes")
        if isinstance(memory, int) and memory > 0:
            store.set_limits(memory_size=memory)
        self._watch_epochs(store)
        instance = self.host.linker.instantiate(store, self.host.component)
        serve = instance.get_func(store, "serve")
        if serve is None:
            raise RuntimeError("the guest component exports no `serve`")
        serve(store)

    def _environment(self) -> dict[str, str]:
        given = self.request.get("env", {})
        env = {str(k): str(v) for k, v in given.items()} if isinstance(given, dict) else {}
        env.update(RLM_SCRATCH=SCRATCH, HOME=SCRATCH, TMPDIR=f"{SCRATCH}/tmp", PWD=SCRATCH)
        return env

    def _watch_epochs(self, store: Any) -> None:
        """At every tick the guest runs, go on one more tick unless the app interrupted it."""
        from wasmtime import _ffi as ffi

        kind = ffi.wasmtime_update_deadline_kind_t

        def on_tick(_context: Any, _data: Any, delta: Any, update: Any) -> int:
            if self.interrupted:
                error = ffi.wasmtime_error_new(b"interrupted by the app")
                return ctypes.cast(error, ctypes.c_void_p).value or 0
            delta[0] = 1
            update[0] = kind(0).value  # continue
            return 0

        signature = ctypes.CFUNCTYPE(
            ctypes.c_size_t,
            ctypes.POINTER(ffi.wasmtime_context_t),
            ctypes.c_void_p,
            ctypes.POINTER(ctypes.c_uint64),
            ctypes.POINTER(kind),
        )
        self._callback = signature(on_tick)  # kept alive as long as the store
        finalizer = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(0)
        ffi.wasmtime_store_epoch_deadline_callback(store.ptr(), self._callback, None, finalizer)
        store.set_epoch_deadline(1)

    def stop(self, reason: str) -> None:
        """Trap at the next tick, ending with `reason`."""
        self.stop_reason = reason
        self.interrupted = True

    def _reason(self, error: Exception) -> str:
        if self.stop_reason is not None:
            return self.stop_reason
        if self.interrupted:
            return "interrupted"
        return trap_reason(str(error)) or type(error).__name__

    def receive(self) -> str | None:
        self.busy = False
        data = self.inbox.get()
        self.busy = True
        return None if data is None else data.decode("latin-1")

    def send(self, frame: str) -> None:
        self.host.output.send(self.number, frame.encode("latin-1"))


def trap_reason(text: str) -> str:
    """The line of a wasmtime error that says why (`wasm trap: call stack exhausted`), not its
    backtrace: the cause wasmtime names last, else the first line."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    for line in reversed(lines):
        if line.startswith("wasm trap:") or "interrupted by the app" in line:
            return line
    if "Caused by:" in lines and lines.index("Caused by:") + 1 < len(lines):
        return lines[lines.index("Caused by:") + 1]
    return lines[0] if lines else ""


class Host:
    """The engine, the compiled guest, its linker, and the guests now running."""

    def __init__(self, output: Output, cache_dir: Path) -> None:
        from wasmtime import component

        self.output = output
        self.engine = make_engine()
        self.component = load_component(
            self.engine, cache_dir, lambda: output.control({"event": "compiling"})
        )
        self.linker = component.Linker(self.engine)
        self.linker.add_wasip2()
        self.guests: dict[int, Guest] = {}
        self.run_memory_bytes: int | None = None
        """The memory all guests may hold together (the run's `memory_limit_mb`)."""
        self._lock = threading.Lock()
        self.current = threading.local()
        """The guest this thread serves (the host functions are the same for every guest)."""
        with self.linker.root() as root, root.add_instance("rlm:sandbox/host") as functions:
            functions.add_func("send", lambda _store, frame: self._guest().send(frame))
            functions.add_func("receive", lambda _store: self._guest().receive())

    def _guest(self) -> Guest:
        guest: Guest = self.current.guest
        return guest

    def start(self, number: int, request: dict[str, Any]) -> None:
        memory = request.get("memory_bytes")
        if isinstance(memory, int) and memory > 0:
            self.run_memory_bytes = memory
        guest = Guest(self, number, request)
        with self._lock:
            self.guests[number] = guest
        threading.Thread(target=guest.run, name=f"guest-{number}", daemon=True).start()

    def deliver(self, number: int, body: bytes) -> None:
        guest = self.guests.get(number)
        if guest is not None:
            guest.inbox.put(body)

    def interrupt(self, number: int) -> None:
        guest = self.guests.get(number)
        if guest is not None:
            guest.interrupted = True

    def end(self, number: int) -> None:
        guest = self.guests.get(number)
        if guest is not None:
            guest.interrupted = True
            guest.inbox.put(None)

    def ended(self, guest: Guest, reason: str | None) -> None:
        with self._lock:
            self.guests.pop(guest.number, None)
        self.output.control({"event": "ended", "guest": guest.number, "reason": reason})

    def tick(self) -> None:
        """Advance the epoch forever (a daemon thread)."""
        while True:
            time.sleep(TICK_S)
            self.engine.increment_epoch()

    def watch_memory(self) -> None:
        """Hold the run's guests together to the run's memory limit (a daemon thread): each
        guest's store holds it alone, so past it together the guests whose code is running
        (the ones growing) are stopped, as a cgroup's bound stops a kernel run's processes."""
        import psutil

        process = psutil.Process()
        baseline = process.memory_info().rss
        while True:
            time.sleep(MEMORY_CHECK_S)
            limit = self.run_memory_bytes
            if limit is None or process.memory_info().rss - baseline <= limit:
                continue
            reason = (
                f"the run's REPLs together passed their memory limit of {limit // 2**20:,} MB"
            )
            with self._lock:
                running = [guest for guest in self.guests.values() if guest.busy]
            for guest in running:
                guest.stop(reason)

    def obey(self, message: dict[str, Any]) -> None:
        op, number = message.get("op"), message.get("guest")
        if not isinstance(number, int) or number <= CONTROL:
            return
        if op == "spawn":
            self.start(number, message)
        elif op == "interrupt":
            self.interrupt(number)
        elif op == "end":
            self.end(number)


def report() -> dict[str, Any]:
    """What this sandbox isolates, as the launcher reports it (level.SandboxReport)."""
    return {
        "level": f"{WASM_LEVEL}+wasmtime{runtime_version()}",
        "filesystem": True,
        "network": True,
        "processes": True,
        "shared_bounds": False,
        "scratch_in_memory": False,
    }


def main(argv: list[str] | None = None) -> None:
    """Serve the app on stdin and stdout until stdin closes; then end at once."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        sys.exit("usage: host.py CACHE_FOLDER (started by RLM Desktop, not by hand)")
    incoming, outgoing = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing but envelopes on the real stdout
    output = Output(outgoing)
    try:
        host = Host(output, Path(args[0]))
    except Exception as error:
        output.control({"event": "failed", "error": f"{type(error).__name__}: {error}"})
        return
    threading.Thread(target=host.tick, name="epoch", daemon=True).start()
    threading.Thread(target=host.watch_memory, name="memory", daemon=True).start()
    output.control({"event": "ready", "sandbox": report()})
    while (envelope := read_envelope(incoming)) is not None:
        number, body = envelope
        if number == CONTROL:
            host.obey(json.loads(body))
        else:
            host.deliver(number, body)
    os._exit(0)


if __name__ == "__main__":
    main()
