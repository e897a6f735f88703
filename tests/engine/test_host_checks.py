"""The app trusts nothing from a worker: model code can write to the worker's channel directly.

Each test's model code finds the channel and writes to it behind the worker's back: an oversized
frame header, garbage, or a forged result. Under the kernel sandbox the channel is a socket among
the worker's inherited file descriptors; under the wasm sandbox it is the host's `send` function,
which model code can import as the worker does. Every backend must stop the worker alike.
"""

from __future__ import annotations

import asyncio
import base64
import json
import struct
import time
import zlib

import psutil
import pytest

from rlm_desktop.engine import Budget
from rlm_desktop.engine.events import CellExecuted, WorkerRestarted
from rlm_desktop.engine.sandbox.handover import frame_limit
from tests.engine.scripting import (
    QUERY,
    make_run,
    observation_after,
    of_type,
    repl,
    run_to_end,
    scripted,
)
from tests.scripted_server import ScriptedServer

FIND_SOCKET = """
import os
def write_raw(data):
    try:
        from wit_world.imports import host  # the wasm sandbox's channel
    except ImportError:
        host = None
    if host is not None:
        for start in range(0, len(data), 1 << 20):
            host.send(data[start:start + (1 << 20)].decode('latin-1'))
        return
    import socket
    sent = 0
    for fd in range(3, 256):
        try:
            sock = socket.socket(fileno=os.dup(fd))
        except OSError:
            continue
        if sock.family == socket.AF_UNIX and sock.type == socket.SOCK_STREAM:
            sock.sendall(data)
            sent += 1
        sock.detach()
    assert sent, 'no socket found'
"""


def raw_write(payload: bytes, *, after_s: float | None = None) -> str:
    """Model code that writes `payload` to the worker's socket (from a timer thread if `after_s`).

    A long payload is written compressed in the code: a model's reply stays within the
    `max_tokens` it was sent (the app cuts one that passes it)."""
    data = repr(payload)
    if len(data) > 10_000:
        packed = base64.b64encode(zlib.compress(payload, 9)).decode()
        data = f"__import__('zlib').decompress(__import__('base64').b64decode({packed!r}))"
    if after_s is None:
        return f"{FIND_SOCKET}\nwrite_raw({data})\nprint('written')"
    return (
        f"{FIND_SOCKET}\nimport threading\n"
        f"threading.Timer({after_s}, write_raw, ({data},)).start()\nprint('armed')"
    )


def frame(message: object) -> bytes:
    body = json.dumps(message).encode()
    return struct.pack(">I", len(body)) + body


def test_the_frame_limit_follows_the_output_cap_and_the_context() -> None:
    assert frame_limit(1_000_000, 10_000) == 9_000_000
    assert frame_limit(10_000, 50_000_000) == 101_000_000


