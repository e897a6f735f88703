"""Our code on the way to a run, in a Python that shows it only what Windows' Python has: the
POSIX-only names of `os`, `signal`, `socket`... gone, `resource`, `fcntl`, `pwd`... not there
(tests/windows_python/sitecustomize.py). Every module imports, and a real run in the wasm sandbox
answers with the portable paths forced, as on Windows."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.conftest import TEST_MODEL
from tests.engine.scripting import observation_after
from tests.scripted_rlm import repl, scripted
from tests.scripted_server import ScriptedServer
from tests.windows_names import run_windows_cli, run_windows_python

ON_THE_WAY_TO_A_RUN = (
    "rlm_desktop.cli",
    "rlm_desktop.commands.run",
    "rlm_desktop.engine.run",
    "rlm_desktop.engine.conversation",
    "rlm_desktop.engine.sandbox.choice",
    "rlm_desktop.engine.sandbox.process",
    "rlm_desktop.engine.sandbox.scratch_quota",
    "rlm_desktop.engine.sandbox.untrusted_files",
    "rlm_desktop.engine.sandbox.wasm.launcher",
    "rlm_desktop.engine.sandbox.wasm.host",
    "rlm_desktop.cluster.node_side",
    "rlm_desktop.ui.app",
)
QUESTION = "How many zebrafish?"
FOLLOW_UP = "And twice that, as text?"
EVERY_MODULE_OF = ("rlm_desktop.documents", "rlm_desktop.store")
"""Packages whose every module is on the way to a run (the loaders and the reader; the store)."""


def test_the_windows_python_lacks_what_windows_lacks(isolated_home: Path) -> None:
    """The harness itself: our modules see no POSIX-only name and cannot import `resource`; the
    event loop refuses signal handlers, as Windows' does."""
    done = run_windows_python(
        """
        import asyncio, pytest, sitecustomize
        from rlm_desktop import portability
        os, signal = portability.os, sitecustomize._import("signal", {"__name__": "rlm_desktop.x"})
        print(hasattr(os, "O_NOFOLLOW"), hasattr(os, "fchmod"), hasattr(os, "getpid"))
        print(hasattr(signal, "SIGKILL"), hasattr(signal, "SIGTERM"), os.supports_dir_fd)
        with pytest.raises(ModuleNotFoundError, match="resource"):
            sitecustomize._import("resource", {"__name__": "rlm_desktop.x"})
        import resource  # code not ours keeps the real modules
        loop = asyncio.new_event_loop()
        with pytest.raises(NotImplementedError):
            loop.add_signal_handler(signal.SIGTERM, print)
        loop.close()
        """,
        home=isolated_home,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "False", "True", "False", "True", "frozenset()"]


def test_every_module_on_the_way_to_a_run_imports_on_windows(isolated_home: Path) -> None:
    done = run_windows_python(
        f"""
        import importlib, importlib.util, pkgutil, traceback
        names = list({ON_THE_WAY_TO_A_RUN!r})
        for package in {EVERY_MODULE_OF!r}:
            path = importlib.util.find_spec(package).submodule_search_locations
            names += [package] + [package + "." + m.name for m in pkgutil.iter_modules(path)]
        for name in names:
            try:
                importlib.import_module(name)
            except Exception as error:
                print(name, "->", "".join(traceback.format_exception_only(error)).strip())
        """,
        home=isolated_home,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""


NOTE = "From: ana@example.org\nSubject: tanks\n\nZebrafish: 7 in tank A.\n"
PLANT_LINKS = """
import os
deep = '/'.join(['d'] * 60)
os.makedirs(deep)
for n in range(1, 7):
    os.symlink('../' * n, f'up-{n}')
    os.symlink('../' * (60 + n), f'{deep}/up-{n}')
print('links planted')
"""


def _run(
    server: ScriptedServer, query: str, home: Path, *flags: str
) -> subprocess.CompletedProcess[str]:
    return run_windows_cli(
        "run", "--query", query, "--model", TEST_MODEL, "--api-base", server.base_url,
        "--mode", "rlm", "--sandbox", "wasm", "--json", *flags, home=home, timeout=300,
    )  # fmt: skip


def test_a_run_and_its_follow_up_in_the_wasm_sandbox_answer_on_windows(
    scripted_server: ScriptedServer, isolated_home: Path, tmp_path: Path
) -> None:
    """The run keeps its REPL's state (a new file, never through a link), the follow-up reads it
    back (a regular file checked to be the one opened), and both remove their scratch folders,
    where model code planted links leading out of it, without following one."""
    document = tmp_path / "notes.eml"  # read by the documents' reader, a process of its own
    document.write_text(NOTE)
    count = "import re\ncounts = re.findall(r'\\d+', context)\nprint(counts)\n" + PLANT_LINKS
    scripted_server.respond_with(
        scripted(
            {QUESTION: [repl(count), repl("FINAL('7')")], FOLLOW_UP: [repl("FINAL(counts[0] * 2)")]}
        )
    )

    ran = _run(scripted_server, QUESTION, isolated_home, "--doc", str(document))
    assert ran.returncode == 0, ran.stderr
    first = json.loads(ran.stdout)
    assert (first["status"], first["answer"]) == ("completed", "7")
    assert first["sandbox"].startswith("wasm")
    shown = observation_after(scripted_server, 0, QUESTION)
    assert "['7']" in shown
    assert "links planted" in shown

    followed = _run(scripted_server, FOLLOW_UP, isolated_home, "--continue", first["session_id"])
    assert followed.returncode == 0, followed.stderr
    for done in (ran, followed):
        assert "Traceback" not in done.stderr, done.stderr
        assert "Exception in callback" not in done.stderr, done.stderr
    second = json.loads(followed.stdout)
    assert (second["status"], second["answer"]) == ("completed", "77")
    for session in (first, second):
        assert not (isolated_home / "scratch" / session["session_id"]).exists()
    assert document.read_text() == NOTE
    assert (isolated_home / "sessions.db").exists()


def test_a_big_runs_events_are_written_by_the_stores_process_on_windows(
    isolated_home: Path,
) -> None:
    """The store's writing process, started with "spawn" as on Windows, runs our code with only
    Windows' names too (it inherits the harness) and writes a big run whole."""
    done = run_windows_python(
        """
        from rlm_desktop import paths
        from rlm_desktop.store import Store
        from tests.store.test_writing_process import _document, _fan_out, _live, _record
        document = _document()
        events = _fan_out("run-windows", document.text)
        store = Store(paths.database_path())
        recorder, bus = _record(store, "run-windows", document)
        _live(recorder, bus, events)
        recorder.close()
        print(recorder.warnings, store.writing.process.cpu_seconds > 0)
        print(len(list(store.replay("run-windows"))) == sum(e.stored for e in events))
        print(store.session("run-windows")["session"]["status"])
        store.close()
        """,
        home=isolated_home,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["[]", "True", "True", "completed"], done.stdout + done.stderr
