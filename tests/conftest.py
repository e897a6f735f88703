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


@pytest.fixture(scope="session")
def compiled_guest_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One folder for the wasm sandbox's compiled guest, shared by the session's data folders
    (compiling it takes seconds; the tests of the cache itself use folders of their own)."""
    return tmp_path_factory.mktemp("compiled")


@pytest.fixture(autouse=True)
def isolated_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, compiled_guest_folder: Path
) -> Path:
    """Point RLM_DESKTOP_HOME at a fresh folder so no test touches real user data."""
    home = tmp_path / "rlm-home"
    monkeypatch.setenv("RLM_DESKTOP_HOME", str(home))
    monkeypatch.setenv("RLM_DESKTOP_COMPILED", str(compiled_guest_folder))
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


@pytest.fixture(scope="session", autouse=True)
def wasm_guest() -> Path:
    """The wasm sandbox's guest, built from the sources as they are now (componentize-py, of
    the dev extra), so a test never runs a guest older than the worker code it tests."""
    from rlm_desktop.engine.sandbox.wasm import build

    if not build.is_current():
        build.build()
    return build.GUEST


@pytest.fixture(params=["kernel", "wasm"])
def sandbox(request: pytest.FixtureRequest) -> str:
    """Each sandbox backend in turn, for the tests every backend must pass (a run's `sandbox`)."""
    from rlm_desktop.engine.sandbox.choice import kernel_available

    if request.param == "wasm":
        request.getfixturevalue("wasm_guest")
    elif not kernel_available():
        pytest.skip("this system has no kernel sandbox")
    return str(request.param)
