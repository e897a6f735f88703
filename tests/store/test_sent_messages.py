"""Every chat request's messages rebuilt from the store equal what the provider received, and the
exports carry them: the OTLP `gen_ai.input.messages` and `gen_ai.system_instructions`, the JSONL
`prompt` and `result.locals` read by the reference's own types."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from rlm.core.types import RLMChatCompletion

from rlm_desktop.engine.compaction import SUMMARY_REQUEST
from rlm_desktop.engine.events import CallOpened
from rlm_desktop.engine.rlm_call import answer_now
from rlm_desktop.exports import export
from rlm_desktop.store import Store
from rlm_desktop.store.detail import SessionDetail, load_detail
from tests.engine.scripting import DOCUMENT, QUERY, make_run
from tests.exports.test_otlp import attrs, parsed_json, spans_of
from tests.scripted_rlm import question_of, repl, scripted
from tests.scripted_server import ScriptedServer
from tests.store.real_sessions import CHILD_Q, GRANDCHILD_Q
from tests.store.sent_sessions import SHAPES, Sent, sent_sessions

__all__ = ["sent_sessions"]

Sessions = tuple[Store, dict[str, Sent]]
Messages = list[dict[str, str]]
EXPORT_SHAPES = ("fanout", "depth2", "failed", "timeout", "cancelled")


def received(request: dict[str, Any]) -> Messages:
    """The messages of a chat request as the server received them."""
    return [{"role": m["role"], "content": m["content"]} for m in request["messages"]]


def rebuilt(detail: SessionDetail) -> list[Messages]:
    """Every request's rebuilt messages, calls in start order, requests in sent order."""
    found = []
    for call in detail.calls:
        sent = detail.messages_sent(call)
        found += [sent.requests[r["id"]] for r in detail.requests_of(call["id"])]
    return found


def canonical(lists: list[Messages]) -> list[str]:
    return sorted(json.dumps(messages, sort_keys=True) for messages in lists)


def jsonl(store: Store, session_id: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in export(store, session_id, "jsonl").splitlines()]


