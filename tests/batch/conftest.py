"""Fixtures of the batch tests: the scripted server answering as `scripting` says, and the
contract folders."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.batch.scripting import MODELS, make_folders, respond
from tests.scripted_server import ScriptedServer


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    """The scripted server, every model of `scripting` listed, answering by `respond`."""
    server = ScriptedServer(models=MODELS).start()
    server.respond_with(respond)
    yield server
    server.stop()


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """A folder holding five contract folders under `contracts/` (the questions file goes here)."""
    folder = tmp_path / "work"
    make_folders(folder)
    return folder
