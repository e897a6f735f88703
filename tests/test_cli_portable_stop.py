"""Ctrl-C stops a command on every platform: where the event loop takes no POSIX signal handler
(Windows: `loop.add_signal_handler` raises NotImplementedError), the portable path stops it.

Windows' selector event loop is asyncio's `BaseSelectorEventLoop` with nothing added, so the loop
below is the one a Windows user's `eval` and `batch` would get; `RLM_DESKTOP_PORTABLE=1` makes
`rlm-desktop run` take the portable path here, the same code Windows runs.
"""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
from asyncio.selector_events import BaseSelectorEventLoop
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from rlm_desktop.commands.trials import until_signalled
from rlm_desktop.portability import PORTABLE_ENV
from tests.cli import interrupt_once, run_cli, start_cli
from tests.engine.scripting import QUERY, TEST_MODEL
from tests.scripted_server import Reply, ScriptedServer


class Trials:
    """The least an `eval` or `batch` runner does (commands.trials.Stoppable): run until its
    `cancel`, here after `signum` reached this process."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        self.cancelled = False
        self._stopped = asyncio.Event()

    @property
    def skipped(self) -> Sequence[object]:
        return []

    def add_listener(self, listener: Callable[[Any], None]) -> None:
        del listener

    async def run(self) -> None:
        asyncio.get_running_loop().call_later(0.1, signal.raise_signal, self.signum)
        await asyncio.wait_for(self._stopped.wait(), timeout=10)

    def cancel(self) -> None:
        self.cancelled = True
        self._stopped.set()


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_stops_trials_on_an_event_loop_that_takes_no_signal_handler(
    signum: signal.Signals,
) -> None:
    before = signal.getsignal(signum)
    trials = Trials(signum)

    with asyncio.Runner(loop_factory=BaseSelectorEventLoop) as runner:
        runner.run(until_signalled(trials))

    assert trials.cancelled
    assert signal.getsignal(signum) is before  # the process's own handler is back


def test_ctrl_c_stops_a_run_through_the_portable_path(
    scripted_server: ScriptedServer, tmp_path: Path, isolated_home: Path
) -> None:
    scripted_server.enqueue(Reply(content="too late", delay_s=30))
    document = tmp_path / "notes.txt"
    document.write_text("The meeting moved to Thursday.\n", encoding="utf-8")
    env = {PORTABLE_ENV: "1"}
    args = ["--model", TEST_MODEL, "--api-base", scripted_server.base_url, "--query", QUERY]
    args += ["--doc", str(document)]
    process = start_cli(
        "run",
        *args,
        "--mode",
        "direct",
        "--json",
        home=isolated_home,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    out, err = interrupt_once(process, scripted_server.chat_requests, "a request to the model")

    assert process.returncode == 130, err
    result = json.loads(out)
    assert result["status"] == "cancelled"
    assert "Traceback" not in err
    shown = run_cli("sessions", "show", result["session_id"], "--json", home=isolated_home, env=env)
    assert json.loads(shown.stdout)["session"]["status"] == "cancelled"
