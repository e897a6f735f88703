"""Our own JSONL export (`exports/jsonl.py`): the reference's shape, plus keys of our own that
carry what the reference's do not — the call tree with each call's parent, status, times, usage
and requests (the metadata line's `calls`), the run's settings and ending, each turn's start and
observation, each cell's error — and, exported `--with-documents`, one `document` line per
document with its text.
"""

from __future__ import annotations

from rlm_desktop.importing.reading import Entry
from rlm_desktop.importing.reference import iterations
from rlm_desktop.importing.trajectory import Call, Document, Request, Trajectory
from rlm_desktop.importing.walk import CALL_STATUSES, Walker

RUN_STATUSES = frozenset(
    {"completed", "max_turns", "budget_exceeded", "timeout", "cancelled", "error", "interrupted"}
)
LOCAL_SETTINGS = (
    "follows",
    "conversation_id",
    "evaluation_id",
    "allow_read",
    "stored_text_cap_chars",
)
"""Settings that name things on the machine the run was made on: never taken from a file."""
MAX_DOCUMENTS = 10_000
LEFT_OUT = "how each reply streamed in: replay shows each reply as it arrived whole"
NO_TEXTS = "the documents' text: exported without --with-documents (no coverage or preview)"


def read(entries: list[Entry]) -> Trajectory:
    """The session an export of ours holds."""
    meta = entries[0]
    documents = [entry for entry in entries[1:] if entry.get("type") == "document"]
    turns = iterations([meta, *(entry for entry in entries[1:] if entry.get("type") != "document")])
    index = _index(meta)
    roots = [entry for entry in index.values() if entry.get("parent_id") is None]
    root_id = turns[0].call_id() if turns else (roots[0].call_id() if roots else None)
    if any(entry.call_id() not in (None, root_id) for entry in turns):
        raise next(e for e in turns if e.call_id() != root_id).fail(
            "belongs to a second root call: a session has one"
        )
    walker = Walker("", reference=False)
    model = meta.text("root_model")
    kind = index[root_id].text("kind", "rlm") if root_id in index else "rlm"
    root = walker.new_call(Entry(meta.line, {"call_id": root_id}), kind, 1, model,
                           meta.text("query"), None)  # fmt: skip
    if kind == "llm":
        root.response = turns[0].text("response") if turns else ""
        root.answer = turns[0].optional_text("final_answer") if turns else None
        root.answer_source = "direct"
    else:
        walker.turns(root, turns)
    for call_id, entry in index.items():
        _overlay(walker, call_id, entry)
    status = meta.text("status", "completed")
    if status not in RUN_STATUSES:
        raise meta.fail(f"its 'status' is {status!r}, not a run's status")
    answer = meta.text("answer")
    trajectory = Trajectory(
        source="rlm-desktop", query=meta.text("query"), model=model, root=root,
        sub_model=meta.text("sub_model"), mode=meta.text("mode", "rlm"),
        chosen_mode=meta.optional_text("chosen_mode"), profile=meta.text("profile"),
        settings=_settings(meta), documents=_documents(meta, documents), status=status,
        answer=answer, error=meta.optional_text("error"), started_at=meta.number("started_at"),
        ended_at=meta.number("ended_at"),
        wall_s=meta.number("wall_s"),
        max_depth_reached=meta.count("max_depth_reached") if meta.has("max_depth_reached") else None,
        unpriced=meta.flag("unpriced") if meta.has("unpriced") else None, sandbox=meta.text("sandbox"),
        answer_kind="answer" if status == "completed" else ("last_reply" if answer else "none"),
        left_out=[LEFT_OUT],
    )  # fmt: skip
    if trajectory.documents and any(d.text is None for d in trajectory.documents):
        trajectory.left_out.append(NO_TEXTS)
    return trajectory


