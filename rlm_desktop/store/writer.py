"""Turns a run's events into rows: the raw event log plus the sessions/calls/turns/cells tables.

`SessionWriter.write(events)` is called with a batch, inside one transaction. Every field is
scrubbed by the redactor first, so nothing unscrubbed reaches a table. Statements take the
event's fields by name (`:call_id`), plus `:sid` and the writer's own `:turn_now`/`:cell_now`.

Nothing an event carries is refused: the event log keeps every string exactly (`stored_json`),
and the columns, which must be UTF-8, show what UTF-8 cannot hold readably (`stored_text`,
`shown_file_name`). What a table keeps already is not logged again: a call's prompt is its row's
(kept once, `prompt_keeper.py`), a system prompt is in `texts`; `logged_event` puts them back.
Past the session's stored-text cap, texts keep their head and a note (`allowance.py`).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rlm_desktop.engine.context import ContextDocument
from rlm_desktop.engine.events import Event
from rlm_desktop.store.allowance import CAP_SETTING, TextAllowance
from rlm_desktop.store.liveness import Writer
from rlm_desktop.store.prompt_keeper import KeeperState, PromptKeeper
from rlm_desktop.store.prompts import LONG_PROMPT_CHARS, PROMPT_AT, PromptReader, with_prompt
from rlm_desktop.store.queries import UNFINISHED_REPLIES
from rlm_desktop.store.redact import Redactor
from rlm_desktop.store.texts import session_texts, text_sha256

Row = dict[str, Any]
_ENVELOPE = ("run_id", "ts", "type")
_FIELDS: dict[type[Event], tuple[str, ...]] = {}
_ENCODER = json.JSONEncoder(default=str, ensure_ascii=False)
_ESCAPING_ENCODER = json.JSONEncoder(default=str)
_SURROGATE = re.compile("[\ud800-\udfff]")
_MIN_INTEGER, _MAX_INTEGER = -(2**63), 2**63 - 1
_SCALARS = frozenset({int, float, bool, type(None)})
_JOINED_CHARS = 65_536
"""The most characters of an event's strings scrubbed as one (a longer event, field by field)."""

