"""A whole saved session in memory (calls with their texts, turns, cells, requests) for exports."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rlm_desktop.engine.parsing import extract_code_blocks
from rlm_desktop.store import queries
from rlm_desktop.store.messages import SentMessages, request_messages
from rlm_desktop.store.prompts import PromptReader

if TYPE_CHECKING:
    from rlm_desktop.store.store import Store

Row = dict[str, Any]


@dataclass
class SessionDetail:
    """Everything saved about one session, with the tree indexed for walking."""

    session: Row
    calls: list[Row]
    turns: list[Row]
    cells: list[Row]
    requests: list[Row]
    compactions: list[Row] = field(default_factory=list)
    _children: dict[str | None, list[Row]] = field(default_factory=dict, repr=False)
    _turns: dict[str, list[Row]] = field(default_factory=dict, repr=False)
    _cells: dict[tuple[str, int], list[Row]] = field(default_factory=dict, repr=False)
    _requests: dict[str, list[Row]] = field(default_factory=dict, repr=False)
    _messages: dict[str, SentMessages] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._children = children_by_parent(self.calls)
        self._turns = _group(self.turns, lambda row: row["call_id"])
        self._cells = _group(self.cells, lambda row: (row["call_id"], row["turn"]))
        self._requests = _group(self.requests, lambda row: row["call_id"])

    @property
    def session_id(self) -> str:
        """The session's id."""
        return str(self.session["id"])

    def roots(self) -> list[Row]:
        """Calls without a (known) parent, in start order — normally exactly one."""
        return self._children.get(None, [])

    def children(self, call_id: str) -> list[Row]:
        """The sub-calls `call_id` started, in start order."""
        return self._children.get(call_id, [])

    def turns_of(self, call_id: str) -> list[Row]:
        """The turns of an RLM call, in order."""
        return self._turns.get(call_id, [])

    def cells_of(self, call_id: str, turn: int) -> list[Row]:
        """The cells one turn ran, in order."""
        return self._cells.get((call_id, turn), [])

    def requests_of(self, call_id: str) -> list[Row]:
        """The LLM requests a call made, in order."""
        return self._requests.get(call_id, [])

    def messages_sent(self, call: Row) -> SentMessages:
        """The messages `call`'s requests sent, where they can be rebuilt (`store.messages`;
        none for a call saved before its opening was recorded)."""
        found = self._messages.get(call["id"])
        if found is None:
            settings = self.session.get("settings") or {}
            found = self._messages[call["id"]] = request_messages(
                call,
                self.turns_of(call["id"]),
                [row for row in self.compactions if row["call_id"] == call["id"]],
                self.requests_of(call["id"]),
                (settings.get("budget") or {}).get("max_turns"),
                bool(settings.get("system_role", True)),
            )
        return found

    def reply_of(self, call_id: str, turn: Row) -> str:
        """The model's reply of a turn; for the turn a run ended in (no `TurnExecuted` recorded
        it), the reply its request brought back, if any."""
        if turn["reply"] is not None:
            return str(turn["reply"])
        replies = [
            request["content"]
            for request in self.requests_of(call_id)
            if request.get("turn") == turn["idx"] and request.get("content")
        ]
        return str(replies[-1]) if replies else ""

    def unfinished_code(self, call_id: str, turn: Row) -> list[str]:
        """The code blocks of a turn the run ended in that never finished running (the first
        of them was running when it ended); [] for a finished turn."""
        if turn["reply"] is not None:
            return []
        ran = len(self.cells_of(call_id, turn["idx"]))
        return extract_code_blocks(self.reply_of(call_id, turn))[ran:]

    def walk(self) -> list[tuple[int, Row]]:
        """Every call depth-first as `(level, call)`, children in start order."""
        return tree_order(self._children)


def children_by_parent(calls: list[Row]) -> dict[str | None, list[Row]]:
    """Calls grouped under their parent's id, in start order; orphans count as roots (None)."""
    children: defaultdict[str | None, list[Row]] = defaultdict(list)
    known = {call["id"] for call in calls}
    for call in calls:
        parent = call["parent_id"] if call["parent_id"] in known else None
        children[parent].append(call)
    return dict(children)


def tree_order(children: dict[str | None, list[Row]]) -> list[tuple[int, Row]]:
    """Every call of `children_by_parent`'s grouping depth-first, as `(level, call)`."""
    order: list[tuple[int, Row]] = []
    stack = [(0, call) for call in reversed(children.get(None, []))]
    while stack:
        level, call = stack.pop()
        order.append((level, call))
        stack.extend((level + 1, child) for child in reversed(children.get(call["id"], [])))
    return order


def _group(items: list[Row], key: Any) -> dict[Any, list[Row]]:
    grouped: defaultdict[Any, list[Row]] = defaultdict(list)
    for item in items:
        grouped[key(item)].append(item)
    return dict(grouped)


def load_detail(store: Store, session_id: str) -> SessionDetail:
    """Read a session (id or unique prefix) completely, each call's prompt whole (`prompts.py`;
    its `prompt_document`, `prompt_start` and `prompt_end` name the span of a document it
    repeats); raises `SessionNotFound`."""
    store.reap_dead_writers()
    with store.lock:
        conn = store.db.conn
        full_id = store.resolve(session_id)
        head = queries.session_head(conn, full_id)
        where = "WHERE session_id = ?"
        calls = queries.rows(
            conn,
            "SELECT c.*, t.text AS system_prompt FROM calls c"
            " LEFT JOIN texts t ON t.sha256 = c.system_sha256"
            " WHERE c.session_id = ? ORDER BY c.seq",
            [full_id],
        )
        prompts = PromptReader(conn, full_id)
        for call in calls:
            call["prompt"] = prompts.whole(call)
        return SessionDetail(
            session=head,
            calls=calls,
            turns=queries.rows(
                conn, f"SELECT * FROM turns {where} ORDER BY call_id, idx", [full_id]
            ),
            cells=queries.rows(
                conn, f"SELECT * FROM cells {where} ORDER BY call_id, turn, idx", [full_id]
            ),
            requests=queries.rows(
                conn,
                f"SELECT * FROM llm_requests {where} ORDER BY sent_at, responded_at, rowid",
                [full_id],
            ),
            compactions=queries.rows(
                conn, f"SELECT * FROM compactions {where} ORDER BY call_id, turn, id", [full_id]
            ),
        )
