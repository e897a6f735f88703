"""`load_paths`: files and folders in, documents out, with one clear line for each problem.

A path the user named that cannot be loaded becomes a `LoadError` (the CLI names it and goes on
with the rest); a file found inside a named folder that cannot or should not be loaded becomes a
`Skipped`. PDF, office, e-book, mail and image files, and single compressed files (`.gz`,
`.bz2`, `.xz`: decompressed there up to the size limits, which apply to what they inflate to),
are read by a `BoundedReader` (a worker process with a time and a memory bound); a file that
passes a bound, or the run's time limit (`LoadOptions.deadline`), is not loaded and says which.

A file is opened once: its size is checked on that descriptor (`fstat`) and at most that many
bytes are read from it, plus one to see whether it grew. A file replaced after it was opened is
not seen; one that grew after its check is read up to the size that was checked (text, with a
note saying so) or refused (the compressed formats, whose ends hold what they need); a pipe or
device in a file's place is refused without waiting on it.

A file whose text is empty — a 0-byte file, whitespace only, a scanned PDF without a text
layer — is not loaded: it would give the model nothing to read, and a named empty file is far
more often a mistake (the wrong file, an export that failed) than an intent.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import stat
import time
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from rlm_desktop.documents import formats, memory_room
from rlm_desktop.documents.decoding import Unreadable, normalize_newlines
from rlm_desktop.documents.extract import (
    COMPRESSED_TYPES,
    Extracted,
    Inflate,
    Inner,
    ReadSettings,
    extract,
)
from rlm_desktop.documents.load_progress import LoadProgress
from rlm_desktop.documents.model import (
    MIB,
    Document,
    LoadError,
    LoadOptions,
    LoadResult,
    Skipped,
    human_size,
)
from rlm_desktop.documents.ocr import OCR_OFF
from rlm_desktop.documents.reader import BoundedReader, ReadTimedOut
from rlm_desktop.documents.token_counts import TokenTally
from rlm_desktop.documents.walk import Found, iter_folder

_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)
"""Non-blocking: a pipe put in a file's place opens at once (and is refused by its type) instead
of waiting for a writer. Reads of a regular file are not affected."""


_CHUNK = 64 * MIB

_NOT_IN_A_NAME = re.compile(
    r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff/\\]+"
)
"""What a name found inside a file (an attachment's, a message's subject) may not bring into a
document's name: control characters (terminal escapes), the invisible and direction-changing
marks that make a name read as another, and slashes, which mark where it sits."""


def _has_text(text: str) -> bool:
    """True when `text` gives the model something to read (not empty, not only whitespace)."""
    return bool(text) and not text.isspace()


def read_at_most(fd: int, limit: int) -> bytes:
    """Up to `limit` bytes from `fd`, fewer only at its end (a read may return less at once)."""
    data = os.read(fd, limit)
    if not data or len(data) == limit:
        return data
    parts, got = [data], len(data)
    while got < limit:
        chunk = os.read(fd, min(limit - got, _CHUNK))
        if not chunk:
            break
        parts.append(chunk)
        got += len(chunk)
    return b"".join(parts)


class _Loader:
    def __init__(self, options: LoadOptions) -> None:
        self.options = options
        self.result = LoadResult()
        self.tally = TokenTally(options.model, options.exact_token_chars)
        self.total_bytes = 0
        self.seen: dict[str, Path] = {}
        self.reader = BoundedReader(options.max_read_memory_bytes)
        self.found = 0
        self.files_read = 0

    def report(self, listing: bool = False) -> None:
        """Tell `on_progress` the counts so far (it may raise `LoadCancelled`)."""
        if self.options.on_progress is not None:
            left_out = len(self.result.skipped) + len(self.result.errors)
            self.options.on_progress(
                LoadProgress(self.found, listing, self.files_read, len(self.seen), left_out)
            )

    def listed(self, path: Path) -> list[Found | Skipped] | None:
        """What a named folder holds (counted as found as it is listed); None for a file."""
        if not path.is_dir():
            self.found += 1
            return None
        items: list[Found | Skipped] = []
        for item in iter_folder(path, self.options):
            items.append(item)
            if isinstance(item, Found):
                self.found += 1
            else:
                self.result.skipped.append(item)
            self.report(listing=True)
        return items

    @staticmethod
    def weight(listed: list[tuple[Path, list[Found | Skipped] | None]]) -> int:
        """What the listed files weigh together as stored (one gone since weighs nothing)."""
        total = 0
        for path, items in listed:
            files = [path] if items is None else [i.path for i in items if isinstance(i, Found)]
            for file in files:
                with contextlib.suppress(OSError):
                    total += os.stat(file).st_size
        return total

    def named(self, path: Path, items: list[Found | Skipped] | None) -> None:
        """Load a path the user named: a folder, whose `items` were listed, or a file."""
        if items is not None:
            self.folder(path, items)
            return
        if path.is_dir():
            self.fail(path, "it turned into a folder while loading; add it again", named=True)
        elif not path.exists():
            self.fail(path, "no such file or folder; check the path", named=True)
        elif not path.is_file():
            self.fail(
                path,
                "not a regular file (a device, pipe or socket); name a file or folder",
                named=True,
            )
        elif (reason := formats.refusal(path)) is not None:
            self.fail(path, reason, named=True)
        else:
            self.file(path, path.name, named=True)
        self.read_one()

    def read_one(self) -> None:
        self.files_read += 1
        self.report()

    def folder(self, root: Path, items: list[Found | Skipped]) -> None:
        before = len(self.result.documents)
        skipped_before = len(self.result.skipped)
        for item in items:
            if isinstance(item, Found):
                self.file(item.path, item.name, named=False)
                self.read_one()
        if len(self.result.documents) > before:
            return
        skipped = [item for item in items if isinstance(item, Skipped)]
        skipped += self.result.skipped[skipped_before:]
        if not skipped:
            self.fail(root, "the folder is empty; choose a folder that holds documents", named=True)
            return
        kinds = Counter(s.reason.split(" (")[0].split(";")[0] for s in skipped)
        shown = ", ".join(f"{n} {reason}" for reason, n in kinds.most_common(3))
        more = ", ..." if len(kinds) > 3 else ""
        self.fail(
            root,
            f"no loadable files in this folder (skipped: {shown}{more}); "
            "choose another folder or name the files directly",
            named=True,
        )

    def fail(self, path: Path, message: str, named: bool) -> None:
        if named:
            self.result.errors.append(LoadError(path, message))
        else:
            self.result.skipped.append(Skipped(path, message))

    def file(self, path: Path, name: str, named: bool) -> None:
        key = os.path.realpath(path)
        if key in self.seen:
            self.result.skipped.append(Skipped(path, f"already loaded as {self.seen[key]}"))
            return
        message = self.check_time() or self.open_and_read(path, name, named)
        if message is None:
            self.seen[key] = path
        else:
            self.fail(path, message, named)

    def open_and_read(self, path: Path, name: str, named: bool) -> str | None:
        """Check and read the file through one descriptor; why not, or None when loaded."""
        try:
            fd = os.open(path, _OPEN_FLAGS)
        except OSError as exc:
            return f"cannot read it ({exc.strerror or exc}); check that it exists and is readable"
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                fix = "; name a file or folder" if named else ""
                return f"not a regular file (a device, pipe or socket){fix}"
            message = self.check_size(info.st_size, named)
            if message is not None:
                return message
            if self.options.on_file is not None:
                self.options.on_file(path)
            try:
                data = read_at_most(fd, info.st_size)
                grew = len(data) == info.st_size and bool(os.read(fd, 1))
            except OSError as exc:
                return f"cannot read it ({exc.strerror or exc}); check its permissions"
        finally:
            os.close(fd)
        return self.read(path, name, data, grew)

    def remaining_s(self) -> float | None:
        deadline = self.options.deadline
        return None if deadline is None else deadline - time.monotonic()

    def check_time(self) -> str | None:
        remaining = self.remaining_s()
        if remaining is not None and remaining <= 0:
            return (
                "not read: the run's time limit ran out while loading the documents before it; "
                "raise the time limit or load fewer files"
            )
        return None

    def check_size(self, size: int, named: bool) -> str | None:
        limits = self.options
        if size > limits.max_file_bytes:
            return (
                f"too large ({human_size(size)}, the per-file limit is "
                f"{human_size(limits.max_file_bytes)}); raise the limit or split the file"
            )
        if self.total_bytes + size > limits.max_total_bytes:
            return (
                f"over the total size limit ({human_size(limits.max_total_bytes)} for all "
                "documents together); raise the limit or load fewer files"
            )
        if size == 0:
            return (
                "empty file (0 bytes); check that it is the file you meant"
                if named
                else ("empty file (0 bytes)")
            )
        return None

    def inflate(self, compression: str | None) -> Inflate | None:
        """How far a compressed file may inflate: the per-file size limit, or what is left of
        the total size limit where that is less."""
        if compression is None:
            return None
        limits = self.options
        left = limits.max_total_bytes - self.total_bytes
        if limits.max_file_bytes <= left:
            return Inflate(compression, limits.max_file_bytes)
        return Inflate(
            compression,
            left,
            f"inflates past {human_size(left)} when decompressed, over the total size limit "
            f"({human_size(limits.max_total_bytes)} for all documents together); raise the "
            "limit or load fewer files",
        )

    def extract(self, kind: str, data: bytes, inflate: Inflate | None) -> Extracted:
        """The file's text; compressed formats and compressed files are read by the bounded
        worker."""
        if kind not in COMPRESSED_TYPES and inflate is None:
            return extract(kind, data)
        per_file = self.options.max_read_seconds
        remaining = self.remaining_s()
        seconds = per_file if remaining is None else min(per_file, remaining)
        ocr_seconds = self.options.max_ocr_seconds
        if remaining is not None:
            ocr_seconds = max(0.0, min(ocr_seconds, remaining - per_file))
        settings = ReadSettings(ocr=self.options.ocr, ocr_seconds=ocr_seconds)
        try:
            return self.reader.read(
                kind, data, seconds, settings, longest=seconds + ocr_seconds, inflate=inflate
            )
        except ReadTimedOut:
            if seconds < per_file:
                raise Unreadable(
                    "the run's time limit ran out while it was being read, so reading it was "
                    "stopped; raise the time limit or load fewer files"
                ) from None
            raise Unreadable(
                f"still being read after {per_file:g} s (the per-file time limit), so reading it "
                "was stopped; convert it to text with another tool and load that"
            ) from None

    def read(self, path: Path, name: str, data: bytes, grew: bool) -> str | None:
        """Load `data`, the bytes of `path` as its check saw them (`grew`: it has more now);
        why not, or None."""
        kind = formats.type_for(path) or "text"
        if kind == "image" and not self.options.ocr:
            return OCR_OFF
        inflate = self.inflate(formats.compression(path))
        whole = kind in COMPRESSED_TYPES or inflate is not None
        cut: tuple[str, ...] = ()
        if grew and whole:
            return (
                f"it changed while it was being read (it grew past the {len(data):,} bytes it "
                "had when checked); load it again once it is complete"
            )
        if grew:
            cut = (
                f"the file grew while it was being read: its first {len(data):,} bytes, as "
                "checked, were loaded",
            )
        size, digest = len(data), hashlib.sha256(data).hexdigest()
        if not whole:
            data = normalize_newlines(data)  # rebinding frees the original: memory stays ~2x
        try:
            extracted = self.extract(kind, data, inflate)
        except Unreadable as exc:
            return str(exc)
        except MemoryError:
            return "not enough memory to read it; lower the size limits or free some memory"
        except Exception as exc:  # a parser's bug must cost one file, not the whole load
            return f"could not read it ({type(exc).__name__}: {str(exc)[:100]}); please report this"
        del data
        text = extracted.text
        has_text = _has_text(text)
        if not has_text and not any(inner.extracted for inner in extracted.inner):
            return "no text in it (only whitespace); nothing to load"
        self.total_bytes += size if inflate is None else max(size, len(text))
        if has_text:
            self.add(name, path, kind, size, digest, extracted, cut, None)
        self.add_inner(name, path, extracted.inner, name if has_text else None, name)
        return None

    def add(
        self,
        name: str,
        path: Path,
        kind: str,
        size: int,
        digest: str,
        extracted: Extracted,
        notes: tuple[str, ...],
        attached_to: str | None,
        part: str = "",
    ) -> None:
        text = extracted.text
        tokens, estimated = self.tally.count(text, kind)
        self.result.documents.append(
            Document(
                name=name,
                path=path,
                type=kind,
                size=size,
                sha256=digest,
                chars=len(text),
                tokens=tokens,
                tokens_estimated=estimated,
                text=text,
                encoding=extracted.encoding,
                pages=extracted.pages,
                notes=(*extracted.notes, *notes),
                sections=extracted.sections,
                attached_to=attached_to,
                part=part,
            )
        )

    def add_inner(
        self,
        outer: str,
        path: Path,
        inner: tuple[Inner, ...],
        attached_to: str | None,
        root: str,
    ) -> None:
        """Load the documents found inside `outer` as documents of their own, named under it
        (`mail.eml/report.pdf`), each linked to the document that held it; one that could not be
        read is listed as skipped. `root` is the name of the file they all came from."""
        if not inner:
            return  # most files: no set of every name so far (quadratic over a big folder)
        taken = {document.name for document in self.result.documents}
        for found in inner:
            own = " ".join(_NOT_IN_A_NAME.sub(" ", found.name).split()) or "unnamed"
            name = f"{outer}/{own}"
            for number in range(2, len(inner) + 2):
                if name not in taken:
                    break
                name = f"{outer}/{own} ({number})"
            taken.add(name)
            extracted = found.extracted
            if extracted is None:
                why = found.reason or "could not be read"
                self.result.skipped.append(Skipped(Path(f"{path}/{own}"), why))
                continue
            part = name[len(root) + 1 :]
            if _has_text(extracted.text):
                self.add(
                    name, path, found.type, found.size, found.sha256, extracted, (), attached_to,
                    part,
                )  # fmt: skip
                self.add_inner(name, path, extracted.inner, name, root)
            else:
                self.add_inner(name, path, extracted.inner, attached_to, root)


def load_paths(paths: Iterable[Path | str], options: LoadOptions | None = None) -> LoadResult:
    """Load files and folders, in the order given, into documents.

    Never raises for bad input: problems come back in `errors` (paths the user named) and
    `skipped` (files inside folders), one line each. The reader process started for PDF and
    Word files is stopped before this returns. Folders are listed first, then the files read
    unless together they weigh more than this machine's memory allows (`memory_room`: then
    nothing is read and that is the one error);
    `LoadOptions.on_progress` hears the counts as it goes and may stop it (`LoadCancelled`).
    """
    loader = _Loader(options or LoadOptions())
    try:
        named = [Path(os.path.abspath(Path(raw).expanduser())) for raw in paths]
        listed = [(path, loader.listed(path)) for path in named]
        loader.report()
        refused = memory_room.refusal(loader.weight(listed)) if named else None
        if refused is not None:
            return LoadResult(errors=[LoadError(named[0], refused)])
        for path, items in listed:
            loader.named(path, items)
    finally:
        loader.reader.close()
    return loader.result
