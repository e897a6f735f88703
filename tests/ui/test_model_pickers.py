"""Model names for the pickers: litellm's bundled map and local servers' own lists."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from rlm_desktop.engine.config import DEFAULT_MODEL
from rlm_desktop.providers.catalog import (
    DiscoveryError,
    discover_ollama,
    discover_openai_compatible,
    litellm_model_names,
)
from rlm_desktop.ui.run.controls import RunControls
from rlm_desktop.ui.tree.columns import COLUMNS
from rlm_desktop.ui.tree.model import CallTreeModel
from rlm_desktop.ui.window.main_window import MainWindow
from tests.scripted_server import ScriptedServer
from tests.synthetic_events import call_started


@pytest.fixture
def ollama() -> Iterator[str]:
    """A stand-in Ollama answering `/api/tags` on 127.0.0.1."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_GET(self) -> None:
            body = json.dumps({"models": [{"name": "llama3.1:8b"}, {"name": "qwen2.5:7b"}]})
            status = 200 if self.path == "/api/tags" else 404
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body.encode())

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_litellm_names_come_from_the_bundled_map() -> None:
    names = litellm_model_names(DEFAULT_MODEL)
    assert names[0] == "openai/gpt-5-mini"
    assert "anthropic/claude-haiku-4-5" in names
    assert "gemini/gemini-2.5-flash" in names
    assert len(names) == len(set(names)) > 500


def test_ollama_tags_become_ollama_chat_names(ollama: str) -> None:
    assert discover_ollama(ollama) == ["ollama_chat/llama3.1:8b", "ollama_chat/qwen2.5:7b"]


def test_openai_compatible_models(scripted_server: ScriptedServer) -> None:
    assert discover_openai_compatible(scripted_server.base_url) == ["openai/test-model"]


def test_unreachable_server_says_what_to_check() -> None:
    with pytest.raises(DiscoveryError, match="is the server running"):
        discover_ollama("http://127.0.0.1:9", timeout_s=2)


def test_pickers_list_local_models_first(
    window: MainWindow, qtbot: QtBot, scripted_server: ScriptedServer, ollama: str
) -> None:
    window.prefs.set_base_url("local", scripted_server.base_url)
    window.prefs.set_base_url("ollama", ollama)
    future = asyncio.ensure_future(window.starter.refresh_models())
    qtbot.waitUntil(future.done, timeout=10_000)
    names = window.workspace.controls.model_names.stringList()
    assert names[:3] == ["openai/test-model", "ollama_chat/llama3.1:8b", "ollama_chat/qwen2.5:7b"]
    completer = window.workspace.controls.model.completer()
    completer.setCompletionPrefix("qwen")
    assert completer.currentCompletion() == "ollama_chat/qwen2.5:7b"


GGUF = "/tmp/models/gemma-3-270m-q4_k_m.gguf"
SHORT = "gemma-3-270m-q4_k_m"


def test_a_model_listed_by_path_shows_its_short_name_and_sends_its_id(
    window: MainWindow, qtbot: QtBot, scripted_server: ScriptedServer
) -> None:
    scripted_server.models = (GGUF,)
    window.prefs.set_base_url("local", scripted_server.base_url)
    future = asyncio.ensure_future(window.starter.refresh_models())
    qtbot.waitUntil(future.done, timeout=10_000)
    controls, model = window.workspace.controls, f"openai/{GGUF}"
    picker = controls.model

    index = picker.findData(model)
    assert picker.itemText(index) == SHORT
    picker.setCurrentIndex(index)
    assert (picker.currentText(), picker.toolTip()) == (SHORT, model)
    assert controls.request().model == model
    assert controls.defaults().model == model
    completer = picker.completer()
    completer.setCompletionPrefix("gemma")
    assert completer.currentCompletion() == SHORT
    assert controls.model_names.stringList()[0] == model

    controls.apply_defaults(dataclasses.replace(controls.defaults(), sub_model=model))
    assert (controls.sub_model.currentText(), controls.request().sub_model) == (SHORT, model)
    picker.setEditText("openai/gpt-5-mini")
    assert (controls.request().model, picker.toolTip()) == ("openai/gpt-5-mini", "")


def test_two_paths_with_one_file_name_show_whole(qtbot: QtBot) -> None:
    controls = RunControls()
    qtbot.addWidget(controls)
    models = ["openai//a/x.gguf", "openai//b/x.gguf", f"openai/{GGUF}"]
    controls.set_model_names(models)
    shown = [controls.model.itemText(i) for i in range(controls.model.count())]
    assert shown == ["openai//a/x.gguf", "openai//b/x.gguf", SHORT]


def test_the_tree_names_a_call_by_its_model_s_short_name(qapp: object) -> None:
    tree = CallTreeModel()
    tree.apply_events([call_started("r", "root", None, kind="rlm", model=f"openai/{GGUF}")])
    column = next(n for n, c in enumerate(COLUMNS) if c.title == "Model")
    assert tree.data(tree.index(0, column)) == SHORT


def test_hosted_models_are_listed_only_for_providers_with_a_key(
    window: MainWindow, qtbot: QtBot, scripted_server: ScriptedServer
) -> None:
    from rlm_desktop.providers import keys

    window.prefs.set_base_url("local", scripted_server.base_url)
    future = asyncio.ensure_future(window.starter.refresh_models())
    qtbot.waitUntil(future.done, timeout=10_000)
    assert window.workspace.controls.model_names.stringList() == ["openai/test-model"]

    keys.set_key("anthropic", "sk-ant-test")  # into the test's in-memory keyring
    future = asyncio.ensure_future(window.starter.refresh_models())
    qtbot.waitUntil(future.done, timeout=10_000)
    names = window.workspace.controls.model_names.stringList()
    assert names[0] == "openai/test-model"
    assert "anthropic/claude-haiku-4-5" in names
    assert not any(name.startswith(("gemini/", "openrouter/")) for name in names[1:])
    assert "openai/gpt-5-mini" not in names  # OpenAI has no key


def test_with_nothing_set_up_every_model_is_listed(window: MainWindow, qtbot: QtBot) -> None:
    future = asyncio.ensure_future(window.starter.refresh_models())
    qtbot.waitUntil(future.done, timeout=10_000)
    names = window.workspace.controls.model_names.stringList()
    assert names[0] == "openai/gpt-5-mini"
    assert len(names) > 500
