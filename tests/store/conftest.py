"""Fixtures for the store tests: an open store in the isolated data folder, and recorded runs."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator

import pytest

from rlm_desktop import paths
from rlm_desktop.commands.sessions import add_sessions_parser, run_sessions_command
from rlm_desktop.engine.bus import EventBus
from rlm_desktop.engine.context import ContextDocument
from rlm_desktop.store import Store
from tests.store.synthetic import FakeRun, run_events

Cli = Callable[..., tuple[int, str, str]]

DOCUMENT = ContextDocument(name="notes.txt", text="Zebrafish: 7 in tank A.", path="/data/notes.txt")


@pytest.fixture
def store() -> Iterator[Store]:
    """A store on the test's own database file."""
    opened = Store(paths.database_path())
    yield opened
    opened.close()


@pytest.fixture
def record_run(store: Store) -> Callable[..., str]:
    """Publish a synthetic run through a real bus with the store recording; returns its id."""

    def record(run_id: str = "run-1", **options: object) -> str:
        run = FakeRun(run_id, EventBus())
        recorder = store.record(run, documents=[DOCUMENT])
        for event in run_events(run_id, **options):  # type: ignore[arg-type]
            run.bus.publish(event)
        recorder.close()
        return run_id

    return record


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Cli:
    """`rlm-desktop sessions ARGV...` through its real argument parser: (exit code, out, err)."""

    def run(*argv: str) -> tuple[int, str, str]:
        parser = argparse.ArgumentParser(prog="rlm-desktop")
        add_sessions_parser(parser.add_subparsers(dest="command"))
        code = run_sessions_command(parser.parse_args(["sessions", *argv]))
        out, err = capsys.readouterr()
        return code, out, err

    return run
