"""Token counts for loaded documents, with the bundled encodings of `engine.tokenizer`.

OpenAI models get their own encoding and exact counts. Other models are counted with cl100k_base,
as litellm itself does, and the count is marked as an estimate. Huge inputs are estimated from
evenly spaced samples.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from rlm_desktop.engine.encodings import encoded_length, tokenizer_for

if TYPE_CHECKING:
    from tiktoken import Encoding

__all__ = ["EXACT_CHARS", "TokenTally", "count_tokens", "encoded_length", "sample", "tokenizer_for"]

EXACT_CHARS = 1_000_000
"""`count_tokens` tokenises texts up to this length exactly, and samples longer ones."""

CHARS_PER_TOKEN = 4.0
"""The rule-of-thumb ratio used when no tokenizer is available at all."""

_SAMPLES = 16
_SAMPLE_CHARS = 4096


def sample(encoding: Encoding, text: str) -> tuple[int, int]:
    """Tokens and characters in evenly spaced windows of a long text (to estimate its ratio).

    Windows grow with the text, from 512 to 4,096 characters each, and are trimmed to whitespace
    so that no word is cut in two (a cut word costs extra tokens and would bias the estimate).
    """
    width = min(_SAMPLE_CHARS, max(512, len(text) // (_SAMPLES * 64)))
    step = max(1, (len(text) - width) // (_SAMPLES - 1))
    tokens = chars = 0
    for start in range(0, max(1, len(text) - width + 1), step)[:_SAMPLES]:
        window = text[start : start + width]
        first, last = window.find(" "), window.rfind(" ")
        if 0 <= first < last:
            window = window[first + 1 : last]
        tokens += len(encoding.encode_ordinary(window))
        chars += len(window)
    return tokens, max(chars, 1)


class TokenTally:
    """Counts tokens over a whole load: exactly within a character budget, then estimated.

    Past the budget, a long document is estimated from samples of itself and a short one from the
    tokens-per-character ratio measured so far for its document type, so a folder of thousands of
    files costs little more than reading them.
    """

    def __init__(self, model: str, exact_chars: int) -> None:
        self._model = model
        self._budget = exact_chars
        self._seen: dict[str, tuple[int, int]] = {}

    def _learn(self, kind: str, tokens: int, chars: int) -> None:
        known = self._seen.get(kind, (0, 0))
        self._seen[kind] = (known[0] + tokens, known[1] + chars)

    def count(self, text: str, kind: str) -> tuple[int, bool]:
        """Tokens in one document's text and whether that number is an estimate."""
        if not text:
            return 0, False
        encoding, own = tokenizer_for(self._model)
        size = len(text)
        if encoding is None:
            return math.ceil(size / CHARS_PER_TOKEN), True
        enough = _SAMPLES * _SAMPLE_CHARS
        known_tokens, known_chars = self._seen.get(kind, (0, 0))
        if size <= self._budget or (size <= enough and known_chars < enough):
            self._budget = max(0, self._budget - size)
            tokens = encoded_length(encoding, text)
            self._learn(kind, tokens, size)
            return tokens, not own
        if size > enough:
            sampled_tokens, sampled_chars = sample(encoding, text)
            self._learn(kind, sampled_tokens, sampled_chars)
            return round(size * sampled_tokens / sampled_chars), True
        return max(1, round(size * known_tokens / known_chars)), True


def count_tokens(text: str, model: str) -> tuple[int, bool]:
    """Tokens in `text` for `model`, and whether that number is an estimate.

    Exact up to `EXACT_CHARS` characters with the model's own encoding; sampled beyond.
    """
    return TokenTally(model, EXACT_CHARS).count(text, "text")
