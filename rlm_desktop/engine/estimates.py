"""Token estimates for budget reservations, with the model's bundled tiktoken encoding."""

from __future__ import annotations

from rlm_desktop.engine.encodings import encoded_length, tokenizer_for

EXACT_LIMIT_CHARS = 200_000
SAFETY_MARGIN = 1.15
MESSAGE_OVERHEAD = 8


def estimate_tokens(text: str, model: str) -> int:
    """An upper-leaning token count: the model's encoding for normal sizes, a byte-based bound for
    huge texts (or when no encoding is available).

    Providers' tokenizers differ from tiktoken's, so the count carries a safety margin; the ledger
    settles to the provider's real usage when the reply comes back.
    """
    encoding, _own = tokenizer_for(model) if len(text) <= EXACT_LIMIT_CHARS else (None, False)
    if encoding is not None:
        count = encoded_length(encoding, text)
    else:
        count = len(text.encode("utf-8", "replace")) // 3
    return int(count * SAFETY_MARGIN) + 1


def estimate_messages(messages: list[dict[str, str]], model: str) -> int:
    """Estimated input tokens of a chat request to `model`."""
    return sum(estimate_tokens(m.get("content") or "", model) + MESSAGE_OVERHEAD for m in messages)
