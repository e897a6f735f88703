"""Model code aimed at the disk through the session's record: what is stored stays bounded.

A real run over the scripted server whose root's code cell sends many large `llm_query`
prompts — slices of `context`, repeats, text found nowhere else — as a prompt injection can make
a model do. Each prompt is stored once (a slice of the documents by reference, a repeat by its
hash), a call the budget refused keeps a head of its prompt with its length, and a session's
stored text has a cap, with a note of what was cut. Everything that reads prompts back still
gets them whole.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rlm_desktop import paths
from rlm_desktop.engine import Budget, ContextDocument, Run, RunConfig
from rlm_desktop.engine.events import CallStarted, Event
from rlm_desktop.exports import export_bytes
from rlm_desktop.review.health import session_health
from rlm_desktop.store import Store
from rlm_desktop.store.detail import load_detail
from tests.scripted_rlm import is_sub_call, repl, scripted
from tests.scripted_server import ScriptedServer, last_user_text

SLICE = 1_000_000
LEDGER = ContextDocument(
    name="ledger.txt",
    text="".join(
        f"Entry {i:07d}: sector {i * 7 % 13} holds {i * 31 % 97} crates of item {i * 11 % 1009}.\n"
        for i in range(50_000)
    ),
)
"""About 2.8 MB of lines that all differ."""
JUNK = f"junk = ''.join(random.Random({{seed}}).choices('abcdefghij ', k={SLICE}))"
"""Model code making a million characters found in no document (different per seed)."""
ASK = "import random\ndef ask(prompt):\n    try:\n        llm_query(prompt)\n    except Exception:\n        pass"
"""Model code that goes on asking whatever the answer (a refusal raises)."""
ATTACK = "\n".join(
    [
        ASK,
        JUNK.format(seed=0),
        "for i in range(4):",
        f"    ask(context[i * 400_000 : i * 400_000 + {SLICE}])",  # slices of the documents
        "for i in range(4):",
        f"    ask(context[100:{SLICE + 100}])",  # one slice, again and again
        "for i in range(4):",
        "    ask(junk)",  # text of its own, again and again
        "FINAL('done')",
    ]
)
SENT = 12 * SLICE
DISTINCT_JUNK = SLICE
MARGIN = 600_000
"""The session's other rows, the heads kept for search, SQLite's pages."""


QUERY = "What does the ledger hold?"


async def _run(
    server: ScriptedServer,
    store: Store,
    code: str,
    seen: list[Event] | None = None,
    **settings: Any,
) -> str:
    """A run whose root runs `code` (a child RLM call answers at once); `seen` gets its events."""
    child = [repl("FINAL('seen')")]
    server.respond_with(scripted({QUERY: [repl(code)]}, sub="noted", root=child))
    config = RunConfig(
        query=QUERY, model="openai/test-model", api_base=server.base_url, mode="rlm", **settings
    )
    run = Run(config, [LEDGER], folders=paths.engine_folders())
    if seen is not None:
        run.bus.add_listener(lambda event: seen.append(event) if event.stored else None)
    recorder = store.record(run, documents=[LEDGER])
    await run.execute()
    recorder.close()
    return run.run_id


def _database_bytes() -> int:
    """The size of the database on disk, its write-ahead log included."""
    return sum(path.stat().st_size for path in paths.database_path().parent.glob("sessions.db*"))


def _prompts_in(value: Any) -> list[str]:
    """Every string under a `prompt` key in a JSON value, in order."""
    if isinstance(value, dict):
        own = [value["prompt"]] if isinstance(value.get("prompt"), str) else []
        return own + [p for key, v in value.items() if key != "prompt" for p in _prompts_in(v)]
    if isinstance(value, list):
        return [p for item in value for p in _prompts_in(item)]
    return []


def _sub_calls(store: Store, session_id: str) -> list[dict[str, Any]]:
    return [call for call in load_detail(store, session_id).calls if call["parent_id"]]


async def test_large_prompts_are_stored_once_and_read_back_whole(
    scripted_server: ScriptedServer, isolated_home: Path
) -> None:
    store = Store(paths.database_path())
    session_id = await _run(scripted_server, store, ATTACK)
    sent = [last_user_text(r) for r in scripted_server.chat_requests() if is_sub_call(r)]
    assert len(sent) == 12
    assert sum(map(len, sent)) == SENT

    calls = _sub_calls(store, session_id)
    assert [call["prompt"] for call in calls] == sent  # the detail every export reads
    replayed = [
        event.prompt
        for event in store.replay(session_id)
        if isinstance(event, CallStarted) and event.parent_id
    ]
    assert replayed == sent  # what the window's tree and call details show
    assert [store.call(session_id, call["id"])["prompt"] for call in calls] == sent
    jsonl = export_bytes(store, session_id, "jsonl").decode("utf-8")
    prompts = [p for line in jsonl.splitlines() for p in _prompts_in(json.loads(line))]
    assert [prompt for prompt in prompts if len(prompt) == SLICE] == sent
    assert store.search(" ".join(sent[8].split()[:5]))  # a prompt of its own is found by its words
    report = session_health(store, session_id)
    assert report.coverage.documents[0].covered == 3 * 400_000 + SLICE  # what slices 0..3 cover
    store.close()

    stored = _database_bytes()
    expected = len(LEDGER.text) + DISTINCT_JUNK + MARGIN
    assert stored < expected, f"{stored:,} bytes on disk for {SENT:,} characters sent"


async def test_a_child_rlm_call_s_long_prompt_is_stored_once_and_replayed_as_sent(
    scripted_server: ScriptedServer, isolated_home: Path
) -> None:
    """A child's first user message holds its prompt (`Question: ...`): stored once, it still
    reads back in the opening as the child's model received it."""
    store = Store(paths.database_path())
    seen: list[Event] = []
    code = f"print(rlm_query(context[7:{SLICE + 7}]))\nFINAL('done')"
    session_id = await _run(scripted_server, store, code, seen)
    assert list(store.replay(session_id)) == seen  # every event as it was published
    (child,) = _sub_calls(store, session_id)
    assert child["prompt"] == LEDGER.text[7 : SLICE + 7]
    sent = next(
        r["messages"]
        for r in scripted_server.chat_requests()
        if any(LEDGER.text[7 : SLICE + 7] in str(m.get("content")) for m in r["messages"])
    )
    detail = load_detail(store, session_id)
    rebuilt = next(iter(detail.messages_sent(detail.calls[1]).requests.values()))
    assert [m["content"] for m in rebuilt] == [m["content"] for m in sent]
    stored = store.db.execute("SELECT sum(length(opening)), sum(length(prompt)) FROM calls")
    assert max(stored.fetchone()) < 20_000  # neither the opening nor the row holds it again
    store.close()
    assert _database_bytes() < len(LEDGER.text) + MARGIN


