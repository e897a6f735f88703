"""The loader's vocabulary: options in, documents, skips and errors out."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from rlm_desktop.engine.config import DEFAULT_MODEL
from rlm_desktop.engine.context import ContextDocument, ContextSection
from rlm_desktop.formatting import plural

if TYPE_CHECKING:
    from rlm_desktop.documents.load_progress import LoadProgress

MIB = 1024 * 1024


def human_size(n: int) -> str:
    """A byte count as people read it: `512 B`, `3.4 MB`, `1.2 GB` (powers of 1024)."""
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{int(size)} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")


@dataclass(frozen=True)
class LoadOptions:
    """How much to load and how to count it.

    Size limits are on the bytes of the file as stored (a PDF's file size, not its text).
    `exact_token_chars` bounds how much text is tokenised exactly; past it, counts are
    estimates from samples and are flagged as such. `exclude` adds gitignore-style patterns
    that apply inside folders.

    Compressed formats (PDF, office files, e-books, mail, images) are read in a worker process
    within `max_read_seconds` and `max_read_memory_bytes` (its address space) each; `deadline`,
    a `time.monotonic()` reading, is when a run's time limit ends: files still unread then are
    not loaded. `ocr` recognises the text of images and of PDF pages that are only images (on
    this machine's CPU); off, images are skipped and such pages left empty. OCR of one file may
    take `max_ocr_seconds` in all (a few seconds a page: a longer scan is read in part, and says
    which pages were left), as long as no page takes longer than `max_read_seconds`.
    """

    max_file_bytes: int = 256 * MIB
    max_total_bytes: int = 1024 * MIB
    model: str = DEFAULT_MODEL
    exact_token_chars: int = 4_000_000
    use_gitignore: bool = True
    include_hidden: bool = False
    exclude: tuple[str, ...] = ()
    max_read_seconds: float = 60.0
    max_read_memory_bytes: int = 1024 * MIB
    deadline: float | None = None
    ocr: bool = True
    max_ocr_seconds: float = 600.0
    on_file: Callable[[Path], None] | None = field(default=None, compare=False, repr=False)
    """Called with each file's path just before it is read (it is open and its size checked):
    progress for long loads. An exception raised here ends the load and propagates to the caller
    (a way to cancel)."""
    on_progress: Callable[[LoadProgress], None] | None = field(
        default=None, compare=False, repr=False
    )
    """Called with the counts so far after each entry listed and each file read (in the loading
    thread); raising `LoadCancelled` stops the load (`load_progress`)."""

    def __post_init__(self) -> None:
        if self.max_file_bytes <= 0 or self.max_total_bytes <= 0:
            raise ValueError("size limits must be positive numbers of bytes")
        if min(self.max_read_seconds, self.max_read_memory_bytes, self.max_ocr_seconds) <= 0:
            raise ValueError("read limits must be positive (seconds, bytes)")
        if self.exact_token_chars < 0:
            raise ValueError("exact_token_chars must be 0 or more")


@dataclass(frozen=True, slots=True)
class Document:
    """One loaded document: its text and what we know about the file it came from.

    `path` is absolute. `name` is the file name for a file given by name and
    `folder/relative/path` for a file found in a folder. `size` and `sha256` describe the file's
    bytes; `chars` and `tokens` its extracted text. A PDF's pages are separated by form feeds
    (`\\f`, as pdftotext does), so `text.split("\\f")` gives the pages. `notes` lists anything lossy
    that happened while reading (replaced bytes, unreadable pages). `sections` are its named parts
    (sheets, slides, pages, chapters) at their offsets in `text`; `attached_to` is the name of the
    document that held this one (a message, for its attachment), else None. `part` is where in
    its file a document found inside another lies (`0002 Invoices/march.csv` in an mbox: its name
    after the file's), empty for a file's own document.
    """

    name: str
    path: Path
    type: str
    size: int
    sha256: str
    chars: int
    tokens: int
    tokens_estimated: bool
    text: str = field(repr=False)
    encoding: str | None = None
    pages: int | None = None
    notes: tuple[str, ...] = ()
    sections: tuple[ContextSection, ...] = ()
    attached_to: str | None = None
    part: str = ""

    @property
    def file_name(self) -> str:
        """The name of the file the document came from: its own name, without its `part`."""
        return self.name[: -len(self.part) - 1] if self.part else self.name

    def to_context(self) -> ContextDocument:
        """The document as the engine takes it."""
        return ContextDocument(
            name=self.name,
            text=self.text,
            path=str(self.path),
            tokens=self.tokens,
            type=self.type,
            sections=self.sections,
            attached_to=self.attached_to,
        )


@dataclass(frozen=True, slots=True)
class Skipped:
    """A path inside a folder that was deliberately not loaded, and why."""

    path: Path
    reason: str

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


@dataclass(frozen=True, slots=True)
class LoadError:
    """A path the user named that could not be loaded. `message` says why and how to fix it.

    `message` does not repeat the path; `str(error)` gives the one-line `path: message`.
    """

    path: Path
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


class Measured(Protocol):
    """Anything with a document's measures (a loaded `Document`, a saved session's document)."""

    @property
    def size(self) -> int: ...
    @property
    def chars(self) -> int: ...
    @property
    def tokens(self) -> int: ...
    @property
    def tokens_estimated(self) -> bool: ...


@dataclass(frozen=True)
class DocumentTotals:
    """Counts over a list of documents, and how they read in one line."""

    documents: int
    bytes: int
    chars: int
    tokens: int
    estimated: bool
    """True when `tokens` includes an estimate."""

    @classmethod
    def of(cls, documents: Sequence[Measured]) -> DocumentTotals:
        """The totals of `documents`."""
        return cls(
            documents=len(documents),
            bytes=sum(d.size for d in documents),
            chars=sum(d.chars for d in documents),
            tokens=sum(d.tokens for d in documents),
            estimated=any(d.tokens_estimated for d in documents),
        )

    def describe(self, *, skipped: int = 0, failed: int = 0, separator: str = " · ") -> str:
        """`3 documents · 1.2 MB · 1,234,567 characters · ~301,200 tokens · 1 failed`."""
        parts = [
            plural(self.documents, "document"),
            human_size(self.bytes),
            f"{self.chars:,} characters",
            f"{'~' if self.estimated else ''}{self.tokens:,} tokens",
        ]
        if skipped:
            parts.append(f"{skipped:,} skipped")
        if failed:
            parts.append(f"{failed:,} failed")
        return separator.join(parts)


@dataclass
class LoadResult:
    """Everything one `load_paths` call produced, documents in load order."""

    documents: list[Document] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    errors: list[LoadError] = field(default_factory=list)

    @property
    def totals(self) -> DocumentTotals:
        """Counts over the documents loaded."""
        return DocumentTotals.of(self.documents)

    def contexts(self) -> list[ContextDocument]:
        """The documents as the engine takes them, in load order."""
        return [d.to_context() for d in self.documents]

    def summary(self) -> str:
        """One line for a status bar or a log: counts, size, tokens, skips and failures."""
        return self.totals.describe(
            skipped=len(self.skipped), failed=len(self.errors), separator=", "
        )
