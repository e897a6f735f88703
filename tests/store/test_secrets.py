"""No API key, Authorization header or environment secret reaches the database or an export."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from rlm_desktop import paths
from rlm_desktop.engine.bus import EventBus
from rlm_desktop.engine.context import ContextDocument
from rlm_desktop.engine.events import CellExecuted, LLMResponded
from rlm_desktop.exports import FORMATS, export_bytes
from rlm_desktop.store import Store
from tests.store.synthetic import run_events

API_KEY = "sk-test-9f8e7d6c5b4a39281706"
ENV_SECRET = "envsecret-55aa66bb77cc"
HEADER_TOKEN = "tok-0a1b2c3d4e5f"


@dataclass
class Credentials:
    api_key: str


@dataclass
class KeyedRun:
    run_id: str
    bus: EventBus
    credentials: Credentials


def _leaky_events(run_id: str) -> list[object]:
    events: list[object] = list(run_events(run_id, turns=1, calls_per_turn=1, finish=False))
    events.append(
        LLMResponded(
            run_id=run_id,
            call_id="c1",
            request_id="bad",
            model="openai/test-model",
            content="",
            input_tokens=0,
            output_tokens=0,
            cost_usd=None,
            latency_s=0.1,
            finish_reason=None,
            truncated=False,
            attempts=1,
            error=f"AuthenticationError: Incorrect API key provided: {API_KEY}",
        )
    )
    events.append(
        CellExecuted(
            run_id=run_id,
            call_id="c0",
            turn=0,
            index=1,
            code=f"print(os.environ['MY_SERVICE_TOKEN'])  # {ENV_SECRET}",
            stdout=f"{ENV_SECRET}\nheaders: {{'Authorization': 'Bearer {HEADER_TOKEN}'}}\n",
            stderr="",
            error=None,
            duration_s=0.01,
        )
    )
    events.extend(list(run_events(run_id, turns=0, calls_per_turn=0))[-3:])
    return events


def test_secrets_never_reach_the_file_or_the_exports(
    monkeypatch: pytest.MonkeyPatch, isolated_home: Path
) -> None:
    monkeypatch.setenv("MY_SERVICE_TOKEN", ENV_SECRET)
    store = Store(paths.database_path())
    run = KeyedRun("keyed", EventBus(), Credentials(API_KEY))
    document = ContextDocument(name="d.txt", text=f"key={API_KEY}", path="")
    recorder = store.record(run, documents=[document])
    for event in _leaky_events("keyed"):
        run.bus.publish(event)  # type: ignore[arg-type]
    recorder.close()

    exports = [
        export_bytes(store, "keyed", fmt, include_content=True).decode("utf-8", "replace")
        for fmt in FORMATS
    ]
    stdout = store.session("keyed")["turns"][0]["stdout"]
    assert "[redacted]" in stdout
    assert "Bearer [redacted]" in stdout
    store.close()

    assert_not_in_files(isolated_home, (API_KEY, ENV_SECRET, HEADER_TOKEN))
    for secret in (API_KEY, ENV_SECRET, HEADER_TOKEN):
        for text in exports:
            assert secret not in text


def assert_not_in_files(home: Path, secrets: tuple[str, ...]) -> None:
    """No byte of the database's files (the main file, its WAL) holds one of `secrets`."""
    files = list(home.glob("sessions.db*"))
    assert files
    for secret in secrets:
        for path in files:
            assert secret.encode() not in path.read_bytes(), (secret, path.name)
