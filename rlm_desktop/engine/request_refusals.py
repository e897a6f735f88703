"""Provider errors that say the request itself is invalid, though their status says "try again".

A 4xx other than the rate and timing ones is never retried (`llm.RETRYABLE_STATUS`). But some
local servers answer a request their chat template refuses with HTTP 500: llama.cpp's server
(`{"code": 500, "message": "Conversation roles must alternate user/assistant/user/assistant/...
at row 19, column 27: ...", "type": "server_error"}`, or, with its newer template engine, "...
Error: Jinja Exception: After the optional system message, conversation roles must alternate ...")
and llama-cpp-python (the template's text as an `internal_server_error`). The same request gets
the same refusal however often it is sent, so such a 500 is not retried. It is told by a short
list of phrases that templates' own `raise_exception` calls and llama.cpp's template engine
write; anything else a 500 says is retried as before.
"""

from __future__ import annotations

INVALID_REQUEST_PHRASES = (
    "roles must alternate",  # Gemma's, Mistral's and Llama 2's templates
    "system role not supported",  # Gemma 1 and 2's templates
    "only user and assistant roles are supported",  # Mistral's first templates
    "jinja exception",  # llama.cpp: any template's raise_exception
)
SERVER_ERROR = 500


def refuses_the_request(status: int | None, text: str) -> bool:
    """True for an HTTP 500 whose `text` (the provider's error) says the request itself is invalid:
    a chat template that refused its messages."""
    if status != SERVER_ERROR:
        return False
    said = " ".join(text.split()).lower()
    return any(phrase in said for phrase in INVALID_REQUEST_PHRASES)
