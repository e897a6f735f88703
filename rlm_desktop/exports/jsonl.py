"""JSON Lines in the reference implementation's `RLMLogger` shape, so its tools read our runs.

One `metadata` line (the reference's `RLMMetadata` fields, then the run's own: its id, query,
status, `answer` and the answer's `sources` checked against the documents, as `sessions show
--json` gives them), then one `iteration` line per turn of the root call, timestamps written as the
reference writes them (local time, ISO 8601, no zone). As in the reference log, an iteration's
`prompt` is the whole message list its request sent (`store.messages` rebuilds it; a session saved
before the opening messages were recorded gives the turn's new user message alone), and a call out
of turns ends with the iteration that asked for its answer. Sub-calls made by a cell are listed in
its `rlm_calls` as the reference's `RLMChatCompletion.to_dict()` writes them; a recursive sub-call
carries its trajectory in `metadata.run_metadata` and `metadata.iterations`. A block's
`result.locals` are the model's variables after it (short values, as recorded); the block that
answered has its `result.final_answer`; the turn a run ended in keeps its reply, and its unfinished
code is a block whose `stderr` says why it did not finish. A call, or the turn a run ended in, that
failed without a reply has `Error: <why>` as its `response`, as the reference writes a failed
completion, so viewers that show only replies and `stderr` still show the failure.

The file is UTF-8 whatever the run held, and every string in it (keys too) is written as the
other exports write text (`exports.text`): a lone surrogate (a file name that is not UTF-8, in
the first user message or a variable; one model code made) spelled as its escape
(`caf\\udce9.txt`, as the tables show it), NUL, controls, bidi controls, line separators and
noncharacters as escapes of their code point, so a reader gets the marked text, never the raw
characters, and no line breaks where `str.splitlines` would break it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from rlm_desktop.engine.context import ContextDocument
from rlm_desktop.exports.text import exported_json
from rlm_desktop.store.detail import Row, SessionDetail

if TYPE_CHECKING:
    from rlm_desktop.review.health import HealthReport


def iso(ts: float | None) -> str | None:
    """An epoch timestamp as the reference writes it: `datetime.now().isoformat()`, local time."""
    return datetime.fromtimestamp(ts).isoformat() if ts is not None else None


def run_metadata(detail: SessionDetail, model: str) -> Row:
    """The reference's `RLMMetadata.to_dict()` for a call of this session using `model`."""
    session = detail.session
    settings = session["settings"]
    budget = settings.get("budget") or {}
    sub_model = session["sub_model"]
    return {
        "root_model": model,
        "max_depth": budget.get("max_depth"),
        "max_iterations": budget.get("max_turns"),
        "backend": "litellm",
        "backend_kwargs": {"model_name": model, "base_url": settings.get("api_base")},
        "environment_type": "subprocess",
        "environment_kwargs": {},
        "other_backends": [sub_model] if sub_model and sub_model != session["model"] else None,
    }


def _metadata(detail: SessionDetail, health: HealthReport | None) -> Row:
    session = detail.session
    sources = [source.to_json() for source in health.sources] if health is not None else None
    return {
        "type": "metadata",
        "timestamp": iso(session["started_at"]),
        **run_metadata(detail, session["model"]),
        "session_id": detail.session_id,
        "query": session["query"],
        "status": session["status"],
        "answer": session["answer"],
        "sources": sources,
        "error": session["error"],
        "cost_usd": session["cost_usd"],
        "input_tokens": session["input_tokens"],
        "output_tokens": session["output_tokens"],
        "documents": [{"name": document["name"]} for document in session["documents"]],
        "started_at": session["started_at"],
        "ended_at": session["ended_at"],
        "wall_s": session["wall_s"],
        "max_depth_reached": session["max_depth_reached"],
        "unpriced": session["unpriced"],
        "mode": session["mode"],
        "chosen_mode": session["chosen_mode"],
        "sub_model": session["sub_model"],
        "profile": session["profile"],
        "settings": settings_shared(session["settings"]),
        "calls": [_indexed(detail, call) for call in detail.calls],
    }


LOCAL_SETTINGS = ("allow_read", "follows", "conversation_id", "evaluation_id")
"""Settings that name things of this machine (its folders, its other sessions): never shared."""


def settings_shared(settings: Row) -> Row:
    """A run's settings as an export shares them: without the ones that name this machine's
    folders or sessions."""
    return {key: value for key, value in settings.items() if key not in LOCAL_SETTINGS}


