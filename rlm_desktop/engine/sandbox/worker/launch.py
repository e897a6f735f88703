"""The launcher: confined once, it forks a warm worker for each RLM call the parent asks for."""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
from typing import Any

from .cells import FULL_NOTE_VARIABLE
from .channel import Channel
from .errors import ERRORS, SubCallError
from .serve import serve

FROZEN_LAUNCHER_FLAG = "--repl-launcher"
"""How a frozen bundle starts itself as the launcher (packaging/bundle_entry.py calls `main`)."""


SANDBOX: dict[str, Any] = {}
"""What `confine.confine_launcher` applied (`level`, `filesystem`, ...), its `spec` and `module`."""


def _become_worker(request: dict[str, Any], data: socket.socket) -> Channel:
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    os.setsid()
    cwd = request["cwd"]
    os.makedirs(os.path.join(cwd, "tmp"), exist_ok=True)
    os.chdir(cwd)
    os.environ["HOME"] = cwd
    os.environ["TMPDIR"] = os.path.join(cwd, "tmp")
    _limit_files(request)
    if "module" in SANDBOX:
        # A layer of this call's own: write only its scratch folder, read only its own /proc.
        SANDBOX["module"].confine_worker(SANDBOX, SANDBOX["spec"], cwd)
    reader = data.makefile("rb", buffering=1 << 20)
    writer = data.makefile("wb", buffering=1 << 16)
    return Channel(reader, writer)


def _limit_files(request: dict[str, Any]) -> None:
    """No file this worker writes may be larger than the run's scratch allowance (the app
    checks the folder as a whole; a tmpfs holds it by itself); how much room there is goes in
    the note a full folder's error gets (cells.format_error)."""
    os.environ[FULL_NOTE_VARIABLE] = str(request.get("room", ""))
    limit = request.get("file_bytes")
    if not isinstance(limit, int) or limit < 0:
        return
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    except (ImportError, ValueError, OSError):
        pass  # no such limit here (Windows), or one lower already holds


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


def _confine_module() -> Any:
    """confine.py from the kernel sandbox's folder (`kernel/` beside this package), by path
    (`python -I -S`)."""
    import importlib.util

    package = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(os.path.dirname(package), "kernel", "confine.py")
    spec = importlib.util.spec_from_file_location("rlm_worker_confine", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv: list[str] | None = None) -> None:
    """`worker/__main__.py --launcher FD`: confine this process, report the level, serve spawn
    requests.

    `argv` defaults to the command line's arguments; a frozen bundle passes them itself.
    """
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2 or args[0] != "--launcher" or not args[1].isdigit():
        sys.exit("usage: worker.py --launcher FD (started by RLM Desktop, not by hand)")
    fd = int(args[1])
    vars(sys.modules["__main__"]).update(ERRORS, SubCallError=SubCallError)  # see errors.py
    spec = json.loads(os.environ.pop("RLM_SANDBOX", "null") or "null")
    report: dict[str, Any] = {"level": "none", "filesystem": False, "network": False}
    if spec is not None:
        module = _confine_module()
        report = module.confine_launcher(spec, fd)
        SANDBOX.update(report, spec=spec, module=module)
    control = socket.socket(fileno=fd)
    control.send(json.dumps({"sandbox": report}).encode())
    launcher(control)
