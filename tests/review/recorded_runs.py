"""Real sessions for the replay and timeline tests: the engine runs a scripted model on the
scripted server, the store records it into the test's SQLite file, and the server is stopped
before anything is replayed (a replay needs no provider).

- `FANOUT`: the root asks four sub-LLMs at once with `llm_query_batched` (each reply takes a
  moment, so they overlap), then answers;
- `LOOP`: the root asks three sub-LLMs one after another in a `for` loop, then answers;
- `TURNS`: the root prints in three turns, then answers in a fourth.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rlm_desktop.engine.events import Event
from rlm_desktop.paths import database_path
from rlm_desktop.review.replay import with_streamed_replies
from rlm_desktop.store import Store
from tests.engine.scripting import make_run, repl, scripted
from tests.scripted_server import Reply, ScriptedServer

FINAL = repl('FINAL("all done")', "That is everything.")


@dataclass(frozen=True)
class Script:
    """A run's question, the root's turns and the sub-calls' reply."""

    query: str
    turns: Sequence[str]
    sub: Reply


FANOUT = Script(
    "Summarise the four parts at once.",
    [repl('answers = llm_query_batched([f"part {i}" for i in range(4)])\nprint(answers)'), FINAL],
    Reply(content="a summary", delay_s=0.3),
)
LOOP = Script(
    "Summarise the three parts in turn.",
    [repl('for i in range(3):\n    print(llm_query(f"part {i}"))'), FINAL],
    Reply(content="a summary", delay_s=0.05),
)
TURNS = Script(
    "Count in turns.",
    [repl('print("one")'), repl('print("two")'), repl('print("three")'), FINAL],
    Reply(content="unused"),
)


class HandClock:
    """A clock for a replay that moves only when the test says so."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        """Move the clock on by `seconds`."""
        self.now += seconds


@dataclass(frozen=True)
class Recorded:
    """A recorded session: its id and the events the run published live that a session keeps,
    in order (not the `ReplyStreamed` pieces, which are shown and never stored)."""

    session_id: str
    live: list[Event]

    @property
    def played(self) -> list[Event]:
        """What a replay of the session plays: the stored events, with each reply's streaming
        made again from its arrival record."""
        return with_streamed_replies(self.live)


async def record(script: Script) -> Recorded:
    """Run `script` with the real engine over a scripted server, recorded by a real store."""
    server = ScriptedServer().start()
    try:
        server.respond_with(scripted(root=script.turns, sub=script.sub))
        run = make_run(server, query=script.query)
        live: list[Event] = []
        run.bus.add_listener(live.append)
        store = Store(database_path())
        recorder = store.record(run)
        result = await run.execute()
        recorder.close()
        store.close()
    finally:
        server.stop()
    assert result.status == "completed", result.error
    assert any(not event.stored for event in live)  # replies streamed
    return Recorded(run.run_id, [event for event in live if event.stored])


def stored_events(session_id: str) -> list[Event]:
    """The session's events as the store replays them."""
    store = Store(database_path())
    try:
        return list(store.replay(session_id))
    finally:
        store.close()
