"""The documents as the engine sees them: text plus the metadata shown to the model."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

PART_KINDS = ("sheet", "slide", "page", "chapter")
"""The kinds of part a document's sections are; `context_meta` lists each under `parts_key`."""


def parts_key(kind: str) -> str:
    """The `context_meta` key a kind of part is listed under: `"sheets"` for `"sheet"`."""
    return f"{kind}s"


@dataclass(frozen=True, slots=True)
class ContextSection:
    """A named part of a document's text: `text[start:end]` is it.

    `kind` is one of `PART_KINDS`. `label` is how people name
    it: a sheet's name, a slide's or page's number, a chapter's title. `title` is a slide's title
    where it has one. `ocr_confidence`, from 0 to 1, is set when the part's text was recognised in
    an image rather than extracted (a scanned page, a photo).
    """

    kind: str
    label: str
    start: int
    end: int
    title: str = ""
    ocr_confidence: float | None = None

    def meta(self) -> dict[str, object]:
        """How `context_meta` lists it: name and offsets, plus title and OCR confidence where
        they apply."""
        entry: dict[str, object] = {"name": self.label, "start": self.start, "end": self.end}
        if self.title:
            entry["title"] = self.title
        if self.ocr_confidence is not None:
            entry["ocr_confidence"] = round(self.ocr_confidence, 3)
        return entry

    def to_json(self) -> dict[str, object]:
        """The section as it is saved with a session."""
        return {
            "kind": self.kind, "label": self.label, "start": self.start, "end": self.end,
            "title": self.title, "ocr_confidence": self.ocr_confidence,
        }  # fmt: skip

    @classmethod
    def from_json(cls, entry: dict[str, Any]) -> ContextSection:
        """A section saved by `to_json`."""
        confidence = entry.get("ocr_confidence")
        return cls(
            str(entry["kind"]), str(entry["label"]), int(entry["start"]), int(entry["end"]),
            str(entry.get("title") or ""), float(confidence) if confidence is not None else None,
        )  # fmt: skip


def sections_from_json(saved: str | list[Any] | None, length: int) -> tuple[ContextSection, ...]:
    """Sections saved with a document (`ContextSection.to_json` each, as JSON text or already
    parsed); those that do not parse, or do not fit in its `length` characters, are dropped
    rather than shown or given to the model."""
    parts: list[ContextSection] = []
    try:
        entries = json.loads(saved) if isinstance(saved, str) else saved
        for entry in entries or []:
            section = ContextSection.from_json(entry)
            if 0 <= section.start <= section.end <= length:
                parts.append(section)
    except (ValueError, TypeError, KeyError, AttributeError):
        return ()
    return tuple(parts)


@dataclass(frozen=True)
class ContextDocument:
    """One loaded document. `tokens` is the loader's count (or estimate) when it has one.

    `type` is the loader's document type (`"pdf"`, `"spreadsheet"` ...), empty when unknown;
    `sections` its named parts; `attached_to` the name of the document that held it.
    """

    name: str
    text: str
    path: str = ""
    tokens: int | None = None
    type: str = ""
    sections: tuple[ContextSection, ...] = ()
    attached_to: str | None = None

    def meta(self) -> dict[str, object]:
        """The `context_meta` entry the model sees for this document.

        Sections are listed under their kind's plural: `meta["sheets"][1]["start"]`.
        """
        entry: dict[str, object] = {
            "name": self.name,
            "path": self.path,
            "type": self.type or "text",
            "chars": len(self.text),
            "tokens": self.tokens,
        }
        for section in self.sections:
            listed = entry.setdefault(parts_key(section.kind), [])
            assert isinstance(listed, list)
            listed.append(section.meta())
        if self.attached_to is not None:
            entry["attached_to"] = self.attached_to
        return entry
