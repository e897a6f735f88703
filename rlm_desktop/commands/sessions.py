"""`rlm-desktop sessions ...`: list, show, export, delete and search saved runs, offline."""

from __future__ import annotations

import argparse
import logging
import os
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from rlm_desktop import formatting as fmt
from rlm_desktop import paths
from rlm_desktop.commands.health import add_health_parser, health_command, health_json, summary
from rlm_desktop.commands.options import Subcommands, add_json_option, add_session_id

EXPORT_FORMATS = ("md", "jsonl", "html", "otlp", "otlp-proto")
"""The store's export formats, named here so that building the parser does not import the store
(half a second); a test keeps the two equal."""

if TYPE_CHECKING:
    from rlm_desktop.store import Store

log = logging.getLogger(__name__)
ID_WIDTH = 22
TREE_LINES = 200
SEARCH_HITS = 3

SESSIONS_SUMMARY = "review, search, export and delete saved runs"
SESSIONS_DESCRIPTION = "Saved runs, read from the local database (no network, no model needed)."


def add_sessions_parser(subparsers: Subcommands) -> argparse.ArgumentParser:
    """Add the `sessions` command and its subcommands to the CLI's subparsers."""
    parser = subparsers.add_parser(
        "sessions", help=SESSIONS_SUMMARY, description=SESSIONS_DESCRIPTION
    )
    commands = parser.add_subparsers(dest="sessions_command", metavar="COMMAND", required=True)

    listing = commands.add_parser("list", help="saved sessions, newest first")
    listing.add_argument("--search", metavar="TEXT", help="only sessions whose text matches")
    listing.add_argument("--limit", type=int, default=200, help="at most N sessions (200)")
    add_json_option(listing)

    show = commands.add_parser("show", help="one session: question, answer, cost and call tree")
    add_session_id(show)
    add_json_option(show)

    export = commands.add_parser(
        "export", help="write a session as jsonl, md, html or OTLP traces (otlp: JSON, otlp-proto)"
    )
    add_session_id(export)
    export.add_argument("--format", required=True, choices=EXPORT_FORMATS)
    export.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write to FILE instead of stdout (a pipe gets the same bytes; a terminal sees "
        "control characters escaped)",
    )
    export.add_argument(
        "--include-content",
        action="store_true",
        help="put prompt, completion and code text in OTLP spans (jsonl and md always have it)",
    )
    export.add_argument(
        "--with-documents",
        action="store_true",
        help="jsonl: carry the documents' text, so an import elsewhere has coverage, sources and "
        "the preview (without it only their names leave)",
    )

    importing = commands.add_parser(
        "import",
        help="keep a trajectory file as a read-only session: our jsonl export, an RLMLogger log "
        "(rlms) or a DSPy RLM trajectory",
    )
    importing.add_argument("file", metavar="FILE", help="the trajectory file")
    add_json_option(importing)

    delete = commands.add_parser("delete", help="delete a session and its saved documents")
    add_session_id(delete)
    add_json_option(delete)

    search = commands.add_parser(
        "search",
        help="find text anywhere in saved runs: questions, answers, prompts, responses, "
        "code, output and errors",
    )
    search.add_argument("text", nargs="+", help="words that must all appear")
    search.add_argument("--limit", type=int, default=50, help="at most N sessions (50)")
    search.add_argument(
        "--hits", type=int, default=SEARCH_HITS, help=f"places shown per session ({SEARCH_HITS})"
    )
    add_json_option(search)
    add_health_parser(commands)
    return parser


def run_sessions_command(args: argparse.Namespace) -> int:
    """Run the parsed `sessions` subcommand; returns the exit code."""
    from rlm_desktop.store import Store, StoreError

    try:
        store = Store(paths.database_path())
    except StoreError as error:  # a database that cannot be opened, read or written
        return _fail(str(error), 1)
    try:
        handler = _HANDLERS[args.sessions_command]
        return handler(store, args)
    except StoreError as error:
        return _fail(str(error.args[0] if error.args else error), 2)
    except sqlite3.Error as error:
        return _fail(store.describe(error), 1)
    except (TypeError, ValueError, KeyError, AttributeError) as error:
        # A value the checks of a session's record (store/integrity.py) did not foresee, in a
        # database that may be someone else's: one line, as for any damaged record.
        log.debug("sessions %s", args.sessions_command, exc_info=error)
        return _fail(f"a saved record could not be read ({type(error).__name__}: {error}); "
                     "the database may be damaged or made elsewhere", 1)  # fmt: skip
    except BrokenPipeError:
        # The reader (`| head`) left: stop quietly, and keep Python from complaining at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    finally:
        store.close()


