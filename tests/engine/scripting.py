"""Helpers for engine tests: runs against the scripted server, replies keyed on what was asked.

What a request is (an RLM call's turn, named by its prompt, or an `llm_query` sub-call) is read by
`tests.scripted_rlm`, the one scripted model of the suite; this module adds the engine tests' run,
document and process helpers, and re-exports the script helpers they use.
"""

from __future__ import annotations

import asyncio
import os
import re
import socket
import time
from collections.abc import Iterable, Sequence
from typing import Any, TypeVar

import psutil

from rlm_desktop import paths
from rlm_desktop.engine import Budget, ContextDocument, Credentials, Run, RunConfig, RunResult
from rlm_desktop.engine.events import Event
from tests.scripted_rlm import asked, turn_of
from tests.scripted_rlm import is_sub_call as is_sub_call
from tests.scripted_rlm import repl as repl
from tests.scripted_rlm import rlm_requests as _rlm_requests
from tests.scripted_rlm import scripted as scripted
from tests.scripted_server import ScriptedServer, last_user_text

TEST_MODEL = "openai/test-model"
SANDBOX_UNDER_TEST = os.environ.get("RLM_TEST_SANDBOX", "auto")
"""The sandbox a run of these tests uses unless the test names one: `make test` runs the
engine's suite once as a user's machine would (`auto`) and once more under `wasm`."""
QUERY = "What is the total of the ledger?"
DOCUMENT = ContextDocument(
    name="ledger.txt", text="".join(f"line {i}: amount {i % 7}\n" for i in range(300))
)

E = TypeVar("E", bound=Event)

HOST_PID = "int(__import__('os').readlink('/proc/self'))"
"""Model code's expression for its worker's pid as the tests see it: inside the sandbox's PID
namespace `os.getpid()` is the namespace's number, while `/proc/self` (the host's /proc) names it
as this process sees it."""


ANNOUNCE_PID = f"llm_query('pid ' + str({HOST_PID}))"
"""Model code that tells the test its worker's pid, by a sub-call the scripted server sees (the
test cannot look into a worker's folder: it is a file system of the sandbox's own)."""


def announced_pids(server: ScriptedServer) -> list[int]:
    """The pids the workers announced (`ANNOUNCE_PID`) so far, in arrival order."""
    prompts = (asked(request).prompt for request in server.chat_requests())
    return [int(prompt[4:]) for prompt in prompts if re.fullmatch(r"pid \d+", prompt)]


WHOLE_REPLIES = "whole-replies"


def whole_replies_profile() -> str:
    """The name of a user profile like `default` that reads every root reply to its end
    (`code_stop = "whole-reply"`): for scripts whose one reply holds several code blocks."""
    folders = paths.profile_folders()
    folders.user.mkdir(parents=True, exist_ok=True)
    prompt = folders.user / f"{WHOLE_REPLIES}.txt"
    prompt.write_text((folders.bundled / "default.txt").read_text())
    (folders.user / "profiles.toml").write_text(
        f'[{WHOLE_REPLIES}]\nprompt = "{prompt.name}"\ncode_stop = "whole-reply"\n'
    )
    return WHOLE_REPLIES


def make_run(
    server: ScriptedServer,
    *,
    query: str = QUERY,
    documents: Sequence[ContextDocument] = (DOCUMENT,),
    budget: Budget | None = None,
    credentials: Credentials | None = None,
    **settings: Any,
) -> Run:
    """A run in RLM mode against the scripted server."""
    config = RunConfig(
        query=query,
        model=TEST_MODEL,
        api_base=settings.pop("api_base", server.base_url),
        mode=settings.pop("mode", "rlm"),
        budget=budget or Budget(),
        sandbox=settings.pop("sandbox", SANDBOX_UNDER_TEST),
        **settings,
    )
    return Run(config, documents, folders=paths.engine_folders(), credentials=credentials)


async def run_to_end(run: Run) -> tuple[RunResult, list[Event]]:
    """Execute `run`, returning its result and every event it published."""
    events: list[Event] = []
    run.bus.add_listener(events.append)
    return await run.execute(), events


def of_type(events: Sequence[Event], kind: type[E]) -> list[E]:
    """The events of one type, in order."""
    return [event for event in events if isinstance(event, kind)]


def rlm_requests(server: ScriptedServer, question: str = QUERY) -> list[dict[str, Any]]:
    """The requests of the RLM call asked `question` (the run's query by default), in turn order."""
    return _rlm_requests(server, question)


def observation_after(server: ScriptedServer, turn: int, question: str = QUERY) -> str:
    """What the RLM call asked `question` was shown after its turn `turn`."""
    requests = [r for r in rlm_requests(server, question) if turn_of(r) == turn + 1]
    assert requests, f"no request for turn {turn + 1} of {question!r}"
    return last_user_text(requests[0])


def live_descendants() -> set[int]:
    """Pids of this process's live descendants (zombies are dead and do not count)."""
    alive = set()
    for child in psutil.Process().children(recursive=True):
        try:
            if child.status() != psutil.STATUS_ZOMBIE:
                alive.add(child.pid)
        except psutil.NoSuchProcess:
            continue
    return alive


def gone(pid: int) -> bool:
    """True once the process has exited (a zombie waiting to be reaped has exited)."""
    try:
        return bool(psutil.Process(pid).status() == psutil.STATUS_ZOMBIE)
    except psutil.NoSuchProcess:
        return True


async def still_alive(pids: Iterable[int], grace_s: float = 0.5) -> set[int]:
    """The pids still running after `grace_s` (a SIGKILL takes effect asynchronously)."""
    deadline = time.monotonic() + grace_s
    alive = {pid for pid in pids if not gone(pid)}
    while alive and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
        alive = {pid for pid in alive if not gone(pid)}
    return alive


async def new_descendants(before: set[int], grace_s: float = 0.5) -> set[int]:
    """Descendants started since `before` was taken that are still running after `grace_s`."""
    return await still_alive(live_descendants() - before, grace_s)


UNKNOWN_HOST_URL = "http://nonexistent.invalid/v1"
"""A base URL whose host never resolves (`.invalid` is reserved for that, RFC 2606)."""


def closed_port_url() -> str:
    """A base URL on 127.0.0.1 where nothing listens: the connection is refused."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"
