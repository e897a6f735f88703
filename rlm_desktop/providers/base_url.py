"""An OpenAI-compatible server's base URL: the server's root, and the `/v1` it usually ends in.

An OpenAI-compatible API lives under `/v1` on most local servers (llama.cpp, llama-cpp-python,
vLLM, LM Studio, Ollama's compatibility layer); their own endpoints (`/props`, `/api/...`) sit at
the root. A base URL given without its `/v1` gets "HTTP 404: Not Found" for every request, which
says nothing of the fix, so the fix is said here once.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

V1 = "/v1"


def server_root(api_base: str) -> str:
    """The server without its API path: `http://h:8000/v1/` -> `http://h:8000`."""
    base = api_base.strip().rstrip("/")
    return base.removesuffix(V1).rstrip("/")


def lacks_v1(api_base: str) -> bool:
    """True for a web address whose path is empty, as `http://127.0.0.1:8000`: the `/v1` an
    OpenAI-compatible server's API lives under is probably missing."""
    try:
        parts = urlsplit(api_base.strip())
    except ValueError:
        return False
    return bool(parts.scheme and parts.netloc) and parts.path.strip("/") == ""


def with_v1(api_base: str) -> str:
    """`api_base` with `/v1` for a path (and without a query or fragment)."""
    parts = urlsplit(api_base.strip())
    return urlunsplit((parts.scheme, parts.netloc, V1, "", ""))


def try_v1(api_base: str | None, status: int | None) -> str:
    """The advice for a 404 from a base URL without a path ("" when it does not apply)."""
    if status != 404 or not api_base or not lacks_v1(api_base):
        return ""
    return f"the API base {api_base.strip()} has no /v1: try {with_v1(api_base)}"
