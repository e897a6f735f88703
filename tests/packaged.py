"""What the packaging tests ask of an installed app (a pipx install, the frozen bundle): the
environment a user's machine gives it, a real run whose model code runs in its wasm sandbox, and
its wasm host started as the app starts it, timed to its first guest."""

from __future__ import annotations

import json
import struct
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlm_desktop.engine.sandbox.wasm.compiled import runtime_version
from rlm_desktop.engine.sandbox.wasm.envelope import CONTROL, control, pack, read_envelope
from rlm_desktop.engine.sandbox.wasm.launcher import FROZEN_HOST_FLAG
from rlm_desktop.paths import COMPILED_ENV
from tests.cli import ROOT, isolated_env
from tests.conftest import TEST_MODEL
from tests.scripted_rlm import repl, scripted
from tests.scripted_server import ScriptedServer, last_user_text

MEMOS = ROOT / "resources" / "samples" / "memos"
WASM_QUESTION = "Where does the code run?"
WASM_CODE = """\
import sys, re, json, statistics, collections
words = collections.Counter(re.findall(r"[a-z]+", " ".join(context).lower()))
print(sys.platform, len(context), "documents", statistics.median([3, 1, 4]), json.dumps([1]))
"""


def packaged_env(home: Path) -> dict[str, str]:
    """The tests' isolated environment without what points into this checkout: no PYTHONPATH
    (the installed app has its own package) and no shared compiled guest (the app compiles its
    guest into its data folder, as on a user's first run)."""
    env = isolated_env(home)
    env.pop("PYTHONPATH")
    env.pop(COMPILED_ENV, None)
    return env


@dataclass(frozen=True)
class WasmRun:
    """A finished `run --sandbox wasm --json` of an installed app."""

    result: dict[str, Any]
    seconds: float
    """From starting the app to its exit."""


def run_in_wasm(command: list[str], home: Path, server: ScriptedServer) -> WasmRun:
    """Run `command run ... --sandbox wasm` against the scripted server and check that the model
    code ran in the WebAssembly Python (sys.platform is wasi there) and the run completed."""
    server.respond_with(scripted({WASM_QUESTION: [repl(WASM_CODE), repl("FINAL(sys.platform)")]}))
    started = time.monotonic()
    done = subprocess.run(
        [
            *command,
            "run",
            "--query",
            WASM_QUESTION,
            "--doc",
            str(MEMOS),
            "--model",
            TEST_MODEL,
            "--api-base",
            server.base_url,
            "--mode",
            "rlm",
            "--sandbox",
            "wasm",
            "--json",
        ],
        env=packaged_env(home),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        cwd=home.parent,
    )
    seconds = time.monotonic() - started
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert (result["status"], result["answer"]) == ("completed", "wasi"), result
    assert result["sandbox"].startswith(f"wasm+wasmtime{runtime_version()}"), result["sandbox"]
    observation = last_user_text(server.chat_requests()[-1])
    assert "Traceback" not in observation, observation
    assert f"wasi {len(list(MEMOS.iterdir()))} documents 3 [1]" in observation, observation
    return WasmRun(result, seconds)


@dataclass(frozen=True)
class FirstGuest:
    """A wasm host started with FROZEN_HOST_FLAG, up to its first guest's `ready`."""

    compiled: bool
    """The host said it was compiling the guest (no compiled form in its folder)."""
    host_s: float
    """From starting the host to its `ready`."""
    guest_s: float
    """From asking for a guest to the guest's `ready` frame."""
    level: str


def first_guest(
    command: list[str], cache_dir: Path, scratch: Path, env: dict[str, str]
) -> FirstGuest:
    """Start `command FROZEN_HOST_FLAG cache_dir` with pipes as the app does, start a guest with
    an empty context, and wait for the worker in it to say it is ready."""
    scratch.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    host = subprocess.Popen(
        [*command, FROZEN_HOST_FLAG, str(cache_dir)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=scratch,
        env=env,
    )
    assert host.stdin is not None
    assert host.stdout is not None
    try:
        events = [_next(host.stdout, CONTROL)]
        while events[-1].get("event") == "compiling":
            events.append(_next(host.stdout, CONTROL))
        assert events[-1].get("event") == "ready", events
        host_s = time.monotonic() - started
        asked = time.monotonic()
        init = json.dumps({"context": "", "meta": []}).encode()
        end = json.dumps({"type": "context_end", "frame_limit": 10_000_000}).encode()
        host.stdin.write(control({"op": "spawn", "guest": 1, "cwd": str(scratch)}))
        host.stdin.write(pack(1, struct.pack(">I", len(init)) + init))
        host.stdin.write(pack(1, struct.pack(">I", len(end)) + end))
        host.stdin.flush()
        assert _next(host.stdout, 1)["type"] == "ready"
        guest_s = time.monotonic() - asked
    finally:
        _, errors = host.communicate(timeout=60)  # the host ends when its stdin closes
    assert host.returncode == 0, errors
    return FirstGuest(len(events) > 1, host_s, guest_s, events[-1]["sandbox"]["level"])


def _next(stream: Any, number: int) -> dict[str, Any]:
    """The next message for `number` from the host: a control message, or a guest's first
    frame (a length, then JSON); what the other guests send is skipped."""
    body = b""
    while True:
        envelope = read_envelope(stream)
        assert envelope is not None, "the wasm host ended"
        if envelope[0] == number:
            body += envelope[1]
            if number == CONTROL:
                return dict(json.loads(body))
            if len(body) >= 4 and len(body) >= 4 + struct.unpack(">I", body[:4])[0]:
                return dict(json.loads(body[4:]))