def _indexed(detail: SessionDetail, call: Row) -> Row:
    """A call as the metadata line's `calls` lists it: its place in the tree, how and when it
    ended, its usage and its requests (what an import needs that the reference's keys lack)."""
    sources = call.get("answer_sources")
    return {
        "call_id": call["id"],
        "parent_id": call["parent_id"],
        "kind": call["kind"],
        "model": call["model"],
        "status": call["status"],
        "error": call["error"],
        "started_at": call["started_at"],
        "ended_at": call["ended_at"],
        "input_tokens": call["input_tokens"],
        "output_tokens": call["output_tokens"],
        "cost_usd": call["cost_usd"],
        "answer_source": call.get("answer_source"),
        "answer_sources": json.loads(sources) if sources else [],
        "requests": [_request(detail, call, request) for request in detail.requests_of(call["id"])],
    }


def _request(detail: SessionDetail, call: Row, request: Row) -> Row:
    """A request of `call`; its `content` null where it is its turn's reply or the call's
    response (not written twice)."""
    content = request["content"]
    turn = request["turn"]
    replies = [t["reply"] for t in detail.turns_of(call["id"]) if t["idx"] == turn]
    same = content in replies or (turn is None and content in (call["response"], call["answer"]))
    return {
        "turn": turn,
        "model": request["model"],
        "content": None if same else content,
        "sent_at": request["sent_at"],
        "responded_at": request["responded_at"],
        "latency_s": request["latency_s"],
        "input_tokens": request["input_tokens"],
        "output_tokens": request["output_tokens"],
        "cost_usd": request["cost_usd"],
        "finish_reason": request["finish_reason"],
        "truncated": bool(request["truncated"]),
        "attempts": request["attempts"],
        "error": request["error"],
        "messages": request["messages"],
    }


def _sub_call(detail: SessionDetail, call: Row) -> Row:
    requests = detail.requests_of(call["id"])
    usage = {
        "total_calls": max(len(requests), 1),
        "total_input_tokens": call["input_tokens"] or 0,
        "total_output_tokens": call["output_tokens"] or 0,
    }
    entry: Row = {
        "root_model": call["model"],
        "prompt": call["prompt"],
        "response": call["response"] or call["answer"] or _failure(detail, call),
        "usage_summary": {"model_usage_summaries": {call["model"]: usage}},
        "execution_time": call["wall_s"] or 0.0,
        "prompt_tokens": usage["total_input_tokens"],
        "completion_tokens": usage["total_output_tokens"],
        "call_id": call["id"],
        "parent_id": call["parent_id"],
        "kind": call["kind"],
        "depth": call["depth"],
        "status": call["status"],
        "cost_usd": call["cost_usd"],
    }
    if call["error"]:
        entry["error"] = call["error"]
    if call["kind"] == "rlm":
        entry["metadata"] = {
            "run_metadata": run_metadata(detail, call["model"]),
            "iterations": iterations(detail, call),
        }
    return entry


def iterations(detail: SessionDetail, call: Row) -> list[Row]:
    """The iteration entries of one call (a direct LLM call gives a single iteration)."""
    turns = detail.turns_of(call["id"])
    sent = detail.messages_sent(call)
    by_cell: dict[tuple[int | None, int | None], list[Row]] = {}
    for child in detail.children(call["id"]):
        by_cell.setdefault((child["parent_turn"], child["parent_cell"]), []).append(child)
    if not turns:
        answer = call["answer"] or call["response"]
        requests = detail.requests_of(call["id"])
        first = sent.requests.get(requests[0]["id"]) if requests else None
        return [
            _iteration(
                1,
                call["started_at"],
                first or _user(call["prompt"]),
                call["response"] or _failure(detail, call),
                [],
                answer,
                call["wall_s"],
                call["id"],
            )
        ]
    entries = []
    previous_observation: str | None = None
    for number, turn in enumerate(turns, start=1):
        blocks = []
        answered = (
            number == len(turns)
            and call["answer"] is not None
            and call.get("answer_source") != "partial"  # asked for after its last turn
            and turn["reply"] is not None
        )
        cells = detail.cells_of(call["id"], turn["idx"])
        for index, cell in enumerate(cells):
            stderr = (cell["stderr"] or "") + (cell["error"] or "")
            spawned = by_cell.pop((turn["idx"], cell["idx"]), [])
            final = call["answer"] if answered and index == len(cells) - 1 else None
            blocks.append(
                _block(cell["code"], cell["stdout"] or "", stderr, cell["duration_s"], final)
            )
            blocks[-1].update(
                error=cell["error"], timed_out=bool(cell["timed_out"]),
                variables_lost=bool(cell["variables_lost"]),
            )  # fmt: skip
            blocks[-1]["result"]["locals"] = json.loads(cell.get("variables") or "{}")
            blocks[-1]["result"]["rlm_calls"] = [_sub_call(detail, child) for child in spawned]
        for code in detail.unfinished_code(call["id"], turn):
            reason = f"not finished: the run ended ({detail.session['status']}) while this ran"
            blocks.append({**_block(code, "", reason, None, None), "unfinished": True})
        message = call["prompt"] if number == 1 else previous_observation or ""
        entry = _iteration(
            number,
            turn["started_at"],
            sent.of_turn(turn["idx"]) or _user(message),
            detail.reply_of(call["id"], turn) or _failure(detail, call, turn),
            blocks,
            call["answer"] if answered else None,
            _turn_seconds(call, turn),
            call["id"],
        )
        entry.update(
            started_at=turn["started_at"], observation=turn["observation"] or "",
            finished=turn["reply"] is not None,
        )  # fmt: skip
        stray = [child for (t, _), kids in by_cell.items() if t == turn["idx"] for child in kids]
        if stray:
            entry["rlm_calls"] = [_sub_call(detail, child) for child in stray]
        entries.append(entry)
        previous_observation = turn["observation"]
    if sent.answer_now is not None:
        entries.append(_answer_now(detail, call, sent.answer_now, len(entries) + 1))
    return entries