async def test_an_oversized_frame_header_stops_the_worker_before_its_body_is_read(
    scripted_server: ScriptedServer, sandbox: str
) -> None:
    code = (
        f"{FIND_SOCKET}\nimport struct\n"
        "write_raw(struct.pack('>I', 1_500_000_000) + b'x' * 300_000_000)"
    )
    turns = [
        repl("keep = 1"),
        repl(code),
        repl("print('keep' in globals())"),
        repl("FINAL('went on')"),
    ]
    scripted_server.respond_with(scripted({QUERY: turns}))
    parent = psutil.Process()
    before = parent.memory_info().rss
    started = time.monotonic()
    run = make_run(scripted_server, sandbox=sandbox, budget=Budget(cell_timeout_s=60))
    result, events = await run_to_end(run)

    assert time.monotonic() - started < 30
    assert parent.memory_info().rss - before < 200 * 1024 * 1024
    shown = observation_after(scripted_server, 1)
    assert "the REPL worker sent a 1.5 GB message (limit 9 MB); it was stopped" in shown
    assert "your variables are gone" in shown
    cell = of_type(events, CellExecuted)[1]
    assert cell.variables_lost
    assert "1.5 GB" in (cell.error or "")
    (restarted,) = of_type(events, WorkerRestarted)
    assert "1.5 GB" in restarted.reason
    assert "False" in observation_after(scripted_server, 2)
    assert (result.status, result.answer) == ("completed", "went on")


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        (b"\x00\x00\x00\x01x", "not valid JSON"),
        (frame([1, 2]), "not a JSON object (list)"),
        (struct.pack(">I", 200_000) + b"[" * 200_000, "not valid JSON"),
        (frame({"type": "hello"}), "unknown type 'hello'"),
        (frame({"type": "cell_result"}), "'cell_result' message with missing or malformed fields"),
        (
            frame({"type": "cell_result", "id": 1, "stdout": 5, "stderr": "", "error": None}),
            "(stdout)",
        ),
        (
            frame({"type": "call", "id": 1, "op": "llm_query", "args": {"prompt": ["x"]}}),
            "'call' message with missing or malformed fields (args.prompt)",
        ),
        (frame({"type": "call", "id": 1, "op": "rm -rf", "args": {}}), "(op)"),
        (struct.pack(">I", 100) + b"short", "not valid JSON"),
        (struct.pack(">I", 100_000) + b"short", "of 100 KB, then nothing for 5 s); it was stopped"),
        (
            frame({"type": "ready", "pid": 1, "attached": 4}) + b"abcd",
            "'ready' message with missing or malformed fields (attached)",
        ),
        (frame({"type": "state_chunk", "id": 1}), "(attached)"),
        (frame({"type": "state_chunk", "id": 1, "attached": -1}), "(attached)"),
        (
            frame({"type": "state_chunk", "id": 1, "attached": 2_000_000_000}),
            "sent 2 GB of a saved state at once (limit 9 MB); it was stopped",
        ),
        (
            frame({"type": "state_chunk", "id": 1, "attached": 100_000}) + b"short",
            "of 100 KB, then nothing for 5 s); it was stopped",
        ),
    ],
    ids=[
        "five-bytes",
        "not-an-object",
        "deeply-nested",
        "unknown-type",
        "no-fields",
        "wrong-type",
        "bad-call-args",
        "bad-op",
        "short-frame",
        "incomplete-frame",
        "bytes-after-another-frame",
        "state-piece-without-size",
        "state-piece-of-negative-size",
        "state-piece-too-large",
        "state-piece-cut-short",
    ],
)
async def test_an_invalid_frame_ends_the_cell_at_once_and_the_run_goes_on(
    scripted_server: ScriptedServer, payload: bytes, message: str, sandbox: str
) -> None:
    turns = [repl(raw_write(payload)), repl("FINAL('went on')")]
    scripted_server.respond_with(scripted({QUERY: turns}))
    started = time.monotonic()
    run = make_run(scripted_server, sandbox=sandbox, budget=Budget(cell_timeout_s=60))
    result, events = await run_to_end(run)

    assert time.monotonic() - started < 20
    shown = observation_after(scripted_server, 0)
    assert message in shown
    assert "it was stopped" in shown
    assert "your variables are gone" in shown
    assert of_type(events, CellExecuted)[0].variables_lost
    assert len(of_type(events, WorkerRestarted)) == 1
    assert (result.status, result.answer) == ("completed", "went on")


async def test_a_worker_stopped_between_cells_is_named_in_the_next_observation(
    scripted_server: ScriptedServer,
) -> None:
    turns = [
        repl("keep = 1\n" + raw_write(b"\x00\x00\x00\x01x", after_s=0.1)),
        repl("print('keep' in globals())"),
        repl("FINAL('went on')"),
    ]
    scripted_server.respond_with(scripted({QUERY: turns}))
    scripted_server.latency_s = 1.0
    result, events = await run_to_end(make_run(scripted_server, sandbox="kernel"))

    shown = observation_after(scripted_server, 1)
    assert "not valid JSON" in shown
    assert "it was restarted before this cell" in shown
    assert "your variables are gone" in shown
    assert "False" in shown
    (restarted,) = of_type(events, WorkerRestarted)
    assert "not valid JSON" in restarted.reason
    assert (result.status, result.answer) == ("completed", "went on")


