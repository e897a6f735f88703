"""Shared fixtures: an isolated data folder for every test and the scripted LLM server."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"

import keyring  # noqa: E402
from keyring.backends import fail  # noqa: E402

from tests.memory_keyring import MemoryKeyring  # noqa: E402
from tests.scripted_server import ScriptedServer  # noqa: E402

TEST_MODEL = "openai/test-model"


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point RLM_DESKTOP_HOME at a fresh folder so no test touches real user data."""
    home = tmp_path / "rlm-home"
    monkeypatch.setenv("RLM_DESKTOP_HOME", str(home))
    return home


@pytest.fixture
def scripted_server() -> Iterator[ScriptedServer]:
    """A running scripted OpenAI-compatible server on 127.0.0.1."""
    server = ScriptedServer().start()
    yield server
    server.stop()


@pytest.fixture
def memory_keyring() -> Iterator[MemoryKeyring]:
    """The OS keyring replaced by a dict for the test (a third-party seam, not our code)."""
    from rlm_desktop.providers import keys

    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)
    keys.clear_session_keys()


@pytest.fixture
def no_keyring() -> Iterator[None]:
    """No working keyring, as on a headless machine without a Secret Service."""
    from rlm_desktop.providers import keys

    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    yield
    keyring.set_keyring(previous)
    keys.clear_session_keys()
