"""The checks every zipped office format (.docx, .pptx, .odt, .odp, .epub) passes before its
library opens it.

`check_package`: a file that is not a ZIP package, or is damaged, or is an encrypted
OOXML file (an OLE container), is refused with one line. So is a package whose parts, as its ZIP
directory declares them, would need more memory than the reader may use (a zip bomb, refused
before anything is inflated: Python's `zipfile`, which all three libraries use, never yields more
than a part's declared size), and one whose XML declares entities (`<!ENTITY`, in whatever
encoding a parser would read: `xml_entities`): office files and e-books have no need for them, and they are how "billion laughs" and external-entity (XXE)
attacks are built. The libraries are safe on their own as far as we found (python-pptx and
ebooklib parse with `resolve_entities=False`; odfdo uses lxml's default parser, which expands
internal entities within libxml2's amplification limit and resolves no external ones), so the
check gives a clear line rather than a half-read document.
"""

from __future__ import annotations

import io
import zipfile
import zlib

from rlm_desktop.documents.decoding import Unreadable
from rlm_desktop.documents.model import MIB, human_size
from rlm_desktop.documents.reader_processes import process_bound
from rlm_desktop.documents.xml_entities import UncheckedEncoding, declares_entities

OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
ZIP_MAGIC = b"PK\x03\x04"

UNBOUNDED_MEMORY = 1024 * MIB
"""What a package may inflate to when this process has no address-space bound to go by."""

XML_TREE_FACTOR = 6
"""An XML part parsed into an lxml tree takes at least this many times its size in memory (7x
for paragraphs of text, 25x for a dense table): the estimate that refuses no file that fits."""

_XML_NAMES = (".xml", ".rels", ".xhtml", ".html", ".htm", ".opf", ".ncx", ".svg")
CONVERT = "convert it to text with another tool and load that"


def problem(error: BaseException) -> str:
    """An error's message on one short line, for the 'damaged file (...)' lines."""
    return " ".join(str(error).split())[:120] or type(error).__name__


def memory_budget() -> int:
    """The memory this process may use: its bound where it has one (reader_processes.py)."""
    return process_bound() or UNBOUNDED_MEMORY


def _declares_entities(package: zipfile.ZipFile, member: zipfile.ZipInfo) -> bool:
    with package.open(member) as part:
        return declares_entities(part)


def _inflated_need(members: list[zipfile.ZipInfo]) -> tuple[int, int]:
    """What the parts declare in total, and the memory reading them would need."""
    declared = sum(member.file_size for member in members)
    xml = sum(member.file_size for member in members if member.filename.endswith(_XML_NAMES))
    return declared, declared + (XML_TREE_FACTOR - 1) * xml


def check_package(data: bytes, what: str, resave: str) -> zipfile.ZipFile:
    """The ZIP package in `data`, opened, once it passed the checks in this module's docstring;
    raise `Unreadable` saying what is wrong. `what` names the format (".pptx"), `resave` how to
    fix a damaged file."""
    if data.startswith(OLE_MAGIC):
        raise Unreadable(
            f"encrypted (password-protected) or old-format {what} file; "
            f"remove the password or {resave}"
        )
    if not data.startswith(ZIP_MAGIC):
        raise Unreadable(f"not a {what} file (not a ZIP package); {resave}")
    try:
        package = zipfile.ZipFile(io.BytesIO(data))
        members = package.infolist()
        declared, need = _inflated_need(members)
        budget = memory_budget()
        if need > budget:
            raise Unreadable(
                f"its parts inflate to {human_size(declared)} (a zip bomb?), more than can be "
                f"read within the {human_size(budget)} of memory reading may use, so it was not "
                f"read; {CONVERT}"
            )
        if any(_declares_entities(package, member) for member in members):
            raise Unreadable(
                "its XML declares entities, which office files and e-books never need (a file "
                f"built to attack XML readers?), so it was not read; {resave}"
            )
    except UncheckedEncoding as error:
        raise Unreadable(f"{error}, so it was not read; {resave}") from error
    except (
        zipfile.BadZipFile,
        zipfile.LargeZipFile,
        zlib.error,
        OSError,
        EOFError,
        ValueError,
    ) as error:
        raise Unreadable(f"damaged {what} file ({problem(error)}); {resave}") from error
    except RuntimeError as error:  # zipfile's "File is encrypted, password required"
        raise Unreadable(
            f"password-protected {what} file (its ZIP parts are encrypted); "
            f"remove the password or {resave}"
        ) from error
    except NotImplementedError as error:  # a compression method zipfile does not know
        raise Unreadable(f"unsupported {what} file ({problem(error)}); {resave}") from error
    return package
