"""What only the wasm sandbox has: its run-wide memory bound, its compiled guest's cache, a host
that never outlives the app, a guest that traps, a guest that is not built."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from rlm_desktop.engine import Budget
from rlm_desktop.engine.events import CellExecuted
from rlm_desktop.engine.sandbox.wasm import compiled
from rlm_desktop.engine.sandbox.wasm.compiled import GuestMissing, load_component, make_engine
from rlm_desktop.engine.sandbox.wasm.host import trap_reason
from tests.cli import ROOT, isolated_env
from tests.engine.scripting import (
    QUERY,
    make_run,
    of_type,
    repl,
    run_to_end,
    scripted,
)
from tests.scripted_server import ScriptedServer

HOLD = "held = bytearray(200 * 2**20)\nimport time\ntime.sleep(4)\nFINAL('held')"


async def test_the_runs_guests_are_held_to_its_memory_limit_together(
    scripted_server: ScriptedServer,
) -> None:
    children = [f"hold {n}" for n in range(4)]
    root = [repl(f"print(rlm_query_batched({children!r}))"), repl("FINAL('done')")]
    scripted_server.respond_with(
        scripted({QUERY: root, **{child: [repl(HOLD)] for child in children}})
    )
    run = make_run(
        scripted_server,
        sandbox="wasm",
        memory_limit_mb=512,
        budget=Budget(max_depth=2, cell_timeout_s=60),
    )
    result, events = await run_to_end(run)

    stopped = [
        c for c in of_type(events, CellExecuted) if "memory limit of 512 MB" in (c.error or "")
    ]
    assert stopped, [c.error for c in of_type(events, CellExecuted)]
    assert all("the run's REPLs together passed" in (c.error or "") for c in stopped)
    assert (result.status, result.answer) == ("completed", "done")


def test_a_damaged_compiled_guest_is_compiled_again_never_loaded(tmp_path: Path) -> None:
    compiles: list[str] = []
    engine = make_engine()
    load_component(engine, tmp_path, lambda: compiles.append("first"))
    (cached,) = tmp_path.glob("*.cwasm")
    data = bytearray(cached.read_bytes())
    data[len(data) // 2] ^= 0xFF  # one flipped byte of native code
    cached.write_bytes(bytes(data))
    load_component(engine, tmp_path, lambda: compiles.append("again"))
    assert compiles == ["first", "again"]
    assert cached.read_bytes() != bytes(data)
    load_component(engine, tmp_path, lambda: compiles.append("third"))
    assert compiles == ["first", "again"]


def test_a_guest_that_is_not_built_is_named_with_how_to_build_it(tmp_path: Path) -> None:
    with pytest.raises(GuestMissing, match=r"not built: run `make`"):
        load_component(make_engine(), tmp_path, lambda: None, guest=tmp_path / "guest.wasm")


def test_a_trap_is_named_by_its_cause_not_its_backtrace() -> None:
    text = (
        "error while executing at wasm backtrace:\n    0: 0x1 - python.so!f\n\n"
        "Caused by:\n    wasm trap: call stack exhausted"
    )
    assert trap_reason(text) == "wasm trap: call stack exhausted"
    assert compiled.cache_name("ab" * 32, "51.0.0").startswith(
        "guest-abababababababab-wasmtime51.0.0-"
    )


def test_the_host_ends_when_the_app_is_killed(tmp_path: Path, isolated_home: Path) -> None:
    """The app is killed outright (no clean-up runs): its host process sees its stdin close and
    ends too, with the guest it was running, on every system."""
    script = (
        "import asyncio, sys, time\n"
        "from pathlib import Path\n"
        "from rlm_desktop import paths\n"
        "from rlm_desktop.engine.sandbox.process import WorkerProcess\n"
        "from rlm_desktop.engine.sandbox.wasm.launcher import WasmLauncher\n"
        "async def main():\n"
        f"    scratch = Path({str(tmp_path / 'run')!r})\n"
        "    launcher = WasmLauncher(scratch, 1000, cache_dir=paths.compiled_root())\n"
        "    async def no(op, args): return ''\n"
        "    worker = WorkerProcess('c', [], scratch_dir=scratch / 'w', memory_limit_mb=256,\n"
        "                           output_cap_chars=1000, handler=no, launcher=launcher)\n"
        "    await worker.start()\n"
        "    print(launcher._process.pid, flush=True)\n"
        "    await worker.execute('while True: pass', 600)\n"
        "asyncio.run(main())\n"
    )
    app = subprocess.Popen(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=isolated_env(isolated_home),
        stdout=subprocess.PIPE,
        text=True,
    )
    assert app.stdout is not None
    host = psutil.Process(int(app.stdout.readline()))
    time.sleep(0.5)
    assert host.is_running()
    os.kill(app.pid, signal.SIGKILL)
    app.wait()
    gone, _ = psutil.wait_procs([host], timeout=10)
    assert gone, "the host outlived the app"
