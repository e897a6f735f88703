"""Full-text search over saved runs: which sessions hold a text, where, and a snippet of it.

Every text a run keeps is indexed (FTS5, migrations m003 and m008): the question and answer,
each call's prompt, response and error, each turn's reply (or, for a turn that never finished,
the reply its request brought back: the code that was running, as the exports show it), each
cell's code, output, stderr and error. The writer only queues the rows of calls, turns and cells
it writes; `catch_up` indexes the queue, and must run (in a write transaction) before a search.
A hit names its session and its place (`place()`), carries a snippet with the matched words
in brackets (`[word]`, offsets in `marked`; `search_snippet` reads FTS5's marks back), and the
offsets of the snippet's first matched word in the whole text (`start`, `end`: code points, so
`text[start:end]` is the word), which is where the window opens the hit.
A search is words that must all appear (in any form the stemmer takes for the same: "lemurs"
finds "lemur"), a quoted phrase (`"a dugong"`) or a word's start (`okap*`).
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from rlm_desktop import formatting as fmt
from rlm_desktop.store.search_snippet import Marks, Snippet

Row = dict[str, Any]
SNIPPET_TOKENS = 12
_TERM = re.compile(r'"([^"]*)"|([^\s"]+)')

FIELD_LABELS = {
    "query": "question",
    "answer": "answer",
    "prompt": "prompt",
    "response": "response",
    "reply": "reply",
    "unfinished_reply": "reply (turn not finished)",
    "code": "code",
    "stdout": "output",
    "stderr": "stderr",
    "error": "error",
}
"""How each searched column is named to people."""


@dataclass(frozen=True)
class _Source:
    """One FTS index: its table, the columns it covers, and the SQL that places a row."""

    table: str
    columns: tuple[str, ...]
    place: str
    """Selects session_id, call_id, call_kind, root, turn and cell for row `x` (`f` is the index)."""
    joins: str = ""
    keep: str = ""
    """A condition on the rows worth showing."""

    @property
    def fts(self) -> str:
        return f"{self.table}_fts"

    def query(self, columns: str, tail: str = "") -> str:
        """SQL selecting the place and `columns` of every row matching the one `?`."""
        return (
            f"SELECT {self.place}, {columns} FROM {self.fts} f JOIN {self.table} x"
            f" ON x.rowid = f.rowid {self.joins} WHERE {self.fts} MATCH ? {self.keep} {tail}"
        )


_CALL = "LEFT JOIN calls c ON c.session_id = x.session_id AND c.id = x.call_id"
_SOURCES = (  # in the order their hits are shown: the question and answer first
    _Source(
        "sessions",
        ("query", "answer"),
        "x.id AS session_id, NULL AS call_id, NULL AS call_kind, NULL AS root,"
        " NULL AS turn, NULL AS cell",
    ),
    _Source(
        "calls",
        ("prompt", "response", "error"),
        "x.session_id, x.id AS call_id, x.kind AS call_kind, x.parent_id IS NULL AS root,"
        " NULL AS turn, NULL AS cell,"
        # A root call's prompt and response repeat the question and answer: found there once.
        " (x.parent_id IS NULL AND x.prompt IS s.query) AS same_prompt,"
        " (x.parent_id IS NULL AND x.response IS s.answer) AS same_response",
        "JOIN sessions s ON s.id = x.session_id",
        "AND NOT (x.parent_id IS NULL AND x.prompt IS s.query AND x.response IS s.answer"
        " AND x.error IS NULL)",
    ),
    _Source(
        "cells",
        ("code", "stdout", "stderr", "error"),
        "x.session_id, x.call_id, c.kind AS call_kind, c.parent_id IS NULL AS root,"
        " x.turn, (SELECT count(*) FROM cells p WHERE p.session_id = x.session_id"
        " AND p.call_id = x.call_id AND (p.turn < x.turn OR (p.turn = x.turn AND p.idx <= x.idx)))"
        " AS cell",
        _CALL,
    ),
    _Source(
        "turns",
        ("reply", "unfinished_reply"),
        "x.session_id, x.call_id, c.kind AS call_kind, c.parent_id IS NULL AS root,"
        " x.idx AS turn, NULL AS cell",
        _CALL,
    ),
)


def catch_up(conn: sqlite3.Connection) -> int:
    """Index the rows queued since the last search, in one statement per index; returns how
    many rows were indexed. The caller holds a transaction."""
    indexed = 0
    for source in _SOURCES:
        if source.table == "sessions":  # indexed as it is written
            continue
        names = ", ".join(source.columns)
        values = ", ".join(f"x.{column}" for column in source.columns)
        pending = f"{source.fts}_pending"
        indexed += conn.execute(
            f"INSERT INTO {source.fts} (rowid, {names}) SELECT x.rowid, {values}"
            f" FROM {pending} p JOIN {source.table} x ON x.rowid = p.row"
        ).rowcount
        conn.execute(f"DELETE FROM {pending}")
    return indexed


def fts_query(text: str) -> str | None:
    """An FTS5 query that matches every word of `text`, each quoted phrase as a phrase and a
    word ending in `*` as a word's start (what is quoted is never syntax)."""
    terms = []
    for phrase, chunk in _TERM.findall(text):
        words = re.findall(r"\w+", phrase or chunk)
        if phrase and words:
            terms.append(f'"{" ".join(words)}"')
            continue
        terms += [f'"{word}"' for word in words]
        if words and chunk.endswith("*") and chunk.rstrip("*").endswith(words[-1]):
            terms[-1] += " *"
    return " ".join(terms) if terms else None


