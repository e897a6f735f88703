"""Decompressing a single compressed file (gzip, bzip2, xz, lzma), streamed up to a cap.

A few hundred bytes of bzip2 can inflate to gigabytes, so nothing is decompressed whole: the
data is read a chunk at a time and reading stops one byte past the cap, wherever the stream
claims it ends (a gzip file's own size field is not trusted; several members are read as one
stream, as `gunzip` does). It runs in the bounded reader (reader.py), which also holds the time
and memory bounds, since decompressing is how a small file becomes a big load — the rule that
sends PDFs and office files there.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import zlib
from dataclasses import dataclass

from rlm_desktop.documents.decoding import Unreadable
from rlm_desktop.documents.model import MIB, human_size

CHUNK = MIB
_MAGIC = {"gzip": b"\x1f\x8b", "bzip2": b"BZh", "xz": b"\xfd7zXZ\x00"}
_SUFFIX = {"gzip": ".gz", "bzip2": ".bz2", "xz": ".xz", "lzma": ".lzma"}
_TAR_MAGIC = (257, b"ustar")
ARCHIVE_HINT = "extract it and load the folder"
_COPY_AGAIN = "copy the file again"


@dataclass(frozen=True, slots=True)
class Inflate:
    """How to decompress a file before it is read: its `compression` (formats.COMPRESSIONS),
    the most bytes it may inflate to (`limit`) and what to say when it would inflate past that
    (`too_big`; by default the limit as a per-file one)."""

    compression: str
    limit: int
    too_big: str = ""

    def refusal(self) -> str:
        """Why the file was not loaded once it inflated past the limit."""
        return self.too_big or (
            f"inflates past {human_size(self.limit)} when decompressed; the limit is "
            f"{human_size(self.limit)} a file; raise the limit or decompress it and load a part"
        )

    def apply(self, data: bytes) -> bytes:
        """The decompressed bytes of `data`; raises `Unreadable` for data past the limit,
        damaged or cut short, not of this compression, or holding a tar archive."""
        name = self.compression
        magic = _MAGIC.get(name)
        if magic is not None and not data.startswith(magic):
            raise Unreadable(
                f"not {name} data, though its name ends in {_SUFFIX[name]}; "
                "rename it to what it holds and load that"
            )
        try:
            with _open(name, io.BytesIO(data)) as stream:
                return self._read_capped(stream)
        except EOFError:
            raise Unreadable(
                f"damaged or cut short: its {name} data ends before the end of the stream; "
                f"{_COPY_AGAIN}"
            ) from None
        except (OSError, zlib.error, lzma.LZMAError, ValueError) as error:
            raise Unreadable(
                f"damaged: its {name} data cannot be decompressed ({str(error)[:100]}); "
                f"{_COPY_AGAIN}"
            ) from None

    def _read_capped(self, stream: io.BufferedIOBase) -> bytes:
        parts: list[bytes] = []
        got = 0
        while got <= self.limit:
            chunk = stream.read(min(CHUNK, self.limit + 1 - got))
            if not chunk:
                break
            if not parts and _holds_a_tar(chunk):
                raise Unreadable(f"a tar archive inside {self.compression} data; {ARCHIVE_HINT}")
            parts.append(chunk)
            got += len(chunk)
        if got > self.limit:
            raise Unreadable(self.refusal())
        data = b"".join(parts)
        del parts
        return data


def _holds_a_tar(head: bytes) -> bool:
    offset, magic = _TAR_MAGIC
    return head[offset : offset + len(magic)] == magic


def _open(compression: str, raw: io.BytesIO) -> io.BufferedIOBase:
    if compression == "gzip":
        return gzip.GzipFile(fileobj=raw)
    if compression == "bzip2":
        return bz2.BZ2File(raw)
    return lzma.LZMAFile(raw)  # xz and the older lzma, told apart by their first bytes