def _index(meta: Entry) -> dict[str | None, Entry]:
    index: dict[str | None, Entry] = {}
    for entry in meta.items("calls"):
        call_id = entry.call_id()
        if call_id is None:
            raise entry.fail("lists a call without its 'call_id'")
        if call_id in index:
            raise entry.fail(f"lists call {call_id!r} twice: call ids must be unique")
        index[call_id] = entry
    return index


def _overlay(walker: Walker, call_id: str | None, entry: Entry) -> None:
    """What the metadata line's `calls` says of a call, onto the call the iterations hold."""
    if call_id not in walker.calls:
        raise entry.fail(f"lists call {call_id!r}, which no iteration holds: it points nowhere")
    call, parent = walker.calls[call_id]
    named = entry.call_id("parent_id")
    if named != parent:
        raise entry.fail(
            f"gives call {call_id!r} the parent {named!r}, but it sits under {parent!r}"
        )
    status = entry.text("status", call.status)
    if status not in CALL_STATUSES:
        raise entry.fail(f"its 'status' is {status!r}, not a call status")
    call.status, call.error = status, entry.optional_text("error")
    call.model = entry.text("model", call.model)
    call.started_at = entry.number("started_at")
    ended = entry.number("ended_at")
    if call.started_at is not None and ended is not None:
        call.wall_s = max(ended - call.started_at, 0.0)
    call.input_tokens, call.output_tokens = (
        entry.count("input_tokens"),
        entry.count("output_tokens"),
    )
    call.cost_usd = entry.number("cost_usd")
    if entry.has("answer_source") and call.answer is not None:
        call.answer_source = entry.text("answer_source")
    call.sources = [_source(source) for source in entry.items("answer_sources")]
    if entry.has("requests"):
        call.requests = [_request(call, request) for request in entry.items("requests")]


def _source(entry: Entry) -> dict[str, object]:
    """A source the model gave, as `GivenSource.to_json` writes it: a quote or a span."""
    if entry.has("quote"):
        return {"quote": entry.text("quote")}
    return {key: entry.count(key) for key in ("document_index", "start", "end")}


def _request(call: Call, entry: Entry) -> Request:
    turn = entry.get("turn")
    if turn is not None and (not isinstance(turn, int) or isinstance(turn, bool) or turn < 0):
        raise entry.fail("a request's 'turn' is not a turn's number")
    sent, responded = entry.number("sent_at"), entry.number("responded_at")
    return Request(
        turn=turn, model=entry.text("model", call.model), content=entry.optional_text("content"),
        input_tokens=entry.count("input_tokens"), output_tokens=entry.count("output_tokens"),
        cost_usd=entry.number("cost_usd"), sent_at=sent,
        latency_s=max(responded - sent, 0.0) if sent is not None and responded is not None
        else entry.number("latency_s"),
        finish_reason=entry.optional_text("finish_reason"), truncated=entry.flag("truncated"),
        attempts=max(entry.count("attempts"), 1), error=entry.optional_text("error"),
        messages=entry.count("messages"),
    )  # fmt: skip


def _settings(meta: Entry) -> dict[str, object]:
    settings = meta.child("settings")
    kept = dict(settings.data) if settings is not None else {}
    for key in LOCAL_SETTINGS:
        kept.pop(key, None)
    return kept


def _documents(meta: Entry, lines: list[Entry]) -> list[Document]:
    documents = [Document(name=entry.text("name")) for entry in meta.items("documents")]
    if len(lines) > MAX_DOCUMENTS:
        raise lines[MAX_DOCUMENTS].fail(f"is past the {MAX_DOCUMENTS:,} documents a run can hold")
    for entry in lines:
        index = entry.count("index")
        if index >= len(documents) or documents[index].text is not None:
            raise entry.fail(f"is document {index}, which the metadata line does not list once")
        text = entry.text("text")
        documents[index] = Document(
            name=entry.text("name", documents[index].name), text=text, chars=len(text),
            type=entry.optional_text("document_type"), tokens=entry.count("tokens") or None,
        )  # fmt: skip
    return documents