async def test_a_forged_result_has_its_texts_cut_to_the_cap_by_the_app(
    scripted_server: ScriptedServer, sandbox: str
) -> None:
    forged = frame(
        {
            "type": "cell_result",
            "id": 1,
            "stdout": "HEAD" + "A" * 300_000 + "TAIL",
            "stderr": "E" * 300_000,
            "error": "X" * 300_000,
            "duration_s": 0.1,
        }
    )
    turns = [repl(raw_write(forged) + "\nimport time\ntime.sleep(0.5)"), repl("FINAL('ok')")]
    scripted_server.respond_with(scripted({QUERY: turns}))
    run = make_run(scripted_server, sandbox=sandbox, stored_output_cap_chars=10_000, output_limit_chars=2_000)
    result, events = await run_to_end(run)

    cell = of_type(events, CellExecuted)[0]
    assert len(cell.stdout) <= 10_000
    assert cell.stdout.startswith("HEAD")
    assert cell.stdout.endswith("TAIL")
    assert "characters cut" in cell.stdout
    assert len(cell.stderr) <= 10_000
    assert len(cell.error or "") <= 10_000
    assert len(observation_after(scripted_server, 0)) <= 2_000
    assert not of_type(events, WorkerRestarted)
    assert (result.status, result.answer) == ("completed", "ok")


async def test_an_honest_worker_cuts_its_own_result_to_fit_the_frame_limit(
    scripted_server: ScriptedServer, sandbox: str
) -> None:
    code = "FINAL('\\x01' * 400_000 + 'END')"
    scripted_server.respond_with(scripted({QUERY: [repl(code)]}))
    run = make_run(scripted_server, sandbox=sandbox, stored_output_cap_chars=10_000)
    result, events = await run_to_end(run)

    assert not of_type(events, WorkerRestarted)
    assert result.status == "completed"
    assert result.answer.startswith("\x01" * 1000)
    assert "characters not sent: too large" in result.answer


async def test_a_sub_call_too_large_to_send_is_an_error_in_the_cell(
    scripted_server: ScriptedServer, sandbox: str
) -> None:
    code = "try:\n    llm_query('x' * 2_000_000)\nexcept LLMCallError as e:\n    print('caught', e)"
    scripted_server.respond_with(scripted({QUERY: [repl(code), repl("FINAL('ok')")]}))
    run = make_run(scripted_server, sandbox=sandbox, stored_output_cap_chars=10_000)
    result, events = await run_to_end(run)

    shown = observation_after(scripted_server, 0)
    assert "caught llm_query: the request is too large to send" in shown
    assert not of_type(events, WorkerRestarted)
    assert (result.status, result.answer) == ("completed", "ok")


async def test_a_flood_of_frames_holds_the_apps_memory(
    scripted_server: ScriptedServer, sandbox: str
) -> None:
    """Valid frames the app drops (progress of another cell), 1.5 GB of them as fast as model
    code can write: the app reads them no faster than it handles them, so its memory holds."""
    flood = frame({"type": "cell_progress", "id": 999, "stdout": "x" * 500_000})
    code = (
        f"{FIND_SOCKET}\n"
        f"data = {flood!r}\n"
        "for _ in range(3_000):\n"
        "    write_raw(data)\n"
        "print('flooded')"
    )
    scripted_server.respond_with(scripted({QUERY: [repl(code), repl("FINAL('held')")]}))
    parent = psutil.Process()
    peak = [parent.memory_info().rss]

    async def watch() -> None:
        while True:
            peak.append(parent.memory_info().rss)
            await asyncio.sleep(0.02)

    watcher = asyncio.create_task(watch())
    run = make_run(scripted_server, sandbox=sandbox, budget=Budget(cell_timeout_s=120))
    result, _ = await run_to_end(run)
    watcher.cancel()

    assert (result.status, result.answer) == ("completed", "held")
    assert max(peak) - peak[0] < 300 * 1024 * 1024