def _fail(message: str, code: int) -> int:
    _line(f"rlm-desktop sessions: {message}", file=sys.stderr)
    return code


def _line(text: str, file: TextIO | None = None) -> None:
    """Print one line, inert: sessions hold what models, providers and documents wrote."""
    print(fmt.terminal_safe(text), file=file)


def _print_json(value: object) -> None:
    print(fmt.terminal_json(value))


def _list(store: Store, args: argparse.Namespace) -> int:
    if args.limit < 1:
        return _fail("--limit must be at least 1", 2)
    sessions = store.list_sessions(search=args.search, limit=args.limit)
    if args.json:
        _print_json({"sessions": sessions})
        return 0
    if not sessions:
        print("no saved sessions" + (" match" if args.search else ""), file=sys.stderr)
        return 0
    print(f"{'ID':<{ID_WIDTH}}  {'STARTED':<16}  {'STATUS':<15}  {'COST':>9}  CALLS  QUERY")
    for row in sessions:
        _line(
            f"{row['id']:<{ID_WIDTH}}  {fmt.when(row['started_at'], missing='—'):<16}  "
            f"{'damaged' if row['damaged'] else row['status']:<15}  {_cost(row):>9}  {row['sub_calls'] + 1:>5}  "
            f"{fmt.one_line(row['query'], 60)}"
        )
    return 0


def _show(store: Store, args: argparse.Namespace) -> int:
    from rlm_desktop.review.health import session_health

    found = store.session(args.id)
    health = session_health(store, found["session"]["id"])
    if args.json:
        _print_json({**found, **health_json(health)})
        return 0
    from rlm_desktop.exports.markdown import call_line
    from rlm_desktop.store.detail import children_by_parent, tree_order

    session = found["session"]
    chosen = session["chosen_mode"]
    mode = session["mode"] + (f" → {chosen}" if chosen and chosen != session["mode"] else "")
    wall = f"{session['wall_s']:.1f} s" if session["wall_s"] is not None else "—"
    _line(f"Session {session['id']} ({session['status']})")
    print(f"Question: {fmt.terminal_text(session['query'])}")
    model, sub_model = (fmt.model_and_id(session[key] or "") for key in ("model", "sub_model"))
    _line(f"Model: {model} · sub-model {sub_model} · mode {mode}")
    _line(
        f"Cost: {_cost(session)} · {session['input_tokens']:,} in / "
        f"{session['output_tokens']:,} out · {fmt.plural(session['turns'], 'turn')} · "
        f"{fmt.plural(session['sub_calls'], 'sub-call')} · {wall} · "
        f"started {fmt.when(session['started_at'], missing='—')}"
    )
    if session.get("ran_on"):
        from rlm_desktop.cluster.runs import RanOn

        ran_on = RanOn.from_json(session["ran_on"])
        retry = " (the retry of a trial whose node died)" if ran_on.attempt > 1 else ""
        _line(f"Ran on: {ran_on.label()}{retry}")
    for doc in session["documents"]:
        _line(f"Document: {doc['name']} ({doc['chars'] or 0:,} characters) {doc['path'] or ''}")
    if session["error"]:
        _line(f"Error: {session['error']}")
    print("\nAnswer:\n" + fmt.terminal_text(session["answer"] or "(no answer)"))
    print("\n" + "\n".join(summary(health)))
    print("\nCalls:")
    for level, call in tree_order(children_by_parent(found["calls"]))[:TREE_LINES]:
        _line(f"{'  ' * (level + 1)}- {call_line(call, markdown=False)}")
    hidden = len(found["calls"]) - TREE_LINES
    if hidden > 0:
        print(f"  … {hidden:,} more calls")
    print()
    _line(
        f"{fmt.plural(len(found['turns']), 'turn')}. For the code and output of each: "
        f"rlm-desktop sessions export {session['id']} --format md"
    )
    return 0


