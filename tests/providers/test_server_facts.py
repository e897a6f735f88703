"""What a local server says of its models' windows, read from each kind of server over HTTP."""

from __future__ import annotations

from typing import Any

import pytest

from rlm_desktop.providers.server_facts import (
    LLAMA_CPP,
    LLAMA_CPP_PYTHON,
    LM_STUDIO,
    OLLAMA,
    VLLM,
    Window,
    context_windows,
    server_facts,
)
from tests.engine.scripting import closed_port_url
from tests.scripted_server import Garbage, ScriptedServer

GGUF = "/tmp/models/gemma-3-270m-q4_k_m.gguf"
LLAMA_CPP_PROPS = {
    "default_generation_settings": {"id": 0, "n_ctx": 32768, "params": {"n_predict": -1}},
    "total_slots": 1,
    "model_path": GGUF,
    "chat_template": "{{ messages }}",
}


def test_llama_cpp_says_its_slot_window_in_props(scripted_server: ScriptedServer) -> None:
    scripted_server.models = (GGUF,)
    scripted_server.routes["/props"] = LLAMA_CPP_PROPS
    model = f"openai/{GGUF}"
    assert context_windows(scripted_server.base_url, [model]) == {
        model: Window(32768, "llama.cpp /props")
    }


def test_vllm_says_max_model_len_in_its_listing(scripted_server: ScriptedServer) -> None:
    scripted_server.routes["/v1/models"] = {
        "object": "list",
        "data": [
            {"id": "Qwen/Qwen2.5-7B-Instruct", "object": "model", "max_model_len": 16384},
            {"id": "other", "object": "model"},
        ],
    }
    models = ["openai/Qwen/Qwen2.5-7B-Instruct", "openai/other"]
    assert context_windows(scripted_server.base_url, models) == {
        "openai/Qwen/Qwen2.5-7B-Instruct": Window(16384, "/v1/models max_model_len")
    }


def test_lm_studio_says_the_loaded_window_before_the_model_s_own(
    scripted_server: ScriptedServer,
) -> None:
    scripted_server.routes["/api/v0/models"] = {
        "object": "list",
        "data": [
            {
                "id": "qwen2-7b-instruct",
                "state": "loaded",
                "max_context_length": 131072,
                "loaded_context_length": 8192,
            },
            {"id": "phi-3", "state": "not-loaded", "max_context_length": 4096},
        ],
    }
    models = ["openai/qwen2-7b-instruct", "openai/phi-3"]
    assert context_windows(scripted_server.base_url, models) == {
        "openai/qwen2-7b-instruct": Window(8192, "LM Studio /api/v0/models"),
        "openai/phi-3": Window(4096, "LM Studio /api/v0/models"),
    }


@pytest.mark.parametrize(
    ("routes", "window"),
    [
        (
            {
                "/api/ps": {"models": [{"name": "llama3.1:8b", "context_length": 4096}]},
                "/api/show": {"parameters": "num_ctx 8192", "model_info": {}},
            },
            Window(4096, "Ollama /api/ps"),
        ),
        (
            {"/api/show": {"parameters": "stop <|eot|>\nnum_ctx    8192\ntemperature 0.2"}},
            Window(8192, "Ollama /api/show num_ctx"),
        ),
        (
            {
                "/api/show": {
                    "model_info": {
                        "general.architecture": "llama",
                        "llama.context_length": 131072,
                        "llama.embedding_length": 4096,
                    }
                }
            },
            Window(131072, "Ollama /api/show model_info"),
        ),
    ],
    ids=["loaded", "num_ctx", "model_info"],
)
def test_ollama_says_its_window_in_ps_or_show(
    scripted_server: ScriptedServer, routes: dict[str, Any], window: Window
) -> None:
    scripted_server.routes.update(routes)
    model = "ollama_chat/llama3.1:8b"
    assert context_windows(scripted_server.root_url, [model]) == {model: window}
    shown = [body for path, body in scripted_server.route_requests if path == "/api/show"]
    assert shown == [{"model": "llama3.1:8b", "name": "llama3.1:8b"}]


