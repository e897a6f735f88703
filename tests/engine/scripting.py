"""Helpers for engine tests: runs against the scripted server, replies keyed on what was asked.

A request with a system prompt is a turn of an RLM call; its first user message starts with
`Question: <prompt>`, which tells the root (the run's query) from a child (its `rlm_query` prompt).
A request without one is an `llm_query` sub-call.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

import psutil

from rlm_desktop import paths
from rlm_desktop.engine import Budget, ContextDocument, Credentials, Run, RunConfig, RunResult
from rlm_desktop.engine.events import Event
from tests.scripted_server import Reply, ScriptedServer, last_user_text, system_text

TEST_MODEL = "openai/test-model"
QUERY = "What is the total of the ledger?"
DOCUMENT = ContextDocument(
    name="ledger.txt", text="".join(f"line {i}: amount {i % 7}\n" for i in range(300))
)
EXHAUSTED = "the test script has no reply for this turn"

E = TypeVar("E", bound=Event)
Turns = Sequence[str | Reply]
SubReply = Callable[[str], "str | Reply"]


def repl(code: str, prose: str = "Let me run some code.") -> str:
    """A model reply with one ```repl block."""
    return f"{prose}\n```repl\n{code}\n```"


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
        api_base=server.base_url,
        mode=settings.pop("mode", "rlm"),
        budget=budget or Budget(),
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


def is_sub_call(request: dict[str, Any]) -> bool:
    """True for an `llm_query` request (no system prompt)."""
    return system_text(request) == ""


def question_of(request: dict[str, Any]) -> str:
    """The prompt of the RLM call that sent this request."""
    for message in request.get("messages", []):
        if message.get("role") == "user":
            first_line = str(message.get("content") or "").split("\n", 1)[0]
            return first_line.removeprefix("Question: ")
    return ""


def turn_of(request: dict[str, Any]) -> int:
    """The 0-based turn of an RLM call's request (the replies it already had)."""
    return sum(1 for message in request.get("messages", []) if message.get("role") == "assistant")


def scripted(
    calls: Mapping[str, Turns], sub: SubReply | str | Reply = "sub-answer"
) -> Callable[[dict[str, Any]], str | Reply]:
    """A responder: RLM calls get their turns by question, sub-calls get `sub` (or `sub(prompt)`)."""

    def respond(request: dict[str, Any]) -> str | Reply:
        if is_sub_call(request):
            return sub if isinstance(sub, str | Reply) else sub(last_user_text(request))
        turns = calls.get(question_of(request), ())
        turn = turn_of(request)
        return turns[turn] if turn < len(turns) else Reply(status=400, content=EXHAUSTED)

    return respond


def rlm_requests(server: ScriptedServer, question: str = QUERY) -> list[dict[str, Any]]:
    """The requests of the RLM call asked `question`, in turn order."""
    found = [r for r in server.chat_requests() if not is_sub_call(r) and question_of(r) == question]
    return sorted(found, key=turn_of)


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
