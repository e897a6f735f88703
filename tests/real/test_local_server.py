"""What the app reads of a real local server: the model it lists, and the pre-flight check."""

from __future__ import annotations

import asyncio
import json
import urllib.request
from pathlib import Path

import pytest

from rlm_desktop.engine.config import RunConfig
from rlm_desktop.engine.llm import Credentials
from rlm_desktop.engine.preflight import preflight
from rlm_desktop.engine.run_choices import RunChoices, build_run_config
from rlm_desktop.providers import catalog
from rlm_desktop.providers.server_facts import LLAMA_CPP_PYTHON, server_facts
from tests.real.conftest import rlm_desktop
from tests.real.report import Report
from tests.real.server import LocalServer, listed_models

pytestmark = pytest.mark.real


def run_on(server: LocalServer) -> RunConfig:
    """A run of the model the server lists, at the server."""
    return build_run_config(RunChoices(query="q", model=server.model, api_base=server.base_url))


def test_the_app_lists_the_model_the_server_serves(local_server: LocalServer) -> None:
    assert listed_models(local_server.base_url) == [local_server.model_id]
    assert catalog.discover_openai_compatible(local_server.base_url) == [local_server.model]


def test_the_server_is_known_for_what_it_is_and_says_no_window(local_server: LocalServer) -> None:
    """llama-cpp-python lists its models as owned by "me" and has no `/props`: it is known, so
    its grammar can be used, and no window is made up for it."""
    facts = server_facts(local_server.base_url, [local_server.model])
    assert (facts.software, facts.windows) == (LLAMA_CPP_PYTHON, {})


async def test_preflight_passes_for_the_listed_model(local_server: LocalServer) -> None:
    assert await preflight(run_on(local_server), Credentials()) == []


def test_a_model_the_server_does_not_serve_is_named_with_the_one_it_does(
    local_server: LocalServer, real_home: Path, tmp_path: Path
) -> None:
    document = tmp_path / "note.txt"
    document.write_text("The meeting is on Tuesday.\n", encoding="utf-8")
    done = rlm_desktop(
        real_home, "run", "--model", "openai/gemma-3-270m", "--api-base", local_server.base_url,
        "--doc", str(document), "--query", "When is the meeting?", timeout=60,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.splitlines()
    assert (
        f"is not served at {local_server.base_url}; pick one it lists: {local_server.model}" in line
    )


def _generate(server: LocalServer, max_tokens: int) -> None:
    body = {
        "model": server.model_id,
        "messages": [{"role": "user", "content": "Count from one to one hundred in words."}],
        "max_tokens": max_tokens,
    }
    request = urllib.request.Request(
        f"{server.base_url}/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=120) as reply:
        reply.read()


async def test_a_server_busy_generating_is_not_read_as_down(
    local_server: LocalServer, report: Report
) -> None:
    generating = asyncio.create_task(asyncio.to_thread(_generate, local_server, 160))
    await asyncio.sleep(2)
    try:
        problems = await preflight(run_on(local_server), Credentials())
    finally:
        await generating
    report.write(f"\npre-flight while the server generates: {[p.message for p in problems]}")
    assert not [p.message for p in problems if "is the server running" in p.message]
