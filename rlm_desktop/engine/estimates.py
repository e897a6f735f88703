"""Token estimates for budget reservations, with the model's bundled tiktoken encoding."""

from __future__ import annotations

from functools import lru_cache

from rlm_desktop.engine.encodings import encoded_length, tokenizer_for

EXACT_LIMIT_CHARS = 200_000
SAFETY_MARGIN = 1.15
MESSAGE_OVERHEAD = 8
REMEMBERED_CHARS = 32_000
REMEMBERED_TEXTS = 1024
"""At most ~32 MB of remembered texts, most of them still held by some call's history anyway."""


def estimate_tokens(text: str, model: str) -> int:
    """An upper-leaning token count: the model's encoding for normal sizes, a byte-based bound for
    huge texts (or when no encoding is available).

    Providers' tokenizers differ from tiktoken's, so the count carries a safety margin; the ledger
    settles to the provider's real usage when the reply comes back. An RLM call sends its whole
    history at every turn, so texts up to `REMEMBERED_CHARS` are counted once and remembered.
    """
    if len(text) <= REMEMBERED_CHARS:
        return _remembered_estimate(text, model)
    return _estimate(text, model)


@lru_cache(maxsize=REMEMBERED_TEXTS)
def _remembered_estimate(text: str, model: str) -> int:
    return _estimate(text, model)


def _estimate(text: str, model: str) -> int:
    encoding, _own = tokenizer_for(model) if len(text) <= EXACT_LIMIT_CHARS else (None, False)
    if encoding is not None:
        count = encoded_length(encoding, text)
    else:
        count = len(text.encode("utf-8", "replace")) // 3
    return int(count * SAFETY_MARGIN) + 1


def estimate_messages(messages: list[dict[str, str]], model: str) -> int:
    """Estimated input tokens of a chat request to `model`."""
    return sum(estimate_tokens(m.get("content") or "", model) + MESSAGE_OVERHEAD for m in messages)