# Upserts where a row has children: REPLACE would delete it first, and its foreign keys'
# ON DELETE CASCADE its turns, cells and requests with it.
_STATEMENTS: dict[str, str] = {
    "CallStarted": """INSERT INTO calls (session_id, id, parent_id, seq, kind, depth, model,
        prompt, prompt_chars, prompt_note, prompt_sha256, prompt_document, prompt_start,
        prompt_end, status, started_at, parent_turn, parent_cell, worker_restarts)
        VALUES (:sid, :call_id, :parent_id, :seq, :kind, :depth, :model, :prompt, :prompt_chars,
        :prompt_note, :prompt_sha256, :prompt_document, :prompt_start, :prompt_end, 'running',
        :ts, :turn_now, :cell_now, 0)
        ON CONFLICT (session_id, id) DO UPDATE SET parent_id = excluded.parent_id,
        seq = excluded.seq, kind = excluded.kind, depth = excluded.depth, model = excluded.model,
        prompt = excluded.prompt, prompt_chars = excluded.prompt_chars,
        prompt_note = excluded.prompt_note, prompt_sha256 = excluded.prompt_sha256,
        prompt_document = excluded.prompt_document, prompt_start = excluded.prompt_start,
        prompt_end = excluded.prompt_end, status = 'running', started_at = excluded.started_at,
        parent_turn = excluded.parent_turn, parent_cell = excluded.parent_cell""",
    "LLMRequestSent": """INSERT INTO llm_requests (session_id, id, call_id, turn, model, messages,
        reserved_tokens, reserved_output_tokens, reserved_cost_usd, sent_at, attempts)
        VALUES (:sid, :request_id, :call_id, :turn_now, :model, :messages, :reserved_tokens,
        :reserved_output_tokens, :reserved_cost_usd, :ts, 1)
        ON CONFLICT (session_id, id) DO UPDATE SET sent_at = excluded.sent_at""",
    "LLMRetried": """UPDATE llm_requests SET attempts = :attempt, error = :reason
        WHERE session_id = :sid AND id = :request_id""",
    "LLMResponded": """INSERT INTO llm_requests (session_id, id, call_id, turn, model, content,
        input_tokens, output_tokens, cost_usd, latency_s, finish_reason, truncated, attempts,
        error, responded_at) VALUES (:sid, :request_id, :call_id, :turn_now, :model, :content,
        :input_tokens, :output_tokens, :cost_usd, :latency_s, :finish_reason, :truncated,
        :attempts, :error, :ts)
        ON CONFLICT (session_id, id) DO UPDATE SET model = excluded.model,
        content = excluded.content, input_tokens = excluded.input_tokens,
        output_tokens = excluded.output_tokens, cost_usd = excluded.cost_usd,
        latency_s = excluded.latency_s, finish_reason = excluded.finish_reason,
        truncated = excluded.truncated, attempts = excluded.attempts, error = excluded.error,
        responded_at = excluded.responded_at""",
    "TurnStarted": """INSERT INTO turns (session_id, call_id, idx, started_at)
        VALUES (:sid, :call_id, :index, :ts)
        ON CONFLICT (session_id, call_id, idx) DO UPDATE SET started_at = excluded.started_at""",
    "CellExecuted": """INSERT OR REPLACE INTO cells (session_id, call_id, turn, idx, code, stdout,
        stderr, error, duration_s, timed_out, variables_lost, ended_at) VALUES (:sid, :call_id,
        :turn, :index, :code, :stdout, :stderr, :error, :duration_s, :timed_out, :variables_lost,
        :ts)""",
    "CellExecuted+variables": """INSERT OR REPLACE INTO cells (session_id, call_id, turn, idx,
        code, stdout, stderr, error, duration_s, timed_out, variables_lost, ended_at, variables)
        VALUES (:sid, :call_id, :turn, :index, :code, :stdout, :stderr, :error, :duration_s,
        :timed_out, :variables_lost, :ts, :variables)""",
    "CallOpened": """UPDATE calls SET system_sha256 = :system_sha256, opening = :opening
        WHERE session_id = :sid AND id = :call_id""",
    "TurnExecuted": """INSERT INTO turns (session_id, call_id, idx, reply, code_blocks,
        observation, ended_at, duration_s) VALUES (:sid, :call_id, :index, :reply, :code_blocks,
        :observation, :ts, :duration_s)
        ON CONFLICT (session_id, call_id, idx) DO UPDATE SET reply = excluded.reply,
        code_blocks = excluded.code_blocks, observation = excluded.observation,
        ended_at = excluded.ended_at, duration_s = excluded.duration_s""",
    "WorkerRestarted": """UPDATE calls SET worker_restarts = worker_restarts + 1
        WHERE session_id = :sid AND id = :call_id""",
    "HistoryCompacted": """INSERT INTO compactions (session_id, call_id, turn, tokens_before,
        tokens_after, summary, ts) VALUES (:sid, :call_id, :turn, :tokens_before, :tokens_after,
        :summary, :ts)""",
    "AnswerSubmitted": """UPDATE calls SET answer = :answer, answer_source = :source
        WHERE session_id = :sid AND id = :call_id""",
    "AnswerSubmitted+sources": """UPDATE calls SET answer = :answer, answer_source = :source,
        answer_sources = :sources WHERE session_id = :sid AND id = :call_id""",
    "CallFinished": """UPDATE calls SET status = :status, response = :response,
        input_tokens = :input_tokens, output_tokens = :output_tokens, cost_usd = :cost_usd,
        error = :error, ended_at = :ts, wall_s = :ts - started_at
        WHERE session_id = :sid AND id = :call_id""",
}
_PROMPT_KEPT = """UPDATE calls SET prompt = :prompt, prompt_chars = :prompt_chars,
    prompt_note = :prompt_note, prompt_sha256 = :prompt_sha256, prompt_document = :prompt_document,
    prompt_start = :prompt_start, prompt_end = :prompt_end WHERE session_id = :sid AND id = :call_id"""
_DOCUMENT_SQL = """INSERT INTO documents (session_id, position, name, path, chars, tokens)
    VALUES (:sid, :position, :name, :path, :chars, :tokens)
    ON CONFLICT (session_id, position) DO UPDATE
    SET tokens = coalesce(documents.tokens, excluded.tokens)"""
_RUN_FINISHED = (
    "status", "answer", "cost_usd", "input_tokens", "output_tokens", "turns", "sub_calls",
    "max_depth_reached", "wall_s", "unpriced", "error",
)  # fmt: skip


