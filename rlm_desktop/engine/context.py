"""The documents as the engine sees them: text plus the metadata shown to the model."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ContextDocument:
    """One loaded document. `tokens` is the loader's count (or estimate) when it has one."""

    name: str
    text: str
    path: str = ""
    tokens: int | None = None

    def meta(self) -> dict[str, object]:
        """The `context_meta` entry the model sees for this document."""
        return {
            "name": self.name,
            "path": self.path,
            "chars": len(self.text),
            "tokens": self.tokens,
        }
