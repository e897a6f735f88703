"""`rlm-desktop`: the GUI with no arguments; `run` and `sessions` for headless use."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from rlm_desktop import __version__


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
    parser.add_argument("--qt-probe", action="store_true", help=argparse.SUPPRESS)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    from rlm_desktop.commands.eval import add_eval_parser
    from rlm_desktop.commands.run import add_run_parser
    from rlm_desktop.commands.sessions import add_sessions_parser

    add_run_parser(subparsers)
    add_sessions_parser(subparsers)
    add_eval_parser(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `rlm-desktop` script; returns the exit code."""
    import multiprocessing

    multiprocessing.freeze_support()  # a frozen build must not re-run itself in PDF workers
    args = build_parser().parse_args(argv)
    if args.self_check or args.qt_probe:
        from rlm_desktop.commands import self_check

        return self_check.qt_probe() if args.qt_probe else self_check.self_check()
    if args.command is None:
        from rlm_desktop.ui.app import main as gui_main

        return gui_main()
    if args.command == "run":
        from rlm_desktop.commands.run import run_command

        return run_command(args)
    if args.command == "eval":
        from rlm_desktop.commands.eval import eval_command

        return eval_command(args)
    from rlm_desktop.commands.sessions import run_sessions_command

    return run_sessions_command(args)


if __name__ == "__main__":
    sys.exit(main())