def matching_sessions(match: str) -> tuple[str, list[str]]:
    """SQL selecting the ids of the sessions holding `match` (an `fts_query`), and its parameters."""
    sql = " UNION ".join(f"SELECT session_id FROM ({s.query('1')})" for s in _SOURCES)
    return sql, [match] * len(_SOURCES)


def search(conn: sqlite3.Connection, text: str, limit: int) -> list[Row]:
    """The best `limit` hits of `text` in every session: the question and answer first, then
    calls, cells and turns' replies, each best first."""
    match = fts_query(text)
    if match is None:
        return []
    hits: list[Row] = []
    for source in _SOURCES:
        hits += _hits(conn, source, match, "ORDER BY f.rank LIMIT ?", [limit])
    hits.sort(key=lambda hit: hit["rank"])
    return _with_sessions(conn, hits[:limit])


def search_sessions(
    conn: sqlite3.Connection, text: str, limit: int, hits_per_session: int
) -> list[Row]:
    """The sessions (newest first, at most `limit`) holding `text`, each with its best hits.

    Each session has `matches` (how many places hold the text: the session's own row, calls,
    turns, cells), `hits` (its best `hits_per_session` hits, best first; one place may give a
    hit per field) and `more` (the places not among the hits).
    """
    match = fts_query(text)
    if match is None:
        return []
    candidates, matches = _candidates(conn, match, hits_per_session)
    found = []
    for session in _newest(conn, list(candidates), -1):
        hits: list[Row] = []
        best = sorted(candidates[session["id"]], key=lambda candidate: candidate[0])
        for (_priority, rank), source, row in best[:hits_per_session]:
            hits += _hits(conn, source, match, "AND f.rowid = ?", [row], rank)
        if not hits:  # the index still holds text the rows no longer have
            continue
        hits = sorted(hits, key=lambda hit: hit["rank"])[:hits_per_session]
        shown = len({hit["row"] for hit in hits})
        total = matches[session["id"]]
        found.append(
            {**session, "matches": total, "more": total - shown, "hits": list(map(_public, hits))}
        )
        if len(found) == limit:
            break
    return found


_Candidate = tuple[tuple[int, float], "_Source", int]
"""(rank: the source's place in `_SOURCES`, then bm25), the source, the rowid."""


def _candidates(
    conn: sqlite3.Connection, match: str, per_session: int
) -> tuple[dict[str, list[_Candidate]], dict[str, int]]:
    """The best `per_session` rows of each source in each session holding `match`, and how
    many rows in all hold it, per session."""
    ranked = (
        "SELECT session_id, row, rank, count(*) OVER (PARTITION BY session_id) AS matches,"
        " row_number() OVER (PARTITION BY session_id ORDER BY rank) AS n FROM ({})"
    )
    candidates: dict[str, list[_Candidate]] = {}
    matches: dict[str, int] = {}
    for priority, source in enumerate(_SOURCES):
        rows = ranked.format(source.query("f.rowid AS row, f.rank AS rank"))
        counted: set[str] = set()
        for session_id, row, rank, count in conn.execute(
            f"SELECT session_id, row, rank, matches FROM ({rows}) WHERE n <= ?",
            [match, per_session],
        ):
            candidates.setdefault(session_id, []).append(((priority, rank), source, row))
            if session_id not in counted:
                counted.add(session_id)
                matches[session_id] = matches.get(session_id, 0) + count
    return candidates, matches


