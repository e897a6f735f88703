"""The kernel sandbox around model code (Linux): real runs whose cells attack, and ordinary cells.

Each attack is a cell that tries something and prints ALLOWED or DENIED; the test reads what the
model was shown. The sandbox's pieces are checked against what this machine provides, so the
tests say which piece is missing rather than fail on an older kernel.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import psutil
import pytest

from rlm_desktop import paths
from rlm_desktop.engine import Budget, ConfigError, RunResult
from rlm_desktop.engine.events import RunFinished
from rlm_desktop.engine.sandbox.kernel.confine import landlock_abi
from rlm_desktop.engine.sandbox.kernel.run_bounds import make_shared_bounds
from rlm_desktop.engine.sandbox.level import SandboxReport, refuse_unless_isolated
from rlm_desktop.store import Store
from tests.cli import run_cli
from tests.engine.scripting import (
    QUERY,
    TEST_MODEL,
    make_run,
    observation_after,
    of_type,
    repl,
    run_to_end,
    scripted,
)
from tests.scripted_server import ScriptedServer

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux sandbox")

PROBE = (
    "def probe(name, action):\n"
    "    try:\n"
    "        action()\n"
    "        print('ALLOWED', name)\n"
    "    except OSError as error:\n"
    "        print('DENIED', name, type(error).__name__)\n"
)


def _user_namespaces() -> bool:
    if shutil.which("unshare") is None:
        return False
    done = subprocess.run(["unshare", "-Urpfn", "true"], capture_output=True, check=False)
    return done.returncode == 0


LANDLOCK = landlock_abi()
NAMESPACES = _user_namespaces()
SECCOMP = os.uname().machine in ("x86_64", "aarch64")


def _shared_bounds() -> bool:
    bounds = make_shared_bounds(None, 16)
    if bounds is not None:
        bounds.remove()
    return bounds is not None


SHARED_BOUNDS = _shared_bounds()
PIECES = [
    *(["landlock"] if LANDLOCK else []),
    *(["netns", "ipcns", "pidns", "mntns"] if NAMESPACES else []),
    *(["seccomp"] if SECCOMP else []),
    *(["cgroup"] if SHARED_BOUNDS else []),
]
EXPECTED_LEVEL = "+".join(PIECES) or "process-only"
needs_landlock = pytest.mark.skipif(not LANDLOCK, reason="this kernel has no Landlock")
needs_isolation = pytest.mark.skipif(
    not (LANDLOCK >= 4 or NAMESPACES), reason="no network isolation on this machine"
)
needs_namespaces = pytest.mark.skipif(not NAMESPACES, reason="no unprivileged user namespaces")


async def attempt(
    server: ScriptedServer, code: str, **settings: Any
) -> tuple[str, RunResult, list[Any]]:
    """Run `code` as the first cell of a run; what the model was shown, the result, the events."""
    server.respond_with(scripted({QUERY: [repl(PROBE + code), repl("FINAL('ok')")]}))
    run = make_run(server, sandbox="kernel", budget=Budget(cell_timeout_s=30), **settings)
    result, events = await run_to_end(run)
    assert result.status == "completed", result.error
    return observation_after(server, 0), result, events


async def test_the_reported_level_is_what_this_machine_provides(
    scripted_server: ScriptedServer,
) -> None:
    _, result, events = await attempt(scripted_server, "print(1)")

    assert result.sandbox == EXPECTED_LEVEL
    assert of_type(events, RunFinished)[0].sandbox == EXPECTED_LEVEL
    assert result.to_json()["sandbox"] == EXPECTED_LEVEL


async def test_the_level_is_kept_with_the_session(scripted_server: ScriptedServer) -> None:
    scripted_server.respond_with(scripted({QUERY: [repl("FINAL('ok')")]}))
    run = make_run(scripted_server, sandbox="kernel")
    store = Store(paths.database_path())
    recorder = store.record(run, documents=run.documents, secrets=[])
    try:
        await run.execute()
    finally:
        recorder.close()
    row = store.db.table("sessions").get(run.run_id)
    store.close()
    assert row["sandbox"] == EXPECTED_LEVEL


@needs_landlock
async def test_files_outside_the_scratch_folder_cannot_be_read_or_written(
    scripted_server: ScriptedServer, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOPSECRET")
    Store(paths.database_path()).close()  # the sessions database exists
    outside = tmp_path / "written.txt"
    code = (
        f"probe('secret', lambda: print(open({str(secret)!r}).read()))\n"
        f"probe('database', lambda: open({str(paths.database_path())!r}, 'rb').read(10))\n"
        f"probe('list-home', lambda: __import__('os').listdir({str(tmp_path)!r}))\n"
        f"probe('write', lambda: open({str(outside)!r}, 'w').write('x'))\n"
        f"probe('app-environ', lambda: open('/proc/{os.getpid()}/environ', 'rb').read())\n"
        "probe('own-file', lambda: open('mine.txt', 'w').write('fine'))\n"
        "probe('own-proc', lambda: open('/proc/self/status').read())\n"
    )
    shown, _, _ = await attempt(scripted_server, code)

    for name in ("secret", "database", "list-home", "write", "app-environ"):
        assert f"DENIED {name}" in shown, shown
    assert "TOPSECRET" not in shown
    assert not outside.exists()
    assert "ALLOWED own-file" in shown
    assert "ALLOWED own-proc" in shown


@needs_landlock
async def test_a_call_cannot_read_or_write_another_calls_scratch_folder(
    scripted_server: ScriptedServer,
) -> None:
    child = "read the parent's file"
    root = [
        repl(
            "import os\nopen('parent.txt', 'w').write('PARENT-ONLY')\n"
            f"print('child said', rlm_query({child!r}, context=os.path.abspath('parent.txt')))"
        ),
        repl("FINAL('ok')"),
    ]
    child_turns = [
        repl(
            PROBE + "probe('sibling-read', lambda: print(open(context).read()))\n"
            "probe('sibling-write', lambda: open(context, 'a').write('x'))"
        ),
        repl("FINAL('done')"),
    ]
    scripted_server.respond_with(scripted({QUERY: root, child: child_turns}))
    result, _ = await run_to_end(make_run(scripted_server, sandbox="kernel", budget=Budget(max_depth=2)))

    shown = observation_after(scripted_server, 0, child)
    assert result.status == "completed"
    assert "DENIED sibling-read" in shown, shown
    assert "DENIED sibling-write" in shown
    assert "PARENT-ONLY" not in shown


@needs_isolation
async def test_a_tcp_connection_to_a_local_listener_is_refused(
    scripted_server: ScriptedServer,
) -> None:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        code = (
            "import socket\n"
            f"probe('connect', lambda: socket.create_connection(('127.0.0.1', {port}), timeout=3))\n"
            "probe('bind', lambda: socket.create_server(('127.0.0.1', 0)))\n"
        )
        shown, _, _ = await attempt(scripted_server, code)
        listener.setblocking(False)
        with pytest.raises(BlockingIOError):
            listener.accept()

    assert "DENIED connect" in shown, shown
    assert "DENIED bind" in shown, shown


@pytest.mark.skipif(not SECCOMP, reason="no seccomp filter for this architecture")
async def test_a_unix_socket_by_path_cannot_be_reached(
    scripted_server: ScriptedServer, tmp_path: Path
) -> None:
    path = tmp_path / "bus.sock"
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind(str(path))
        listener.listen()
        code = (
            "import socket, asyncio\n"
            f"probe('unix', lambda: socket.socket(socket.AF_UNIX).connect({str(path)!r}))\n"
            "async def main():\n"
            "    return await asyncio.gather(asyncio.to_thread(llm_query, 'hi'), asyncio.sleep(0))\n"
            "print('asyncio', asyncio.run(main())[0])\n"
        )
        shown, _, _ = await attempt(scripted_server, code)
        listener.setblocking(False)
        with pytest.raises(BlockingIOError):
            listener.accept()

    assert "DENIED unix PermissionError" in shown, shown
    assert "asyncio sub-answer" in shown


@needs_namespaces
async def test_a_setsid_grandchild_does_not_outlive_the_run(
    scripted_server: ScriptedServer,
) -> None:
    marker = "61.4242"
    code = (
        "import os, subprocess\n"
        f"subprocess.Popen(['sleep', '{marker}'], start_new_session=True)\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        f"        os.execvp('sleep', ['sleep', '{marker}'])\n"
        "    os._exit(0)\n"
        "print('started')\n"
    )
    shown, _, _ = await attempt(scripted_server, code)
    assert "started" in shown

    def sleepers() -> list[int]:
        found = []
        for process in psutil.process_iter(["cmdline"]):
            if process.info["cmdline"] == ["sleep", marker]:
                found.append(process.pid)
        return found

    for _ in range(60):  # a SIGKILL takes effect asynchronously: allow it three seconds
        if not sleepers():
            break
        await asyncio.sleep(0.05)
    assert sleepers() == []


@needs_namespaces
async def test_forking_past_the_cap_fails_inside_the_cell(
    scripted_server: ScriptedServer,
) -> None:
    code = (
        "import os\n"
        "r, w = os.pipe()\n"
        "children, failure = [], None\n"
        "for _ in range(2000):\n"
        "    try:\n"
        "        pid = os.fork()\n"
        "    except OSError as error:\n"
        "        failure = type(error).__name__\n"
        "        break\n"
        "    if pid == 0:\n"
        "        os.close(w)\n"
        "        os.read(r, 1)\n"
        "        os._exit(0)\n"
        "    children.append(pid)\n"
        "os.close(w)\n"
        "for pid in children:\n"
        "    os.waitpid(pid, 0)\n"
        "print('forked', len(children), 'then', failure)\n"
    )
    shown, _, _ = await attempt(scripted_server, code, max_tasks=16)

    assert "then BlockingIOError" in shown, shown
    forked = int(shown.split("forked ")[1].split()[0])
    # The cap counts the launcher and the worker's own threads too; it holds for root as well
    # (the run's cgroup, else the PID namespace's pid range).
    assert forked < 16, shown


async def test_ordinary_code_still_works(scripted_server: ScriptedServer) -> None:
    code = (
        "import json, re, collections, tempfile, threading, pathlib, sqlite3, decimal\n"
        "import pypdf\n"
        "print('json', json.dumps(collections.Counter(re.findall('a', 'banana'))))\n"
        "open('notes.txt', 'w').write('kept')\n"
        "print('own', open('notes.txt').read())\n"
        "with tempfile.TemporaryDirectory() as folder:\n"
        "    path = pathlib.Path(folder, 'x.txt')\n"
        "    path.write_text('temp')\n"
        "    print('temp', path.read_text())\n"
        "replies = []\n"
        "threads = [threading.Thread(target=lambda: replies.append(llm_query('hi'))) "
        "for _ in range(4)]\n"
        "[t.start() for t in threads]\n"
        "[t.join() for t in threads]\n"
        "print('threads', replies)\n"
    )
    shown, _, _ = await attempt(scripted_server, code)

    assert 'json {"a": 3}' in shown, shown
    assert "own kept" in shown
    assert "temp temp" in shown
    assert "threads ['sub-answer', 'sub-answer', 'sub-answer', 'sub-answer']" in shown


@needs_landlock
async def test_an_allowed_folder_is_readable_and_its_sibling_is_not(
    scripted_server: ScriptedServer, tmp_path: Path
) -> None:
    opened, closed = tmp_path / "opened", tmp_path / "closed"
    for folder in (opened, closed):
        folder.mkdir()
        (folder / "data.txt").write_text(f"content of {folder.name}")
    code = (
        f"probe('opened', lambda: print(open({str(opened / 'data.txt')!r}).read()))\n"
        f"probe('closed', lambda: print(open({str(closed / 'data.txt')!r}).read()))\n"
        f"probe('write-opened', lambda: open({str(opened / 'new.txt')!r}, 'w'))\n"
    )
    shown, _, _ = await attempt(scripted_server, code, allow_read=(str(opened),))

    assert "content of opened" in shown
    assert "ALLOWED opened" in shown
    assert "DENIED closed" in shown
    assert "content of closed" not in shown
    assert "DENIED write-opened" in shown
    assert not (opened / "new.txt").exists()


async def test_requiring_isolation_refuses_or_runs_as_the_machine_allows(
    scripted_server: ScriptedServer,
) -> None:
    scripted_server.respond_with(scripted({QUERY: [repl("FINAL('ok')")]}))
    run = make_run(scripted_server, sandbox="kernel", require_isolation=True)
    if LANDLOCK and (LANDLOCK >= 4 or NAMESPACES):
        result, _ = await run_to_end(run)
        assert result.status == "completed"
    else:
        with pytest.raises(ConfigError, match="require_isolation"):
            await run_to_end(run)


@pytest.mark.parametrize(
    ("report", "missing"),
    [
        (
            SandboxReport("process-only", filesystem=False, network=False),
            "filesystem or the network",
        ),
        (SandboxReport("landlock-fs", filesystem=True, network=False), "network"),
        (SandboxReport("netns", filesystem=False, network=True), "filesystem"),
    ],
)
def test_requiring_isolation_refuses_a_sandbox_that_lacks_it_in_one_line(
    report: SandboxReport, missing: str
) -> None:
    """What a machine without Landlock or namespaces gets (this one has both, so the decision is
    tested on the report such a machine's launcher sends)."""
    with pytest.raises(ConfigError) as refused:
        refuse_unless_isolated(report)
    assert refused.value.setting == "require_isolation"
    assert str(refused.value) == (
        f"require_isolation is set but this system's sandbox ({report.level}) does not isolate "
        f"the {missing}; model code was not run"
    )
    refuse_unless_isolated(SandboxReport("landlock+netns", filesystem=True, network=True))


def test_the_command_line_opens_a_folder_and_reports_the_level(
    scripted_server: ScriptedServer, tmp_path: Path, isolated_home: Path
) -> None:
    opened = tmp_path / "opened"
    opened.mkdir()
    (opened / "data.txt").write_text("forty-two")
    document = tmp_path / "doc.txt"
    document.write_text("a document")
    code = f"FINAL(open({str(opened / 'data.txt')!r}).read())"
    scripted_server.respond_with(scripted({QUERY: [repl(code)]}))
    args = ["--model", TEST_MODEL, "--api-base", scripted_server.base_url, "--query", QUERY]
    args += ["--doc", str(document), "--mode", "rlm", "--allow-read", str(opened), "--json"]
    if LANDLOCK and (LANDLOCK >= 4 or NAMESPACES):
        args.append("--require-sandbox")
    result = run_cli("run", *args, home=isolated_home, timeout=60)

    assert result.returncode == 0, result.stderr
    reply = json.loads(result.stdout)
    assert (reply["status"], reply["answer"]) == ("completed", "forty-two")
    assert reply["sandbox"] == EXPECTED_LEVEL


def test_a_missing_allowed_folder_is_a_one_line_error(tmp_path: Path, isolated_home: Path) -> None:
    document = tmp_path / "doc.txt"
    document.write_text("a document")
    missing = tmp_path / "nowhere"
    args = ["--query", "q", "--doc", str(document), "--allow-read", str(missing)]
    result = run_cli("run", *args, home=isolated_home, timeout=60)

    assert result.returncode == 2, result.stderr
    (line,) = result.stderr.splitlines()
    assert "--allow-read" in line
    assert "does not exist" in line