def encodable(text: str) -> bool:
    """True when `text` is valid UTF-8 as it is (no lone surrogate), as SQLite needs."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def stored_json(value: Any) -> str:
    """`value` as JSON text that SQLite can hold, losslessly.

    Readable UTF-8 as a rule; where a string holds a lone surrogate (model code printed
    `"\\udcff"`, a file name that is not UTF-8), JSON's `\\u` escapes, which `json.loads` turns
    back into the very same string (and `os.fsencode` into a file name's very bytes).
    """
    return _logged_json(value)[0]


def _logged_json(value: Any) -> tuple[str, bool]:
    """`stored_json(value)`, and True when that is the readable text (no string needed escapes)."""
    text = _ENCODER.encode(value)
    if encodable(text):
        return text, True
    return _ESCAPING_ENCODER.encode(value), False


def stored_text(text: str) -> str:
    """`text` for a text column: each lone surrogate written as its Python escape, `\\udcff`.

    Columns must be UTF-8; the exact string stays in the event log (`stored_json`).
    """
    return text if encodable(text) else text.encode("utf-8", "backslashreplace").decode("utf-8")


def shown_file_name(name: str) -> str:
    """A file name for display: its bytes decoded as `os.fsdecode` would, undecodable ones
    replaced by U+FFFD (`caf\\xe9.txt` in Latin-1 reads `caf\ufffd.txt`).

    The event log keeps the name exactly (`stored_json`), so its bytes are never lost.
    """
    if encodable(name):
        return name
    try:
        return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    except UnicodeEncodeError:  # a surrogate that no undecodable byte stands for
        return _SURROGATE.sub("\ufffd", name)


def _file_name(name: object) -> object:
    return shown_file_name(name) if isinstance(name, str) else name


def _columns(payload: Row, readable: bool) -> Row:
    """The payload's top-level values made storable in columns: strings as UTF-8, and integers
    past SQLite's 64 bits (a provider reporting absurd usage) as reals. `readable` says the
    payload's JSON needed no escapes, so every string in it is UTF-8 already."""
    if readable and not any(
        type(value) is int and not _MIN_INTEGER <= value <= _MAX_INTEGER
        for value in payload.values()
    ):
        return dict(payload)
    return {name: _column(value) for name, value in payload.items()}


def _column(value: Any) -> Any:
    if isinstance(value, str):
        return stored_text(value)
    if isinstance(value, int) and not _MIN_INTEGER <= value <= _MAX_INTEGER:
        return float(value)
    return value


def _payload_fields(kind: type[Event]) -> tuple[str, ...]:
    """The fields an event type stores besides the envelope (the log has columns for those).

    Events are flat: their values are JSON-ready as they are, so no deep copy is needed.
    """
    names = _FIELDS.get(kind)
    if names is None:
        names = _FIELDS[kind] = tuple(
            f.name for f in dataclasses.fields(kind) if f.name not in _ENVELOPE
        )
    return names


@dataclass(frozen=True)
class WriterState:
    """What a `SessionWriter` knows between two batches, without its connection: enough for
    another process to go on writing the session where this one stopped (`resumed`)."""

    seq: int
    call_seq: int
    turns: dict[str, int]
    cells: dict[str, int]
    kinds: dict[str, str]
    unfinished: set[str]
    cap: int
    prompts: KeeperState
    documents: int
    """How many of the session's documents are stored (the prompts are looked for in them)."""


@dataclass(frozen=True)
class Opening:
    """What is written with a session's first events: its row and its documents."""

    session: Row
    texts: list[Row]
    documents: list[Row]


def prepare_opening(
    session_id: str, documents: Sequence[ContextDocument], redactor: Redactor, writer: Writer
) -> Opening:
    """Scrub and hash the documents now, so the first flush only has rows to insert (an
    import's way; a live run's documents are stored beside it, `documents_beside.py`)."""
    texts: dict[str, Row] = {}
    rows = []
    for position, document in enumerate(documents):
        text = stored_text(redactor.text(document.text))
        digest = text_sha256(text)
        texts[digest] = {"sha256": digest, "text": text, "chars": len(text)}
        rows.append(document_row(session_id, position, document, text, digest, file_size(document)))
    return Opening(session_row(session_id, writer), list(texts.values()), rows)


def session_row(session_id: str, writer: Writer) -> Row:
    """A new session's row, `running`, written by `writer`."""
    return {
        "id": session_id, "status": "running", "started_at": time.time(),
        "writer_pid": writer.pid, "writer_started": writer.started, "writer_host": writer.host,
    }  # fmt: skip


def file_size(document: ContextDocument) -> int | None:
    """The size of the file `document` was loaded from (None when it cannot be told)."""
    try:
        return os.stat(document.path).st_size if document.path else None
    except OSError:
        return None


def document_row(
    session_id: str,
    position: int,
    document: ContextDocument,
    text: str,
    digest: str,
    size: int | None,
) -> Row:
    """The `documents` row of `document`, whose text is stored as `text` named `digest`."""
    return {
        "session_id": session_id, "position": position, "name": _file_name(document.name),
        "path": _file_name(document.path), "size": _utf8_size(text) if size is None else size,
        "sha256": digest, "chars": len(text), "tokens": document.tokens,
        "type": document.type or None,
        "sections": (
            json.dumps([section.to_json() for section in document.sections])
            if document.sections else None
        ),
        "attached_to": document.attached_to,
    }  # fmt: skip


def _utf8_size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def logged_event(kind: str, data: str, prompts: PromptReader) -> Row:
    """An event's fields as its log row `data` holds them, with what the writer moved out put
    back: a `CallOpened`'s system prompt (from `texts`) and the prompt its opening held, a
    `CallStarted`'s prompt (from its call's row, `prompts.py`)."""
    fields: Row = json.loads(data)
    if kind == "CallOpened":
        digest = fields.pop("system_sha256", None)
        if digest is not None:
            fields["system_prompt"] = prompts.text(digest) or ""
        opening = fields.get("opening")
        if isinstance(opening, list) and any(PROMPT_AT in m for m in opening if isinstance(m, dict)):
            fields["opening"] = with_prompt(opening, prompts.of_call(fields["call_id"]) or "")
    elif kind == "CallStarted" and "prompt" not in fields:
        fields["prompt"] = prompts.of_call(fields["call_id"]) or ""
    return fields


def insert_row(conn: sqlite3.Connection, table: str, row: Row, verb: str = "INSERT") -> None:
    """Insert `row` (column names to values) into `table`, `verb` saying how."""
    names = ", ".join(row)
    marks = ", ".join(f":{name}" for name in row)
    conn.execute(f"{verb} INTO {table} ({names}) VALUES ({marks})", row)


class SessionWriter:
    """Writes one session's events. Keeps the little state needed to place sub-calls in cells."""

    def __init__(self, conn: sqlite3.Connection, session_id: str, redactor: Redactor) -> None:
        self._conn = conn
        self._sid = session_id
        self._redactor = redactor
        row = conn.execute(
            "SELECT coalesce(max(seq), -1) + 1 FROM events WHERE session_id = ?", [session_id]
        ).fetchone()
        self._seq: int = row[0]
        self._call_seq = 0
        self._turn: dict[str, int] = {}
        self._cells: dict[str, int] = {}
        self._kind: dict[str, str] = {}
        self._unfinished: set[str] = set()
        """The calls in a turn that has not finished yet."""
        self._session: Row = {}
        self._allowance = TextAllowance()
        self._prompts = PromptKeeper(conn, self._allowance, [])
        self._documents = 0

    def state(self) -> WriterState:
        """What this writer knows now (between batches: no transaction of its own open)."""
        return WriterState(
            self._seq, self._call_seq, dict(self._turn), dict(self._cells), dict(self._kind),
            set(self._unfinished), self._allowance.cap, self._prompts.saved(), self._documents,
        )  # fmt: skip

    @classmethod
    def resumed(
        cls, conn: sqlite3.Connection, session_id: str, redactor: Redactor, state: WriterState
    ) -> SessionWriter:
        """A writer that goes on from `state`, on `conn` (the session's documents are read
        back through it)."""
        writer = cls(conn, session_id, redactor)
        writer._seq, writer._call_seq = state.seq, state.call_seq
        writer._turn, writer._cells, writer._kind = state.turns, state.cells, state.kinds
        writer._unfinished = state.unfinished
        writer._allowance.cap = state.cap
        writer._prompts.restore(state.prompts)
        writer.documents_stored(session_texts(conn, session_id, state.documents))
        return writer

    def open(self, opening: Opening) -> None:
        """Insert the session row and its documents (caller holds a transaction)."""
        insert_row(self._conn, "sessions", opening.session)
        for text in opening.texts:
            insert_row(self._conn, "texts", text, "INSERT OR IGNORE")
        for document in opening.documents:
            insert_row(self._conn, "documents", document, "INSERT OR REPLACE")
        texts = {text["sha256"]: text["text"] for text in opening.texts}
        documents = [texts[document["sha256"]] for document in opening.documents]
        self._prompts = PromptKeeper(self._conn, self._allowance, documents)

    def begin(self, session: Row) -> None:
        """Insert the session row alone (caller holds a transaction); its documents follow as
        they are stored (`documents_stored`)."""
        insert_row(self._conn, "sessions", session)

    def documents_stored(self, texts: Sequence[str]) -> None:
        """The session's documents stored so far, in order, as the tables hold their texts: a
        long prompt that repeats a slice of one is kept as that slice."""
        self._documents = len(texts)
        self._prompts.documents_known(texts)

    def write(self, events: Sequence[Event]) -> None:
        """Append `events` to the log and apply them to the tables (caller holds a transaction)."""
        saved = (self._seq, self._call_seq, self._prompts.saved())
        try:
            self._write(events)
        except BaseException:
            self._seq, self._call_seq = saved[:2]
            self._prompts.restore(saved[2])
            self._session = {}
            raise

    def _write(self, events: Sequence[Event]) -> None:
        log_rows = []
        allowance = self._allowance
        for event in events:
            kind = type(event).__name__
            payload = self._scrubbed(event)
            prompt = payload.pop("prompt") if kind == "CallStarted" else None
            if kind == "CallOpened":
                payload = self._opened(payload)
            logged, readable = _logged_json(self._logged(payload, prompt))
            if not allowance.take(len(logged)):  # past the cap: long texts keep their head
                payload = allowance.cut_long(payload)
                logged, readable = _logged_json(self._logged(payload, prompt))
                allowance.count(len(logged))
            log_rows.append((self._sid, self._seq, event.ts, kind, logged))
            self._seq += 1
            row = _columns(payload, readable)
            if prompt is not None:
                row.update(self._prompts.started(row["call_id"], row["kind"], stored_text(prompt)))
            row["ts"] = event.ts
            self._apply(kind, row)
        self._conn.executemany(
            "INSERT INTO events (session_id, seq, ts, type, data) VALUES (?, ?, ?, ?, ?)", log_rows
        )
        self._session.update(stored_chars=allowance.stored, cut_chars=allowance.cut)
        if self._session:
            columns = ", ".join(f"{name} = ?" for name in self._session)
            self._conn.execute(
                f"UPDATE sessions SET {columns} WHERE id = ?", [*self._session.values(), self._sid]
            )
            self._session = {}

    @staticmethod
    def _logged(payload: Row, prompt: str | None) -> Row:
        """What the log keeps of an event: a prompt only where its call's row cannot hold it
        exactly (a short one with a lone surrogate; a long one is kept once, spelled out)."""
        if prompt is None or encodable(prompt) or len(prompt) > LONG_PROMPT_CHARS:
            return payload
        return {**payload, "prompt": prompt}

    def _opened(self, payload: Row) -> Row:
        """A `CallOpened` payload with its system prompt moved to `texts` (once per distinct
        prompt, named by `system_sha256` in the log as in `calls`), and its call's long prompt
        taken out of its opening (`prompts.without_prompt`)."""
        kept = dict(payload)
        kept["system_sha256"] = self._prompts.shared(stored_text(kept.pop("system_prompt")))
        kept["opening"] = self._prompts.opening(kept["call_id"], kept["opening"])
        return kept

    def _scrubbed(self, event: Event) -> Row:
        """The event's payload with every string scrubbed (numbers and None pass as they are).

        Its strings are asked once, joined: when the whole holds nothing to scrub, none of its
        parts does (a sub-call's events, as a rule); otherwise each is scrubbed on its own.
        """
        data = self._redactor.data
        payload: Row = {}
        strings = []
        for name in _payload_fields(type(event)):
            value = getattr(event, name)
            kind = type(value)
            if kind is str:
                strings.append(name)
            elif kind not in _SCALARS:
                value = data(value)
            payload[name] = value
        if strings and not self._leaves_alone([payload[name] for name in strings]):
            text = self._redactor.text
            for name in strings:
                payload[name] = text(payload[name])
        return payload

    def _leaves_alone(self, strings: list[str]) -> bool:
        """Whether the redactor would leave every one of `strings` as it is (asked of them
        joined, when short enough)."""
        return sum(map(len, strings)) <= _JOINED_CHARS and self._redactor.leaves_alone(
            "\n".join(strings)
        )

    def _apply(self, kind: str, d: Row) -> None:
        d["sid"] = self._sid
        call_id = d.get("call_id")
        if kind == "CallStarted":
            parent = d["parent_id"]
            d["turn_now"] = self._turn.get(parent) if parent is not None else None
            d["cell_now"] = self._cells.get(parent) if d["turn_now"] is not None else None
            d["seq"] = self._call_seq
            self._call_seq += 1
            self._kind[d["call_id"]] = d["kind"]
        elif kind in ("LLMRequestSent", "LLMResponded"):
            is_rlm = self._kind.get(call_id or "") == "rlm"
            d["turn_now"] = self._turn.get(call_id or "") if is_rlm else None
            if kind == "LLMRequestSent":
                self._prompt_kept(d["call_id"], self._prompts.sent(d["call_id"]))
        elif kind == "TurnStarted":
            self._turn[d["call_id"]] = d["index"]
            self._cells[d["call_id"]] = 0
            self._unfinished.add(d["call_id"])
        elif kind == "TurnExecuted":
            self._unfinished.discard(d["call_id"])
        elif kind == "CellExecuted":
            self._cells[d["call_id"]] = d["index"] + 1
            if d.get("variables"):  # a cell that left none (or an event from before m007): NULL
                kind, d["variables"] = "CellExecuted+variables", stored_json(d["variables"])
        elif kind == "CallOpened":
            d["opening"] = stored_json(d["opening"])
        elif kind == "AnswerSubmitted" and d.get("sources"):  # none given: NULL
            kind, d["sources"] = "AnswerSubmitted+sources", stored_json(d["sources"])
        elif kind == "RunStarted":
            self._run_started(d)
        elif kind == "CallFinished":
            self._prompt_kept(d["call_id"], self._prompts.ended(d["call_id"], d["status"]))
        elif kind == "ModeChosen":
            self._session.update(chosen_mode=d["mode"], mode_reason=d["reason"])
        elif kind == "BudgetUpdated":
            self._session.update(
                cost_usd=d["cost_usd"], tokens=d["tokens"], sub_calls=d["sub_calls"]
            )
        elif kind == "RunFinished":
            self._session.update({name: d.get(name) for name in _RUN_FINISHED}, ended_at=d["ts"])
            if d.get("sandbox"):  # events from before m004 carry none: the column stays NULL
                self._session["sandbox"] = d["sandbox"]
        statement = _STATEMENTS.get(kind)
        if statement is not None:
            self._conn.execute(statement, d)
        if kind == "CallFinished" and call_id in self._unfinished:
            self._unfinished.discard(call_id)
            self._conn.execute(UNFINISHED_REPLIES, d)  # it ended in a turn that never finished

    def _prompt_kept(self, call_id: str, columns: Row | None) -> None:
        """Write where a held-back prompt ended up (`PromptKeeper.sent` or `ended`)."""
        if columns is not None:
            self._conn.execute(_PROMPT_KEPT, {**columns, "sid": self._sid, "call_id": call_id})

    def _run_started(self, d: Row) -> None:
        settings = d.get("settings") or {}
        cap = settings.get(CAP_SETTING)
        if isinstance(cap, int) and cap > 0:
            self._allowance.cap = cap
        self._session.update(
            query=d["query"], mode=d["mode"], model=d["model"], sub_model=d["sub_model"],
            profile=d["profile"], settings=stored_json(settings),
            budget=stored_json(settings.get("budget")), started_at=d["ts"],
        )  # fmt: skip
        if settings.get("follows"):  # a follow-up question: its conversation's thread
            self._session.update(
                follows=settings["follows"], conversation_id=settings.get("conversation_id")
            )
        for position, meta in enumerate(d.get("documents") or []):
            row = {"name": None, "path": None, "chars": None, "tokens": None, **meta}
            row.update({key: _file_name(row[key]) for key in ("name", "path")})
            self._conn.execute(_DOCUMENT_SQL, {**row, "sid": self._sid, "position": position})
