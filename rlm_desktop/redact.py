"""Keep secrets out of what is shown, stored or handed to a model.

One scrubber for the engine and the store (neither imports the other's): a provider's error text
can echo the key it was sent, and model-written code can print one. The engine scrubs provider
errors before they become text (messages, events, the model's REPL); the store scrubs every string
before it is written. What is replaced: the run's own API key, the values of secret-looking
environment variables, and the value of anything that looks like an `Authorization` header or an
`api_key=` assignment.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from typing import Any

REDACTED = "[redacted]"
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH", re.IGNORECASE)
_MIN_SECRET_LEN = 10
_HEADER = re.compile(
    r"(?i)\b(authorization|proxy-authorization|x-api-key|api[-_]?key)"
    r"([\"']?\s*[:=]\s*[\"']?)"
    r"((?:bearer|basic|token)\s+[^\s\"',;}\]]+|(?=[^\s\"',;}\]]*\d)[A-Za-z0-9._~+/=-]{8,})"
)
_HINT = re.compile(r"(?i)uthoriz|pi[-_]?key|earer")
_HINT_WORDS = ("uthoriz", "earer", "pikey", "pi-key", "pi_key")
_HINT_BYTES = tuple(word.encode("ascii") for word in _HINT_WORDS)
# Letters outside ASCII that a case-blind `re` match takes for one of the hint words' letters
# (`İ` and `ı` for i, the Kelvin sign for k) but `str.lower` does not turn into them.
_CASE_BLIND_EXTRAS = ("\u0130", "\u0131", "\u212a")


def may_hold_header(value: str) -> bool:
    """Whether `value` has one of the words a header-like secret starts with, in any case:
    what `_HINT.search` says, by substring searches over a lowered copy (about 15 times as fast
    on a long document: a case-blind `re` search gets no literal prefix to skip by)."""
    if value.isascii():
        lowered = value.encode("ascii").lower()
        return any(word in lowered for word in _HINT_BYTES)
    if any(letter in value for letter in _CASE_BLIND_EXTRAS):
        return _HINT.search(value) is not None
    lowered_text = value.lower()
    return any(word in lowered_text for word in _HINT_WORDS)


def _redact_header(match: re.Match[str]) -> str:
    parts = match.group(3).split(None, 1)
    scheme = parts[0] + " " if len(parts) == 2 else ""
    return match.group(1) + match.group(2) + scheme + REDACTED


def environment_secrets(environ: dict[str, str] | None = None) -> list[str]:
    """Values of environment variables whose names say they hold a secret."""
    env = os.environ if environ is None else environ
    return [
        value
        for name, value in env.items()
        if _SECRET_NAME.search(name)
        and len(value) >= _MIN_SECRET_LEN
        and not value.startswith(("/", "~", "."))
    ]


class Redactor:
    """Replaces known secrets and header-like values in strings and nested JSON data."""

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        found = {s for s in secrets if s and len(s) >= 4}
        self._secrets = sorted(found, key=len, reverse=True)

    @classmethod
    def for_run(cls, api_key: str | None = None, extra: Iterable[str | None] = ()) -> Redactor:
        """A redactor for the run's own key (and `extra` secrets) plus the environment's."""
        return cls([api_key, *extra, *environment_secrets()])

    def text(self, value: str) -> str:
        """`value` with every secret replaced by `[redacted]`."""
        for secret in self._secrets:
            if secret in value:
                value = value.replace(secret, REDACTED)
        if may_hold_header(value):
            value = _HEADER.sub(_redact_header, value)
        return value

    def leaves_alone(self, value: str) -> bool:
        """Whether `text(value)` is `value` itself: no secret in it, no word a header-like one
        starts with. True for a string says the same of every substring of it."""
        return not any(secret in value for secret in self._secrets) and not may_hold_header(value)

    def data(self, value: Any) -> Any:
        """A copy of JSON-like `value` with every string scrubbed."""
        if isinstance(value, str):
            return self.text(value)
        if value is None or isinstance(value, int | float):
            return value
        if isinstance(value, dict):
            return {key: self.data(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [self.data(item) for item in value]
        return value