def _answer_now(detail: SessionDetail, call: Row, request_id: str, number: int) -> Row:
    """The iteration that asked a call out of turns for its answer, as the reference logs its
    default answer: no code, the reply, the answer the call gave."""
    request = next(r for r in detail.requests_of(call["id"]) if r["id"] == request_id)
    sent_at, responded_at = request["sent_at"], request["responded_at"]
    took = responded_at - sent_at if sent_at is not None and responded_at is not None else None
    entry = _iteration(
        number,
        sent_at,
        detail.messages_sent(call).requests[request_id],
        request["content"] or "",
        [],
        call["answer"],
        took,
        call["id"],
    )
    entry["answer_now"] = True
    return entry


def _user(text: str | None) -> list[Row]:
    return [{"role": "user", "content": text or ""}]


def _failure(detail: SessionDetail, call: Row, turn: Row | None = None) -> str:
    """For a call (or the turn it ended in) that got no reply: the error as the reference writes a
    failed completion's `response` (`Error: ...`), so viewers show why; "" when it did not fail.
    A call cancelled because its run ended gives the run's reason (time limit, stopped)."""
    if turn is not None and turn["reply"] is not None:
        return ""
    cancelled = call["status"] == "cancelled"
    why = (detail.session["error"] if cancelled else None) or call["error"]
    return f"Error: {why}" if why else ""


def _turn_seconds(call: Row, turn: Row) -> float | None:
    """A turn's duration; the turn a call ended in lasted until the call ended."""
    seconds = turn["duration_s"]
    if seconds is None and call["ended_at"] is not None and turn["started_at"] is not None:
        seconds = max(call["ended_at"] - turn["started_at"], 0.0)
    return float(seconds) if seconds is not None else None


def _block(
    code: str, stdout: str, stderr: str, seconds: float | None, final_answer: str | None
) -> Row:
    """A code block as the reference's `CodeBlock.to_dict()` writes it (`locals` empty: the
    caller fills in what was recorded)."""
    return {
        "code": code,
        "result": {
            "stdout": stdout,
            "stderr": stderr,
            "locals": {},
            "execution_time": seconds or 0.0,
            "rlm_calls": [],
            "final_answer": final_answer,
        },
    }


def _iteration(
    number: int,
    started: float | None,
    prompt: list[Row],
    response: str,
    blocks: list[Row],
    final_answer: str | None,
    seconds: float | None,
    call_id: str,
) -> Row:
    return {
        "type": "iteration",
        "iteration": number,
        "timestamp": iso(started),
        "prompt": prompt,
        "response": response,
        "code_blocks": blocks,
        "final_answer": final_answer,
        "iteration_time": seconds,
        "call_id": call_id,
    }


def render(
    detail: SessionDetail,
    include_content: bool = False,
    health: HealthReport | None = None,
    documents: Sequence[ContextDocument] = (),
) -> str:
    """The session as JSON Lines (it always contains the run's texts: that is its purpose); with
    `health`, the metadata line's `sources` are the answer's, checked against the documents.

    `documents` (the session's, with their texts: `--with-documents`) are written one line each
    after the metadata line: `{"type": "document", "index", "name", "text", "chars",
    "document_type", "tokens"}`, `index` their place in the metadata line's `documents`.
    Without them nothing of the documents leaves but their names."""
    lines: list[Any] = [_metadata(detail, health)]
    lines.extend(_document_lines(detail, documents))
    for root in detail.roots():
        lines.extend(iterations(detail, root))
    return "".join(exported_json(line) + "\n" for line in lines)


def _document_lines(detail: SessionDetail, documents: Sequence[ContextDocument]) -> list[Row]:
    """One line per listed document whose text was kept, matched to its place in the list."""
    texts = list(documents)
    lines = []
    for index, listed in enumerate(detail.session["documents"]):
        if not texts or texts[0].name != listed["name"]:
            continue
        document = texts.pop(0)
        lines.append({
            "type": "document", "index": index, "name": document.name, "text": document.text,
            "chars": len(document.text), "document_type": document.type or None,
            "tokens": document.tokens,
        })  # fmt: skip
    return lines
