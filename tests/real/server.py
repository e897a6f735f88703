"""llama.cpp's OpenAI-compatible server (llama-cpp-python) on a free port of 127.0.0.1, as a user
with a local model starts it, with the GGUF that `tools/real-model` assembled."""

from __future__ import annotations

import ctypes
import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from tests.cli import ROOT

REAL_VENV = ROOT / os.environ.get("RLM_REAL_VENV", ".venv-real")
"""Where `tools/real-model` installed the server, with the model under `models/`."""
CONTEXT_TOKENS = 32_768
SEED = 42
"""A fixed sampling seed: the same suite, in the same order, draws the same replies."""
START_TIMEOUT_S = 180.0
_PR_SET_PDEATHSIG = 1


@dataclass(frozen=True)
class LocalServer:
    """A running server: where it answers, the model id it lists, and its log."""

    base_url: str
    """The API base a user gives the app, ending in /v1."""
    model_id: str
    """The one model `/v1/models` lists (llama-cpp-python lists the GGUF's path)."""
    process: subprocess.Popen[bytes]
    log: Path

    @property
    def model(self) -> str:
        """The model as the app is told it: `openai/` and the listed id."""
        return f"openai/{self.model_id}"

    def stop(self) -> None:
        """End the server and wait for it."""
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def model_file(venv: Path = REAL_VENV) -> Path:
    """The GGUF `tools/real-model` assembled; a clear failure when it has not run."""
    found = sorted((venv / "models").glob("*.gguf"))
    if not found:
        raise FileNotFoundError(f"no model in {venv}/models: run `make test-real`")
    return found[0]


def server_command(model: Path, port: int, venv: Path = REAL_VENV) -> list[str]:
    """The server's command line: the GGUF's own chat template (no --chat_format), a 32,768-token
    window, and no logits kept for every position (by default it allocates 32 GiB for them)."""
    return [
        str(venv / "bin" / "python"), "-m", "llama_cpp.server",
        "--model", str(model),
        "--host", "127.0.0.1",
        "--port", str(port),
        "--n_ctx", str(CONTEXT_TOKENS),
        "--logits_all", "False",
        "--seed", str(SEED),
    ]  # fmt: skip


def start_server(log: Path, venv: Path = REAL_VENV) -> LocalServer:
    """Start the server, its output in `log`, and wait until `/v1/models` answers."""
    port = _free_port()
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("wb") as output:
        process = subprocess.Popen(
            server_command(model_file(venv), port, venv),
            stdout=output,
            stderr=subprocess.STDOUT,
            preexec_fn=_end_with_parent,
        )
    base_url = f"http://127.0.0.1:{port}/v1"
    server = LocalServer(base_url, "", process, log)
    try:
        model_id = _wait_for_models(server)
    except BaseException:
        server.stop()
        raise
    return LocalServer(base_url, model_id, process, log)


def listed_models(base_url: str, timeout_s: float = 5.0) -> list[str]:
    """The ids `/v1/models` lists."""
    with urllib.request.urlopen(f"{base_url}/models", timeout=timeout_s) as reply:
        return [entry["id"] for entry in json.load(reply)["data"]]


def _wait_for_models(server: LocalServer) -> str:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            tail = server.log.read_text(errors="replace")[-2000:]
            raise RuntimeError(f"the server exited ({server.process.returncode}):\n{tail}")
        try:
            (model_id,) = listed_models(server.base_url, timeout_s=2.0)
        except OSError:
            time.sleep(0.5)
            continue
        return model_id
    raise TimeoutError(f"the server did not answer /v1/models within {START_TIMEOUT_S:.0f} s")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _end_with_parent() -> None:
    """In the child: Linux ends the server when the test process dies without stopping it."""
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
