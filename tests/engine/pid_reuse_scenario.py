"""The scenario of test_sandbox_escapes.py::test_the_app_never_kills_a_process_that_took_the_workers_pid.

Run as PID 1 of a private PID namespace (`unshare --pid --fork --mount-proc`), so that the pids it
recycles are its own and no process of the machine can be hit. It plays the app (a real run of
RLM Desktop against the scripted server) and the user (who starts a program, here `sleep`, in a
session of its own, as a shell or a desktop does). Model code frees the pid the app holds for its
worker, waits until the user's program has it, then makes the app kill it.

Prints one line of JSON: what happened to the user's program.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from rlm_desktop.engine import Budget
from tests.engine.scripting import QUERY, make_run, repl, run_to_end, scripted
from tests.scripted_rlm import asked
from tests.scripted_server import ScriptedServer

ATTACK = r'''
import json, os, struct, time
held = int(os.readlink('/proc/self'))   # the worker's pid as the app sees it (the app holds it)
if os.fork() == 0:
    os.setsid()                          # out of the worker's process group: `held` can be reused
    while os.path.exists(f'/proc/{held}'):
        time.sleep(0.005)
    said = json.dumps({'type': 'call', 'id': 1000, 'op': 'llm_query',
                       'args': {'prompt': f'free-pid {held}'}}).encode()
    os.write(3, struct.pack('>I', len(said)) + said)   # tell the test, through the app
    deadline = time.monotonic() + 100
    while not os.path.exists(f'/proc/{held}') and time.monotonic() < deadline:
        time.sleep(0.005)                # until some process of the user is given that pid
    os.write(3, struct.pack('>I', 2) + b'{]')   # a malformed frame: the app "stops the worker"
    time.sleep(10)
    os._exit(0)
os._exit(0)                              # the worker ends; its child keeps the app's socket open
'''


def _freed_pid(server: ScriptedServer) -> int | None:
    """The pid model code said it freed (a sub-call it sent through the app), once it has."""
    for request in server.chat_requests():
        prompt = asked(request).prompt
        if prompt.startswith("free-pid "):
            return int(prompt.removeprefix("free-pid "))
    return None


def main() -> None:
    home = Path(sys.argv[1])
    os.environ["RLM_DESKTOP_HOME"] = str(home)
    Path("/proc/sys/kernel/pid_max").write_text("2000")  # this namespace's own (Linux 6.14+)
    Path("/proc/sys/kernel/ns_last_pid").write_text("1000")  # past the reserved low pids, as on any host
    server = ScriptedServer().start()
    server.respond_with(scripted({QUERY: [repl(ATTACK), repl("FINAL('ok')")]}))
    run = make_run(server, sandbox="kernel", budget=Budget(cell_timeout_s=60))
    outcome: dict[str, object] = {}

    def user() -> None:
        deadline = time.monotonic() + 60
        while not (freed := _freed_pid(server)):
            if time.monotonic() > deadline:
                outcome["user"] = "the worker never freed its pid"
                return
            time.sleep(0.005)
        time.sleep(0.05)
        target = freed
        for _ in range(4000):
            program = subprocess.Popen(["sleep", "300"], start_new_session=True)
            if program.pid == target:
                break
            program.kill()
            program.wait()
        else:
            outcome["user"] = f"pid {target} never came round (4000 programs started)"
            return
        outcome["victim_pid"] = target
        try:
            # the app stops "the worker" within a second of the frame: 8 s tells it apart
            outcome["victim_returncode"] = program.wait(timeout=8)
        except subprocess.TimeoutExpired:
            outcome["victim_returncode"] = None
            program.kill()
            program.wait()

    thread = threading.Thread(target=user, daemon=True)
    thread.start()
    result, _ = asyncio.run(run_to_end(run))
    thread.join(timeout=70)
    outcome["run_status"] = result.status
    server.stop()
    print(json.dumps(outcome))


if __name__ == "__main__":
    main()
