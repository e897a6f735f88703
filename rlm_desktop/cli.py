"""`rlm-desktop`: the GUI with no arguments; `run`, `sessions`, `eval` and `batch` for headless
use."""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterator, Sequence
from typing import Any, TextIO, cast

from rlm_desktop import __version__
from rlm_desktop.commands.options import QT_PROBE_FLAG
from rlm_desktop.formatting import terminal_text


class InertStream:
    """A text stream that writes everything as `formatting.terminal_text` prints it and passes
    all else (flush, fileno, isatty, encoding, ...) to the stream it wraps."""

    def __init__(self, stream: TextIO) -> None:
        self.wrapped = stream

    def write(self, text: str) -> int:
        """Write `text` inert; returns its length, as a text stream does."""
        self.wrapped.write(terminal_text(text))
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.wrapped, name)


@contextlib.contextmanager
def inert_stderr() -> Iterator[None]:
    """Inside, whatever is written to `sys.stderr` prints inert.

    The commands escape what they print themselves; this is the net under what they do not:
    argparse's errors (which quote the command line), log records (Python's last-resort handler,
    and litellm's own handler, made when litellm is imported, later), warnings and tracebacks,
    any of which can carry a provider's or a document's words.
    """
    stream = sys.stderr
    if stream is None or isinstance(stream, InertStream):  # no console (a GUI launch), or nested
        yield
        return
    sys.stderr = cast(TextIO, InertStream(stream))
    try:
        yield
    finally:
        sys.stderr = stream


def build_parser() -> argparse.ArgumentParser:
    """The whole command line."""
    parser = argparse.ArgumentParser(
        prog="rlm-desktop",
        description="Run Recursive Language Models over local documents. No command: open the GUI.",
    )
    parser.add_argument("--version", action="version", version=f"rlm-desktop {__version__}")
    parser.add_argument(
        "--self-check",
        action="store_true",
        help="check that this installation can run (imports, data folder, keyring, price map, "
        "a REPL worker, Qt) and exit; 1 if any check fails",
    )
    parser.add_argument(QT_PROBE_FLAG, action="store_true", help=argparse.SUPPRESS)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    from rlm_desktop.commands.batch import add_batch_parser
    from rlm_desktop.commands.eval import add_eval_parser
    from rlm_desktop.commands.run import add_run_parser
    from rlm_desktop.commands.sessions import add_sessions_parser

    add_run_parser(subparsers)
    add_sessions_parser(subparsers)
    add_eval_parser(subparsers)
    add_batch_parser(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `rlm-desktop` script; returns the exit code."""
    import multiprocessing

    multiprocessing.freeze_support()  # a frozen build must not re-run itself in PDF workers
    with inert_stderr():
        return _dispatch(argv)


def _dispatch(argv: Sequence[str] | None) -> int:
    args = build_parser().parse_args(argv)
    if args.qt_probe:
        from rlm_desktop.ui.app import qt_probe

        return qt_probe()
    if args.self_check:
        from rlm_desktop.commands import self_check

        return self_check.self_check()
    if args.command is None:
        from rlm_desktop.ui.app import main as gui_main

        return gui_main()
    if args.command == "run":
        from rlm_desktop.commands.run import run_command

        return run_command(args)
    if args.command == "eval":
        from rlm_desktop.commands.eval import eval_command

        return eval_command(args)
    if args.command == "batch":
        from rlm_desktop.commands.batch import batch_command

        return batch_command(args)
    from rlm_desktop.commands.sessions import run_sessions_command

    return run_sessions_command(args)


if __name__ == "__main__":
    sys.exit(main())
