"""`load_paths`: files and folders in, documents out, with one clear line for each problem.

A path the user named that cannot be loaded becomes a `LoadError` (the CLI exits with code 2);
a file found inside a named folder that cannot or should not be loaded becomes a `Skipped`.
A file whose text is empty — a 0-byte file, whitespace only, a scanned PDF without a text
layer — is not loaded: it would give the model nothing to read, and a named empty file is far
more often a mistake (the wrong file, an export that failed) than an intent.
"""

from __future__ import annotations

import hashlib
import os
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from rlm_desktop.documents import formats
from rlm_desktop.documents.decoding import Unreadable, decode, normalize_newlines
from rlm_desktop.documents.model import (
    Document,
    LoadError,
    LoadOptions,
    LoadResult,
    Skipped,
    human_size,
)
from rlm_desktop.documents.token_counts import TokenTally
from rlm_desktop.documents.walk import Found, iter_folder


@dataclass(frozen=True)
class _Text:
    text: str
    encoding: str | None = None
    pages: int | None = None
    notes: tuple[str, ...] = ()


def _extract(kind: str, data: bytes) -> _Text:
    if kind == "pdf":
        from rlm_desktop.documents.pdf import extract_pdf

        pdf = extract_pdf(data)
        return _Text(pdf.text, pages=pdf.pages, notes=pdf.notes)
    if kind == "docx":
        from rlm_desktop.documents.word import extract_docx

        return _Text(extract_docx(data))
    decoded = decode(data)
    text = decoded.text
    if kind == "html":
        from rlm_desktop.documents.htmltext import html_to_text

        text = html_to_text(text)
    return _Text(text, decoded.encoding, notes=decoded.notes())


class _Loader:
    def __init__(self, options: LoadOptions) -> None:
        self.options = options
        self.result = LoadResult()
        self.tally = TokenTally(options.model, options.exact_token_chars)
        self.total_bytes = 0
        self.seen: dict[str, Path] = {}

    def named(self, path: Path) -> None:
        if path.is_dir():
            self.folder(path)
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

    def folder(self, root: Path) -> None:
        before = len(self.result.documents)
        skipped_before = len(self.result.skipped)
        for item in iter_folder(root, self.options):
            if isinstance(item, Found):
                self.file(item.path, item.name, named=False)
            else:
                self.result.skipped.append(item)
        if len(self.result.documents) > before:
            return
        skipped = self.result.skipped[skipped_before:]
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
        message = self.check_size(path, named)
        if message is None:
            message = self.read(path, name)
        if message is None:
            self.seen[key] = path
        else:
            self.fail(path, message, named)

    def check_size(self, path: Path, named: bool) -> str | None:
        try:
            size = path.stat().st_size
        except OSError as exc:
            return f"cannot read it ({exc.strerror or exc}); check that it exists and is readable"
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

    def read(self, path: Path, name: str) -> str | None:
        if self.options.on_file is not None:
            self.options.on_file(path)
        try:
            data = path.read_bytes()
        except OSError as exc:
            return f"cannot read it ({exc.strerror or exc}); check its permissions"
        size, digest = len(data), hashlib.sha256(data).hexdigest()
        kind = formats.type_for(path) or "text"
        if kind not in ("pdf", "docx"):
            data = normalize_newlines(data)  # rebinding frees the original: memory stays ~2x
        try:
            extracted = _extract(kind, data)
        except Unreadable as exc:
            return str(exc)
        except MemoryError:
            return "not enough memory to read it; lower the size limits or free some memory"
        except Exception as exc:  # a parser's bug must cost one file, not the whole load
            return f"could not read it ({type(exc).__name__}: {str(exc)[:100]}); please report this"
        del data
        text = extracted.text
        if not text or text.isspace():
            return "no text in it (only whitespace); nothing to load"
        tokens, estimated = self.tally.count(text, kind)
        self.total_bytes += size
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
                notes=extracted.notes,
            )
        )
        return None


def load_paths(paths: Iterable[Path | str], options: LoadOptions | None = None) -> LoadResult:
    """Load files and folders, in the order given, into documents.

    Never raises for bad input: problems come back in `errors` (paths the user named) and
    `skipped` (files inside folders), one line each.
    """
    loader = _Loader(options or LoadOptions())
    for raw in paths:
        loader.named(Path(os.path.abspath(Path(raw).expanduser())))
    return loader.result
