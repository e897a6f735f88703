"""Conversations in the store: a session to go on from, and sessions listed as threads.

A follow-up question is a session of its own whose `follows` names the session it goes on from
and whose `conversation_id` names the conversation's first session (which has neither).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rlm_desktop.engine.context import ContextDocument
from rlm_desktop.store.trials import trial_condition

if TYPE_CHECKING:
    from rlm_desktop.store.store import Store

Row = dict[str, Any]


@dataclass(frozen=True)
class ContinuedSession:
    """What a follow-up takes from the session it goes on from."""

    session_id: str
    conversation_id: str
    query: str
    documents: list[ContextDocument]
    settings: dict[str, Any]


class SessionReadOnly(LookupError):
    """A session that cannot be followed up: it was imported, not run here."""


def continued_session(store: Store, session_id: str) -> ContinuedSession:
    """The saved session `session_id` (an id or a unique prefix) as a follow-up starts from it:
    its documents rebuilt from the texts the store kept. Raises `SessionNotFound`, and
    `SessionReadOnly` for an imported session."""
    head = store.session(session_id)["session"]
    full_id = str(head["id"])
    if head.get("imported"):
        raise SessionReadOnly(
            f"session {full_id} was imported from {head['imported']['file']!r}: it is read-only "
            "(ask a new question over its documents instead of following it up)"
        )
    settings = head.get("settings") or {}
    documents = store.context_documents(full_id)
    conversation = settings.get("conversation_id") or full_id
    return ContinuedSession(
        full_id, str(conversation), head.get("query") or "", documents, settings
    )


def conversation_links(store: Store, ids: Sequence[str]) -> dict[str, tuple[str, str]]:
    """`{session id: (conversation id, follows)}` for the sessions of `ids` that follow another."""
    if not ids:
        return {}
    marks = ", ".join("?" for _ in ids)
    with store.lock:
        found = store.db.execute(
            f"SELECT id, conversation_id, follows FROM sessions WHERE id IN ({marks})"
            " AND follows IS NOT NULL",
            list(ids),
        ).fetchall()
    return {row[0]: (row[1] or row[2], row[2]) for row in found}


def threaded(rows: Sequence[Row], links: dict[str, tuple[str, str]]) -> list[tuple[Row, int]]:
    """`rows` (newest first) with each conversation's sessions together, in the order asked,
    where its newest session was; each with its place in the conversation (0: the first, or a
    session on its own; 1: the first follow-up; ...)."""
    threads: dict[str, list[Row]] = {}
    order: list[str] = []
    for row in rows:
        key = links[row["id"]][0] if row["id"] in links else row["id"]
        if key not in threads:
            threads[key] = []
            order.append(key)
        threads[key].append(row)
    listed: list[tuple[Row, int]] = []
    for key in order:
        members = sorted(threads[key], key=lambda r: r.get("started_at") or 0.0)
        first_is_root = members[0]["id"] == key
        for place, row in enumerate(members):
            listed.append((row, place if first_is_root else place + 1))
    return listed


@dataclass(frozen=True)
class Conversation:
    """One thread of the conversations sidebar: a question and the follow-ups that went on from
    it, as the store has them."""

    id: str
    """The conversation's first session."""
    title: str
    """The first question."""
    latest_id: str
    """The newest session: what opening the conversation shows."""
    questions: int
    latest_status: str
    latest_at: float
    """When the newest session started (epoch seconds)."""


def conversations(store: Store, limit: int = 200) -> list[Conversation]:
    """The user's conversations, the one asked in most recently first (at most `limit`);
    evaluation trials left out."""
    with store.lock:
        conn = store.db.conn
        found = conn.execute(
            "SELECT coalesce(conversation_id, follows, id) AS thread, id, query, status,"
            f" coalesce(started_at, 0) FROM sessions WHERE NOT {trial_condition(conn)}"
            " ORDER BY started_at"
        ).fetchall()
    threads: dict[str, list[tuple[str, str, str, float]]] = {}
    for thread, session_id, query, status, started in found:
        threads.setdefault(thread, []).append((session_id, query or "", status or "", started))
    listed = [
        Conversation(
            id=thread,
            title=members[0][1],
            latest_id=members[-1][0],
            questions=len(members),
            latest_status=members[-1][2],
            latest_at=members[-1][3],
        )
        for thread, members in threads.items()
    ]
    listed.sort(key=lambda c: c.latest_at, reverse=True)
    return listed[:limit]