def test_llama_cpp_python_says_nothing_and_nothing_is_assumed(
    scripted_server: ScriptedServer,
) -> None:
    """Its listing names the file, no window; `/props` is not one of its routes (404)."""
    scripted_server.models = (GGUF,)
    assert context_windows(scripted_server.base_url, [f"openai/{GGUF}"]) == {}


@pytest.mark.parametrize(
    "n_ctx",
    ["32768", True, -1, 0, 12.5, 1e300, float("nan"), None, [32768], {"n": 1}],
    ids=repr,
)
def test_a_window_that_is_not_a_plausible_number_is_not_taken(
    scripted_server: ScriptedServer, n_ctx: Any
) -> None:
    scripted_server.routes["/props"] = {"default_generation_settings": {"n_ctx": n_ctx}}
    assert context_windows(scripted_server.base_url, ["openai/test-model"]) == {}


@pytest.mark.parametrize(
    "answer",
    [[1, 2, 3], "a string", {"default_generation_settings": "n_ctx=4096"}, {"data": "x"}],
    ids=["list", "string", "settings-not-a-dict", "data-not-a-list"],
)
def test_a_reply_of_the_wrong_shape_tells_nothing(
    scripted_server: ScriptedServer, answer: Any
) -> None:
    for path in ("/props", "/api/v0/models", "/v1/models"):
        scripted_server.routes[path] = answer
    assert context_windows(scripted_server.base_url, ["openai/test-model"]) == {}


def test_a_huge_reply_is_not_read_whole(scripted_server: ScriptedServer) -> None:
    size = 256 * 1024 * 1024
    scripted_server.routes["/props"] = Garbage(size)
    scripted_server.routes["/v1/models"] = {"data": [{"id": "test-model", "max_model_len": 4096}]}
    found = context_windows(scripted_server.base_url, ["openai/test-model"])
    assert found == {"openai/test-model": Window(4096, "/v1/models max_model_len")}
    assert scripted_server.sent["/props"] < size // 4


def test_a_busy_or_absent_server_tells_nothing(scripted_server: ScriptedServer) -> None:
    scripted_server.routes["/props"] = LLAMA_CPP_PROPS
    scripted_server.busy = True
    assert context_windows(scripted_server.base_url, ["openai/test-model"], timeout_s=0.5) == {}
    assert context_windows(closed_port_url(), ["openai/test-model"]) == {}
    assert context_windows("localhost:8000", ["openai/test-model"]) == {}


def _listing(**entry: Any) -> dict[str, Any]:
    return {"object": "list", "data": [{"id": "test-model", "object": "model", **entry}]}


@pytest.mark.parametrize(
    ("routes", "software"),
    [
        ({"/props": LLAMA_CPP_PROPS}, LLAMA_CPP),
        ({"/v1/models": _listing(owned_by="llamacpp")}, LLAMA_CPP),
        ({"/v1/models": _listing(owned_by="me")}, LLAMA_CPP_PYTHON),
        ({"/v1/models": _listing(owned_by="vllm")}, VLLM),
        ({"/v1/models": _listing(max_model_len=4096)}, VLLM),
        ({"/v1/models": _listing(owned_by="library")}, OLLAMA),
        ({"/api/v0/models": _listing(state="loaded", max_context_length=4096)}, LM_STUDIO),
        ({"/api/v0/models": _listing()}, None),
        ({"/v1/models": _listing(owned_by="openai")}, None),
        ({}, None),
    ],
    ids=[
        "llama.cpp-props", "llama.cpp-owner", "llama-cpp-python", "vllm-owner", "vllm-len",
        "ollama-v1", "lm-studio", "plain-listing-at-lm-studio-s-path", "openai", "nothing",
    ],
)  # fmt: skip
def test_a_server_says_what_software_it_is_in_what_it_answers(
    scripted_server: ScriptedServer, routes: dict[str, Any], software: str | None
) -> None:
    """The scripted server lists its models at any `/models` path, as no real server of these
    does: a listing without LM Studio's own fields is not taken for LM Studio."""
    scripted_server.routes.update(routes)
    assert server_facts(scripted_server.base_url, ["openai/test-model"]).software == software


def test_an_ollama_model_is_served_by_ollama(scripted_server: ScriptedServer) -> None:
    facts = server_facts(scripted_server.root_url, ["ollama_chat/llama3.1:8b"])
    assert facts.software == OLLAMA