def place(hit: Row) -> str:
    """Where a hit was found, as people read it: `output · root call · turn 2 · cell 3`.

    The cell is numbered across its call, as tracebacks and the console name it (`<cell 3>`).
    """
    field: str = hit["field"]
    parts = [FIELD_LABELS.get(field, field)]
    if hit.get("call_id") is not None:
        if hit.get("root"):
            parts.append("root call")
        else:
            kind = (hit.get("call_kind") or "").upper()
            parts.append(f"{kind} call {fmt.short_id(hit['call_id'])}".lstrip())
    if hit.get("turn") is not None:
        parts.append(f"turn {hit['turn'] + 1}")
    if hit.get("cell") is not None:
        parts.append(f"cell {hit['cell']}")
    return " · ".join(parts)


def segments(hit: Row) -> Iterator[tuple[str, bool]]:
    """The snippet in pieces, `(text, matched)`, without the brackets around matched words."""
    snippet, start = hit["snippet"], 0
    for begin, end in hit["marked"]:
        if begin - 1 > start:
            yield snippet[start : begin - 1], False
        yield snippet[begin:end], True
        start = end + 1
    if start < len(snippet):
        yield snippet[start:], False


def _hits(
    conn: sqlite3.Connection,
    source: _Source,
    match: str,
    tail: str,
    params: list[Any],
    rank: float | None = None,
) -> list[Row]:
    """One hit per matching column of each row `tail` keeps, ranked by bm25 unless `rank` is
    given (bm25 reads the whole list of rows holding a word: known ranks are not recomputed)."""
    marks = Marks()
    snippets = ", ".join(
        f"{marks.snippet_sql(source.fts, i, SNIPPET_TOKENS)} AS {column}"
        for i, column in enumerate(source.columns)
    )
    ranking = "f.rank" if rank is None else "?"
    cursor = conn.execute(
        source.query(f"{snippets}, f.rowid AS row, {ranking} AS rank", tail),
        [match, *params] if rank is None else [rank, match, *params],
    )
    priority = _SOURCES.index(source)
    names = [column[0] for column in cursor.description]
    hits = []
    for values in cursor.fetchall():
        row = dict(zip(names, values, strict=True))
        for column in source.columns:
            snippet = marks.read(row[column] or "")
            if snippet is None or row.get(f"same_{column}"):
                continue
            hit = {name: row[name] for name in ("session_id", "call_id", "turn", "cell")}
            hit.update(call_kind=row["call_kind"], root=bool(row["root"]), field=column)
            hit.update(rank=(priority, row["rank"]), row=(priority, row["row"]))
            hit.update(_bracketed(snippet.pieces))
            hit.update(_offsets(conn, source, column, row["row"], snippet))
            hit["place"] = place(hit)
            hits.append(hit)
    return hits


def _offsets(
    conn: sqlite3.Connection, source: _Source, column: str, rowid: int, snippet: Snippet
) -> Row:
    """Where the snippet's first match is in the whole text: `start` and `end` (None when the
    row no longer holds the text the index does). SQLite's `instr` counts characters."""
    (found,) = conn.execute(
        f"SELECT instr({column}, ?) FROM {source.table} WHERE rowid = ?", [snippet.window, rowid]
    ).fetchone() or (0,)
    if not found:
        return {"start": None, "end": None}
    begin, end = snippet.first
    return {"start": found - 1 + begin, "end": found - 1 + end}


def _bracketed(pieces: list[tuple[str, bool]]) -> Row:
    """The snippet's pieces as one line with `[` `]` around matches, and the matches' offsets."""
    text: list[str] = []
    marked: list[list[int]] = []
    offset = 0
    for piece, matched in pieces:
        if matched:
            marked.append([offset + 1, offset + 1 + len(piece)])
            piece = f"[{piece}]"
        text.append(piece)
        offset += len(piece)
    return {"snippet": "".join(text), "marked": marked}


def _newest(conn: sqlite3.Connection, ids: list[str], limit: int) -> list[Row]:
    """The sessions `ids`, newest first (`limit` -1 for all)."""
    cursor = conn.execute(
        "SELECT id, query, status, started_at FROM sessions"
        " WHERE id IN (SELECT value FROM json_each(?)) ORDER BY started_at DESC LIMIT ?",
        [json.dumps(ids), limit],
    )
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, values, strict=True)) for values in cursor.fetchall()]


def _with_sessions(conn: sqlite3.Connection, hits: list[Row]) -> list[Row]:
    """Hits with their session's question and start time, in the same order."""
    heads = {row["id"]: row for row in _newest(conn, list({h["session_id"] for h in hits}), -1)}
    for hit in hits:
        head = heads.get(hit["session_id"], {})
        hit.update(query=head.get("query"), started_at=head.get("started_at"))
    return [_public(hit) for hit in hits]


def _public(hit: Row) -> Row:
    return {name: value for name, value in hit.items() if name not in ("rank", "row")}
