"""Token estimates for budget reservations, from litellm's bundled tiktoken encoding."""

from __future__ import annotations

from functools import cache
from typing import Any

from rlm_desktop.engine.litellm_loader import load_litellm

EXACT_LIMIT_CHARS = 200_000
SAFETY_MARGIN = 1.15
MESSAGE_OVERHEAD = 8


@cache
def _encoding() -> Any:
    load_litellm()
    from litellm.litellm_core_utils.default_encoding import encoding

    return encoding


def estimate_tokens(text: str) -> int:
    """An upper-leaning token count: tiktoken for normal sizes, a byte-based bound for huge texts.

    Providers' tokenizers differ from tiktoken's, so the count carries a safety margin; the ledger
    settles to the provider's real usage when the reply comes back.
    """
    if len(text) <= EXACT_LIMIT_CHARS:
        count = len(_encoding().encode(text, disallowed_special=()))
    else:
        count = len(text.encode("utf-8", "replace")) // 3
    return int(count * SAFETY_MARGIN) + 1


def estimate_messages(messages: list[dict[str, str]]) -> int:
    """Estimated input tokens of a chat request."""
    return sum(estimate_tokens(m.get("content") or "") + MESSAGE_OVERHEAD for m in messages)
