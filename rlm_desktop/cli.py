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
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    from rlm_desktop.commands.run import add_run_parser
    from rlm_desktop.commands.sessions import add_sessions_parser

    add_run_parser(subparsers)
    add_sessions_parser(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `rlm-desktop` script; returns the exit code."""
    import multiprocessing

    multiprocessing.freeze_support()  # a frozen build must not re-run itself in PDF workers
    args = build_parser().parse_args(argv)
    if args.command is None:
        from rlm_desktop.ui.app import main as gui_main

        return gui_main()
    if args.command == "run":
        from rlm_desktop.commands.run import run_command

        return run_command(args)
    from rlm_desktop.commands.sessions import run_sessions_command

    return run_sessions_command(args)


if __name__ == "__main__":
    sys.exit(main())