def sub_calls(iterations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [c for it in iterations for b in it["code_blocks"] for c in b["result"]["rlm_calls"]]


def from_parts(text: str) -> Messages:
    """GenAI-convention messages (`role`, `parts`) back to role and content."""
    return [
        {"role": m["role"], "content": "".join(p["content"] for p in m["parts"])}
        for m in json.loads(text)
    ]


@pytest.mark.parametrize("shape", list(SHAPES))
def test_every_request_is_rebuilt_as_the_server_received_it(
    sent_sessions: Sessions, shape: str
) -> None:
    store, sessions = sent_sessions
    sent = sessions[shape]
    found = rebuilt(load_detail(store, sent.session_id))
    assert sent.requests
    assert len(found) == len(sent.requests)
    assert canonical(found) == canonical([received(r) for r in sent.requests])


def test_a_compacted_conversation_is_rebuilt_request_by_request(sent_sessions: Sessions) -> None:
    store, sessions = sent_sessions
    sent = sessions["compacted"]
    detail = load_detail(store, sent.session_id)
    assert len(detail.compactions) >= 2
    found = rebuilt(detail)
    for number, (ours, theirs) in enumerate(zip(found, sent.requests, strict=True)):
        assert ours == received(theirs), number
    summaries = [m for m in found if m[-1]["content"].endswith(f"\n\n{SUMMARY_REQUEST}")]
    assert len(summaries) == len(detail.compactions)


def answer_now_request(
    sent_sessions: Sessions, shape: str
) -> tuple[SessionDetail, dict[str, Any], Messages]:
    """The session of `shape`, its root call, and the rebuilt request that asked the root, out of
    turns, for its answer (the root's last)."""
    store, sessions = sent_sessions
    detail = load_detail(store, sessions[shape].session_id)
    (root,) = detail.roots()
    sent = detail.messages_sent(root)
    assert sent.answer_now == detail.requests_of(root["id"])[-1]["id"]
    return detail, root, sent.requests[sent.answer_now]


def test_a_call_out_of_turns_is_rebuilt_with_the_request_for_its_answer(
    sent_sessions: Sessions,
) -> None:
    detail, root, last = answer_now_request(sent_sessions, "out_of_turns")
    (_first, second) = detail.turns_of(root["id"])
    observation = f"{second['observation']}\n\n{answer_now(2)}"
    assert last[-1] == {"role": "user", "content": observation}
    roles = ["system", "user", "assistant", "user", "assistant", "user"]
    assert [m["role"] for m in last] == roles


def test_a_run_without_a_system_role_is_rebuilt_with_its_prompt_in_the_first_turn(
    sent_sessions: Sessions,
) -> None:
    _detail, root, last = answer_now_request(sent_sessions, "no_system_role")
    assert [m["role"] for m in last] == ["user", "assistant", "user", "assistant", "user"]
    assert last[0]["content"].startswith(f"<instructions>\n{root['system_prompt']}\n")


def test_the_system_prompt_is_kept_once_and_replayed_whole(sent_sessions: Sessions) -> None:
    store, sessions = sent_sessions
    sent = sessions["depth2"]
    firsts = [r["messages"][0] for r in sent.requests]
    systems = {m["content"] for m in firsts if m["role"] == "system"}
    replayed = [e for e in store.replay(sent.session_id) if isinstance(e, CallOpened)]
    assert len(replayed) == 3  # the root, its child and its grandchild
    assert {e.system_prompt for e in replayed} == systems
    stored = store.db.execute(
        "SELECT count(*) FROM texts WHERE sha256 IN (SELECT system_sha256 FROM calls"
        " WHERE session_id = ?)",
        [sent.session_id],
    ).fetchone()[0]
    assert stored == len(systems)
    for system in systems:
        logged = store.db.execute(
            "SELECT count(*) FROM events WHERE session_id = ? AND instr(data, ?) > 0",
            [sent.session_id, system],
        ).fetchone()[0]
        assert logged == 0


@pytest.mark.parametrize("shape", list(SHAPES))
def test_otlp_chat_spans_carry_the_whole_message_list_and_the_system_prompt(
    sent_sessions: Sessions, shape: str
) -> None:
    store, sessions = sent_sessions
    sent = sessions[shape]
    spans = spans_of(parsed_json(export(store, sent.session_id, "otlp", include_content=True)))
    chats = [attrs(s) for s in spans if attrs(s)["gen_ai.operation.name"] == "chat"]
    inputs = [from_parts(a["gen_ai.input.messages"]) for a in chats]
    assert canonical(inputs) == canonical([received(r) for r in sent.requests])
    for values, messages in zip(chats, inputs, strict=True):
        if messages[0]["role"] == "system":
            (part,) = json.loads(values["gen_ai.system_instructions"])
            assert part == {"type": "text", "content": messages[0]["content"]}
        else:
            assert "gen_ai.system_instructions" not in values
    plain = spans_of(parsed_json(export(store, sent.session_id, "otlp")))
    content_keys = ("gen_ai.input.messages", "gen_ai.system_instructions")
    assert not any(key in attrs(s) for s in plain for key in content_keys)


@pytest.mark.parametrize("shape", EXPORT_SHAPES)
def test_jsonl_prompts_are_the_message_lists_each_turn_sent(
    sent_sessions: Sessions, shape: str
) -> None:
    store, sessions = sent_sessions
    sent = sessions[shape]
    _meta, *iterations = jsonl(store, sent.session_id)
    root_requests = [received(r) for r in sent.requests if question_of(r) == QUERY]
    assert [it["prompt"] for it in iterations] == root_requests
    for call in sub_calls(iterations):
        loaded = RLMChatCompletion.from_dict(call)
        assert loaded.root_model == call["root_model"]


def test_child_trajectories_keep_their_own_message_lists(sent_sessions: Sessions) -> None:
    store, sessions = sent_sessions
    sent = sessions["depth2"]
    _meta, *iterations = jsonl(store, sent.session_id)
    (child,) = sub_calls(iterations)
    child_turns = RLMChatCompletion.from_dict(child).metadata["iterations"]
    child_requests = [received(r) for r in sent.requests if question_of(r) == CHILD_Q]
    assert [it["prompt"] for it in child_turns] == child_requests
    (grandchild,) = sub_calls(child_turns)
    deeper = RLMChatCompletion.from_dict(grandchild).metadata["iterations"]
    asked = [received(r) for r in sent.requests if question_of(r) == GRANDCHILD_Q]
    assert [it["prompt"] for it in deeper] == asked


def test_jsonl_ends_a_call_out_of_turns_with_the_request_for_its_answer(
    sent_sessions: Sessions,
) -> None:
    store, sessions = sent_sessions
    sent = sessions["out_of_turns"]
    _meta, *iterations = jsonl(store, sent.session_id)
    assert len(iterations) == 3
    last = iterations[-1]
    assert last["prompt"] == received(sent.requests[-1])
    assert (last["code_blocks"], last["response"]) == ([], "FINAL(forty-two)")
    assert last["final_answer"] == "forty-two"
    assert all(b["result"]["final_answer"] is None for b in iterations[1]["code_blocks"])


def test_locals_show_the_models_variables_and_never_the_documents(
    sent_sessions: Sessions,
) -> None:
    store, sessions = sent_sessions
    _meta, *iterations = jsonl(store, sessions["out_of_turns"].session_id)
    first = iterations[0]["code_blocks"][0]["result"]["locals"]
    second = iterations[1]["code_blocks"][0]["result"]["locals"]
    assert first["x"] == 41
    assert first["name"] == "abc"
    assert first["helper"] == "<function 'helper'>"
    assert first["Box"] == "<type 'Box'>"
    assert first["parts"] == "['sub-answer', 'sub-answer']"
    assert first["big"].startswith("[0, 1, 2,")
    assert first["chunk"].startswith("line 0: amount 0")
    assert second["y"] == 42
    for absent in ("context", "context_0", "context_meta", "doc", "re", "join", "_hidden"):
        assert absent not in first, absent
    shown = [
        v for it in iterations for b in it["code_blocks"] for v in b["result"]["locals"].values()
    ]
    texts = [value for value in shown if isinstance(value, str)]
    assert all(len(value) <= 200 for value in texts)
    assert not any(DOCUMENT.text[:201] in value for value in texts)


def test_an_old_database_exports_without_the_new_records(
    sent_sessions: Sessions, tmp_path: Path
) -> None:
    """Calls and cells saved before m007 have its columns NULL and no `CallOpened` in their log:
    the exports fall back to the last user message and empty locals."""
    store, sessions = sent_sessions
    copy = tmp_path / "old.db"
    with sqlite3.connect(copy) as target:
        store.db.conn.backup(target)
        target.execute("UPDATE calls SET system_sha256 = NULL, opening = NULL")
        target.execute("UPDATE cells SET variables = NULL")
        target.execute("DELETE FROM events WHERE type = 'CallOpened'")
    old = Store(copy)
    try:
        for shape in EXPORT_SHAPES:
            session_id = sessions[shape].session_id
            _meta, *iterations = jsonl(old, session_id)
            for it in iterations:
                (message,) = it["prompt"]
                assert message["role"] == "user"
                assert all(b["result"]["locals"] == {} for b in it["code_blocks"])
            spans = spans_of(parsed_json(export(old, session_id, "otlp", include_content=True)))
            for span in spans:
                values = attrs(span)
                assert "gen_ai.system_instructions" not in values
                if "gen_ai.input.messages" in values:
                    assert len(json.loads(values["gen_ai.input.messages"])) == 1
            assert list(old.replay(session_id))
    finally:
        old.close()


async def test_a_shared_system_prompt_outlives_the_session_deleted_first(
    scripted_server: ScriptedServer, tmp_path: Path
) -> None:
    store = Store(tmp_path / "sessions.db")
    scripted_server.respond_with(scripted(root=[repl("FINAL('done')")]))
    ids = []
    for _ in range(2):
        run = make_run(scripted_server)
        recorder = store.record(run, documents=[DOCUMENT])
        await run.execute()
        recorder.close()
        ids.append(run.run_id)
    systems = "SELECT count(DISTINCT system_sha256) FROM calls"
    assert store.db.execute(systems).fetchone()[0] == 1
    store.delete(ids[0])
    (root,) = load_detail(store, ids[1]).roots()
    assert root["system_prompt"] == scripted_server.chat_requests()[-1]["messages"][0]["content"]
    store.delete(ids[1])
    assert store.db.execute("SELECT count(*) FROM texts").fetchone()[0] == 0
    store.close()