def _export(store: Store, args: argparse.Namespace) -> int:
    from rlm_desktop.exports import export_bytes

    if args.with_documents and args.format != "jsonl":
        return _fail("--with-documents goes with --format jsonl (only it carries documents)", 2)
    data = export_bytes(
        store,
        args.id,
        args.format,
        include_content=args.include_content,
        with_documents=args.with_documents,
    )
    if args.output is None:
        return _write_to_stdout(data, args.format)
    target = Path(args.output).expanduser()
    try:
        target.write_bytes(data)
    except OSError as error:
        return _fail(f"cannot write {target}: {error.strerror or error}; choose another -o FILE", 2)
    _line(f"wrote {target} ({len(data):,} bytes)", file=sys.stderr)
    return 0


def _write_to_stdout(data: bytes, kind: str) -> int:
    """An export on stdout: its exact bytes for a pipe or a file (as `-o` writes them); on a
    terminal, which a person reads and the answer's escapes would act on, its text made inert
    (`formatting.terminal_text`), and a binary format refused, as gzip and curl do."""
    if not sys.stdout.isatty():
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return 0
    if kind == "otlp-proto":
        return _fail(
            "otlp-proto is binary: write it to a file with -o FILE, or pipe it to a program", 2
        )
    sys.stdout.write(fmt.terminal_text(data.decode("utf-8", "surrogateescape")))
    sys.stdout.flush()
    return 0


def _import(store: Store, args: argparse.Namespace) -> int:
    from rlm_desktop.importing import ImportRefused, import_trajectory

    try:
        imported = import_trajectory(store, Path(args.file).expanduser())
    except ImportRefused as refused:
        return _fail(str(refused), 2)
    if args.json:
        _print_json({
            "session_id": imported.session_id, "source": imported.source,
            "calls": imported.calls, "turns": imported.turns, "duplicate": imported.duplicate,
            "left_out": list(imported.left_out),
        })  # fmt: skip
        return 0
    if imported.duplicate:
        _line(f"already imported as session {imported.session_id}: nothing new kept")
        return 0
    _line(
        f"imported {Path(args.file).name} ({imported.source}) as session {imported.session_id}: "
        f"{fmt.plural(imported.calls, 'call')}, {fmt.plural(imported.turns, 'turn')}"
    )
    for line in imported.left_out:
        _line(f"left out: {line}", file=sys.stderr)
    return 0


def _delete(store: Store, args: argparse.Namespace) -> int:
    from rlm_desktop.engine.conversation import forget

    deleted = store.delete(args.id)
    forget(paths.scratch_root(), deleted)
    if args.json:
        _print_json({"deleted": deleted})
    else:
        _line(f"deleted {deleted}")
    return 0


def _search(store: Store, args: argparse.Namespace) -> int:
    if args.limit < 1 or args.hits < 1:
        return _fail("--limit and --hits must be at least 1", 2)
    text = " ".join(args.text)
    sessions = store.search_sessions(text, limit=args.limit, hits_per_session=args.hits)
    if args.json:
        _print_json({"query": text, "sessions": sessions})
        return 0
    if not sessions:
        _line(f"nothing matches {text!r}", file=sys.stderr)
        return 0
    for session in sessions:
        more = session["more"]
        _line(
            f"{session['id']}  {fmt.when(session['started_at'], missing='—')}  "
            f"{fmt.one_line(session['query'], 60)}" + (f"  (+{more:,} more)" if more > 0 else "")
        )
        for hit in session["hits"]:
            _line(f"  {hit['place']}: {fmt.one_line(hit['snippet'], 100)}")
    return 0


def _cost(row: dict[str, Any]) -> str:
    return fmt.cost(row["cost_usd"], bool(row["unpriced"]))


_HANDLERS: dict[str, Callable[[Store, argparse.Namespace], int]] = {
    "list": _list,
    "show": _show,
    "export": _export,
    "import": _import,
    "delete": _delete,
    "search": _search,
    "health": health_command,
}
