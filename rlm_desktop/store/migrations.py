"""The database schema as numbered migrations; each runs in one transaction.

Never edit a migration that has shipped: add `m002_...` instead. `MIGRATIONS.apply(db)` records
what it applied in sqlite-utils' `_sqlite_migrations` table.
"""

from __future__ import annotations

from sqlite_utils import Database
from sqlite_utils.migrations import Migrations

MIGRATIONS = Migrations("rlm_desktop")


@MIGRATIONS()
def m001_initial(db: Database) -> None:
    """Sessions, their documents, the call tree, turns, cells, LLM requests and the event log."""
    db.table("sessions").create(
        {
            "id": str,
            "query": str,
            "mode": str,
            "chosen_mode": str,
            "mode_reason": str,
            "model": str,
            "sub_model": str,
            "profile": str,
            "settings": str,
            "budget": str,
            "status": str,
            "answer": str,
            "error": str,
            "cost_usd": float,
            "tokens": int,
            "input_tokens": int,
            "output_tokens": int,
            "turns": int,
            "sub_calls": int,
            "max_depth_reached": int,
            "unpriced": int,
            "started_at": float,
            "ended_at": float,
            "wall_s": float,
            "writer_pid": int,
            "writer_started": float,
            "writer_host": str,
        },
        pk="id",
        not_null=["status"],
        defaults={"query": "", "status": "running"},
    )
    db.table("sessions").create_index(["started_at"])

    db.table("texts").create({"sha256": str, "text": str, "chars": int}, pk="sha256")
    db.table("documents").create(
        {
            "id": int,
            "session_id": str,
            "position": int,
            "name": str,
            "path": str,
            "size": int,
            "sha256": str,
            "chars": int,
            "tokens": int,
        },
        pk="id",
    )
    db.table("documents").create_index(["session_id", "position"], unique=True)

    db.table("calls").create(
        {
            "session_id": str,
            "id": str,
            "parent_id": str,
            "seq": int,
            "kind": str,
            "depth": int,
            "model": str,
            "prompt": str,
            "response": str,
            "answer": str,
            "answer_source": str,
            "status": str,
            "error": str,
            "input_tokens": int,
            "output_tokens": int,
            "cost_usd": float,
            "latency_s": float,
            "started_at": float,
            "ended_at": float,
            "parent_turn": int,
            "parent_cell": int,
            "worker_restarts": int,
        },
        pk=("session_id", "id"),
    )
    db.table("calls").create_index(["session_id", "parent_id"])
    db.table("calls").create_index(["session_id", "seq"])

    db.table("llm_requests").create(
        {
            "session_id": str,
            "id": str,
            "call_id": str,
            "turn": int,
            "model": str,
            "messages": int,
            "reserved_tokens": int,
            "content": str,
            "input_tokens": int,
            "output_tokens": int,
            "cost_usd": float,
            "latency_s": float,
            "finish_reason": str,
            "truncated": int,
            "attempts": int,
            "error": str,
            "sent_at": float,
            "responded_at": float,
        },
        pk=("session_id", "id"),
    )
    db.table("llm_requests").create_index(["session_id", "call_id"])

    db.table("turns").create(
        {
            "session_id": str,
            "call_id": str,
            "idx": int,
            "reply": str,
            "code_blocks": int,
            "observation": str,
            "started_at": float,
            "ended_at": float,
            "duration_s": float,
        },
        pk=("session_id", "call_id", "idx"),
    )
    db.table("cells").create(
        {
            "session_id": str,
            "call_id": str,
            "turn": int,
            "idx": int,
            "code": str,
            "stdout": str,
            "stderr": str,
            "error": str,
            "duration_s": float,
            "timed_out": int,
            "variables_lost": int,
            "ended_at": float,
        },
        pk=("session_id", "call_id", "turn", "idx"),
    )

    db.table("events").create(
        {"id": int, "session_id": str, "seq": int, "ts": float, "type": str, "data": str},
        pk="id",
    )
    db.table("events").create_index(["session_id", "seq"], unique=True)

    db.table("sessions").enable_fts(["query", "answer"], create_triggers=True, tokenize="porter")
    db.table("cells").enable_fts(["code"], create_triggers=True, tokenize="porter")


@MIGRATIONS()
def m002_calls_wall_s(db: Database) -> None:
    """`calls.latency_s` held a call's wall time (start to end), not the provider's latency."""
    db.execute("ALTER TABLE calls RENAME COLUMN latency_s TO wall_s")