async def test_calls_the_budget_refused_keep_a_head_of_their_prompt(
    scripted_server: ScriptedServer, isolated_home: Path
) -> None:
    store = Store(paths.database_path())
    session_id = await _run(
        scripted_server, store, ATTACK, budget=Budget(max_tokens=20_000)
    )
    assert not [r for r in scripted_server.chat_requests() if is_sub_call(r)]  # nothing sent

    calls = _sub_calls(store, session_id)
    assert len(calls) == 12  # every call is counted, with its row
    assert {call["status"] for call in calls} == {"budget_exceeded"}
    for call in calls:
        kept = store.call(session_id, call["id"])
        assert len(kept["prompt"]) < 5_000
        assert kept["prompt_chars"] == SLICE
        assert f"{SLICE:,} characters" in kept["prompt"]  # the note says how long it was
        assert "refused" in kept["prompt"]
    store.close()

    assert _database_bytes() < len(LEDGER.text) + MARGIN


async def test_a_session_s_stored_text_has_a_cap_with_a_note_of_what_was_cut(
    scripted_server: ScriptedServer, isolated_home: Path
) -> None:
    cap = 1_500_000
    code = "\n".join(
        [
            ASK,
            "for seed in range(6):",
            f"    {JUNK.format(seed='seed')}",
            "    ask(junk)",
            "    print(junk[:400_000])",
            "FINAL('done')",
        ]
    )
    store = Store(paths.database_path())
    session_id = await _run(scripted_server, store, code, stored_text_cap_chars=cap)
    shown = store.session(session_id)["session"]
    assert shown["cut_chars"] > 6 * SLICE - cap  # the session says how much was not kept
    assert shown["stored_chars"] <= cap + MARGIN
    last = store.call(session_id, _sub_calls(store, session_id)[-1]["id"])
    assert "stored-text cap" in last["prompt"]  # the stored text says it was cut
    assert len(last["prompt"]) < 5_000
    found = [f for f in session_health(store, session_id).findings if f.kind == "not_stored"]
    assert found  # as the CLI and the window report it
    assert f"{cap:,}" in found[0].message
    store.close()

    assert _database_bytes() < len(LEDGER.text) + cap + 2 * MARGIN
