"""Pre-flight: bad model strings, an endpoint that does not answer or does not serve the model,
and a missing key are each one problem naming the fix, found before any request is sent."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable, Iterator

import pytest

from rlm_desktop.engine import Credentials, RunConfig
from rlm_desktop.engine.preflight import EndpointUnreachable, PreflightProblem, preflight
from tests.engine.scripting import QUERY, TEST_MODEL, UNKNOWN_HOST_URL, closed_port_url
from tests.scripted_server import ScriptedServer

NO_KEY = Credentials()
A_KEY = Credentials(api_key="sk-test")


def config(**settings: object) -> RunConfig:
    return RunConfig(query=QUERY, **settings)  # type: ignore[arg-type]


@pytest.fixture
def many_models() -> Iterator[ScriptedServer]:
    """A server that lists seven models."""
    server = ScriptedServer(models=tuple(f"model-{i}" for i in range(7))).start()
    yield server
    server.stop()


async def test_a_served_model_is_good_to_go_and_nothing_is_sent(
    scripted_server: ScriptedServer,
) -> None:
    settings = config(model=TEST_MODEL, sub_model=TEST_MODEL, api_base=scripted_server.base_url)
    assert await preflight(settings, NO_KEY) == []
    assert scripted_server.chat_requests() == []


@pytest.mark.parametrize(
    ("model", "sub_model", "setting", "says"),
    [
        (
            TEST_MODEL,
            "Summarise each chunk in one line, then list the totals",
            "sub_model",
            "sub_model 'Summarise each chunk in one line, then…' is a sentence, not a model name: "
            "name a litellm model, e.g. openai/gpt-5-mini",
        ),
        ("openai/test-model\nplease", None, "model", "model 'openai/test-model please' is a"),
        ("openai/test-model,", None, "model", "model 'openai/test-model,' is not a model name"),
        ("  ", None, "model", "model is empty: name a model, e.g. openai/gpt-5-mini"),
        (
            TEST_MODEL,
            " openai/test-model\n",
            "sub_model",
            "sub_model 'openai/test-model' has spaces around it: remove them",
        ),
    ],
    ids=["sentence-as-sub-model", "newline", "punctuation", "empty", "spaces-around"],
)
async def test_a_string_that_is_not_a_model_name_is_one_problem(
    scripted_server: ScriptedServer, model: str, sub_model: str | None, setting: str, says: str
) -> None:
    settings = config(model=model, sub_model=sub_model, api_base=scripted_server.base_url)
    (problem,) = await preflight(settings, NO_KEY)
    assert problem.setting == setting
    assert problem.message.startswith(says)
    assert scripted_server.chat_requests() == []


@pytest.mark.parametrize(
    ("model", "says"),
    [
        (
            "acme/gpt-5-mini",
            "model 'acme/gpt-5-mini' does not start with a provider litellm knows: "
            "write provider/model, e.g. openai/gpt-5-mini",
        ),
        (
            "gtp-5-mini",
            "model 'gtp-5-mini' is not a model litellm knows: add its provider, "
            "e.g. openai/gtp-5-mini or ollama_chat/gtp-5-mini",
        ),
    ],
    ids=["unknown-prefix", "unknown-bare-name"],
)
async def test_without_a_base_url_a_model_needs_a_provider_litellm_knows(
    model: str, says: str
) -> None:
    assert await preflight(config(model=model), A_KEY) == [PreflightProblem("model", says)]


@pytest.mark.parametrize(
    "model",
    ["openai/gpt-5-mini", "gpt-5-mini", "anthropic/claude-sonnet-4-5", "deepseek/deepseek-chat"],
    ids=["prefixed", "bare-name-litellm-prices", "another-provider", "prefix-only-litellm-lists"],
)
async def test_models_litellm_can_route_pass(model: str) -> None:
    assert await preflight(config(model=model), A_KEY) == []


async def test_a_provider_only_litellm_lists_passes_at_a_server(
    scripted_server: ScriptedServer,
) -> None:
    settings = config(model="hosted_vllm/test-model", api_base=scripted_server.base_url)
    assert await preflight(settings, NO_KEY) == []


async def test_a_model_the_server_does_not_list_names_some_it_does(
    many_models: ScriptedServer,
) -> None:
    settings = config(
        model="openai/model-0", sub_model="openai/gpt-4o", api_base=many_models.base_url
    )
    (problem,) = await preflight(settings, NO_KEY)
    assert problem == PreflightProblem(
        "sub_model",
        f"sub_model 'openai/gpt-4o' is not served at {many_models.base_url}; pick one it lists: "
        "openai/model-0, openai/model-1, openai/model-2, openai/model-3, openai/model-4 "
        "and 2 more",
    )


async def test_a_listed_name_without_its_prefix_is_told_how_to_write_it(
    scripted_server: ScriptedServer,
) -> None:
    settings = config(model="test-model", api_base=scripted_server.base_url)
    assert await preflight(settings, NO_KEY) == [
        PreflightProblem(
            "model", "model 'test-model' needs a provider prefix: write it as openai/test-model"
        )
    ]


async def test_an_ollama_model_is_looked_up_in_the_servers_tags(
    scripted_server: ScriptedServer,
) -> None:
    """`ollama_chat/test-model` is `test-model:latest` to Ollama; `llama3` is not pulled."""
    scripted_server.models = ("test-model:latest", "qwen2.5:7b")
    base = scripted_server.root_url
    assert await preflight(config(model="ollama_chat/test-model", api_base=base), NO_KEY) == []
    (problem,) = await preflight(config(model="ollama_chat/llama3", api_base=base), NO_KEY)
    assert problem.setting == "model"
    assert problem.message.endswith(
        "pick one it lists: ollama_chat/test-model:latest, ollama_chat/qwen2.5:7b"
    )


@pytest.mark.parametrize(
    ("make_url", "address"),
    [(closed_port_url, None), (lambda: UNKNOWN_HOST_URL, "nonexistent.invalid:80")],
    ids=["refused", "unknown-host"],
)
async def test_an_endpoint_that_cannot_be_reached_is_a_problem_on_api_base(
    make_url: Callable[[], str], address: str | None
) -> None:
    url = make_url()
    address = address or url.removeprefix("http://").removesuffix("/v1")
    problems = await preflight(config(model=TEST_MODEL, api_base=url), NO_KEY)
    assert problems == [
        EndpointUnreachable("api_base", f"cannot connect to {address} — is the server running?")
    ]


async def test_a_server_that_takes_the_connection_and_never_answers_is_busy() -> None:
    """The listing is asked in a thread: the loop accepts the connection while preflight waits."""
    loop = asyncio.get_running_loop()
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.setblocking(False)
        port = listener.getsockname()[1]
        settings = config(model=TEST_MODEL, api_base=f"http://127.0.0.1:{port}/v1")
        checking = asyncio.ensure_future(preflight(settings, NO_KEY, timeout_s=1))
        connection, _peer = await asyncio.wait_for(loop.sock_accept(listener), 10)
        with connection:
            assert not checking.done()
            problems = await checking
    assert problems == [
        EndpointUnreachable(
            "api_base",
            f"the server at 127.0.0.1:{port} accepted the connection but has not answered in "
            "1 s: it is probably still generating (a previous run's reply?) — wait, or restart it",
        )
    ]


async def test_a_busy_server_is_not_said_to_be_down(scripted_server: ScriptedServer) -> None:
    scripted_server.busy = True
    settings = config(model=TEST_MODEL, api_base=scripted_server.base_url)
    (problem,) = await preflight(settings, NO_KEY, timeout_s=0.5)
    assert isinstance(problem, EndpointUnreachable)
    assert "has not answered in 0.5 s: it is probably still generating" in problem.message
    assert "is the server running" not in problem.message


async def test_a_base_url_without_v1_is_told_to_add_it(scripted_server: ScriptedServer) -> None:
    """llama-cpp-python serves its API only under /v1: without it, every request is a 404."""
    scripted_server.v1_only = True
    root = scripted_server.root_url
    problems = await preflight(config(model=TEST_MODEL, api_base=root), NO_KEY)
    assert problems == [
        PreflightProblem(
            "api_base",
            f"api_base {root} answers HTTP 404 for its model list, and {root}/v1 lists models: "
            f"write it as {root}/v1",
        )
    ]
    assert await preflight(config(model=TEST_MODEL, api_base=f"{root}/v1"), NO_KEY) == []


@pytest.mark.parametrize(
    ("api_base", "says"),
    [
        (
            "localhost:8000",
            "api_base 'localhost:8000' is not a web address: write it as http://HOST:PORT/v1",
        ),
        (
            "http://127.0.0.1:8000/v1 ",
            "api_base 'http://127.0.0.1:8000/v1' has spaces around it: remove them",
        ),
    ],
    ids=["no-scheme", "spaces-around"],
)
async def test_a_base_url_that_is_not_a_web_address_is_bad_input(api_base: str, says: str) -> None:
    (problem,) = await preflight(config(model=TEST_MODEL, api_base=api_base), NO_KEY)
    assert not isinstance(problem, EndpointUnreachable)
    assert problem == PreflightProblem("api_base", says)


async def test_a_provider_that_needs_a_key_gets_one() -> None:
    assert await preflight(config(model="openai/gpt-5-mini"), NO_KEY) == [
        PreflightProblem("api_key", "OpenAI needs an API key: set OPENAI_API_KEY")
    ]
    assert await preflight(config(model="anthropic/claude-sonnet-4-5"), NO_KEY) == [
        PreflightProblem("api_key", "Anthropic needs an API key: set ANTHROPIC_API_KEY")
    ]
    assert await preflight(config(model="ollama_chat/llama3.1"), NO_KEY) == []


async def test_a_local_server_needs_no_key_but_one_it_refuses_is_a_problem() -> None:
    server = ScriptedServer(listing_key="sk-server").start()
    try:
        settings = config(model=TEST_MODEL, api_base=server.base_url)
        assert await preflight(settings, Credentials(api_key="sk-server")) == []
        address = server.root_url.removeprefix("http://")
        assert await preflight(settings, NO_KEY) == [
            PreflightProblem(
                "api_key",
                f"the server at {address} refused the API key (HTTP 401): "
                "set LOCAL_LLM_API_KEY to the server's key",
            )
        ]
    finally:
        server.stop()


async def test_a_sub_model_of_another_keyed_provider_would_get_the_wrong_key() -> None:
    settings = config(model="anthropic/claude-sonnet-4-5", sub_model="openai/gpt-5-nano")
    assert await preflight(settings, A_KEY) == [
        PreflightProblem(
            "sub_model",
            "sub_model 'openai/gpt-5-nano' is served by OpenAI, but a run sends one key, "
            "Anthropic's: pick a sub_model that Anthropic serves",
        )
    ]
    same = config(model="anthropic/claude-sonnet-4-5", sub_model="anthropic/claude-haiku-4-5")
    assert await preflight(same, A_KEY) == []


def test_a_problem_can_name_its_setting_the_callers_way() -> None:
    problem = PreflightProblem("sub_model", "sub_model 'x y' is a sentence, not a model name")
    assert problem.worded({"sub_model": "--sub-model"}) == (
        "--sub-model 'x y' is a sentence, not a model name"
    )
    unreachable = EndpointUnreachable("api_base", "cannot connect to h:1 — is the server running?")
    assert unreachable.worded({"api_base": "--api-base"}) == unreachable.message


async def test_an_empty_sub_model_means_the_root_model(scripted_server: ScriptedServer) -> None:
    settings = config(model=TEST_MODEL, sub_model="", api_base=scripted_server.base_url)
    assert await preflight(settings, NO_KEY) == []


async def test_a_server_that_lists_no_models_says_to_load_one(
    scripted_server: ScriptedServer,
) -> None:
    scripted_server.models = ()
    settings = config(model=TEST_MODEL, api_base=scripted_server.base_url)
    assert await preflight(settings, NO_KEY) == [
        PreflightProblem(
            "model",
            f"model 'openai/test-model' is not served at {scripted_server.base_url}, "
            "which lists no models: load or pull one on the server first",
        )
    ]
