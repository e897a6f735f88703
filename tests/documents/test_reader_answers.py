"""The reader process's answers as the application reads them: every answer a reader can give
comes back whole, and frames a reader taken over by a hostile file could forge are refused."""

from __future__ import annotations

import json
import struct

import pytest

from rlm_desktop.documents.extract import Extracted, Inner, Section
from rlm_desktop.documents.reader_answers import BadAnswer, decode, encode

MAIL = Extracted(
    "From: a\nSubject: figures \udcff\n\nSee the attachments.",
    encoding="utf-8",
    notes=("a note with a lone surrogate \ud800",),
    inner=(
        Inner(
            "scan.pdf",
            "pdf",
            2048,
            "ab" * 32,
            Extracted(
                "page one\fpage two ✓",
                pages=2,
                sections=(
                    Section("page", "1", 0, 8),
                    Section("page", "2", 9, 19, ocr_confidence=0.875),
                ),
            ),
        ),
        Inner("locked.docx", "docx", 10, "cd" * 32, reason="encrypted: no password"),
    ),
)


def _frame(header: object, texts: bytes = b"") -> bytes:
    encoded = json.dumps(header).encode()
    return struct.pack(">I", len(encoded)) + encoded + texts


@pytest.mark.parametrize(
    ("status", "value"),
    [
        ("ok", MAIL),
        ("ok", Extracted("")),
        ("working", None),
        ("memory", None),
        ("unreadable", "damaged PDF: no pages found"),
        ("sandbox", {"level": "landlock+seccomp", "filesystem": True, "network": True}),
    ],
)
def test_every_answer_comes_back_as_it_was_sent(status: str, value: object) -> None:
    assert decode(encode(status, value)) == (status, value)


GOOD = json.loads(encode("ok", Extracted("abc"))[4:-3])  # the header, without the text


@pytest.mark.parametrize(
    "frame",
    [
        pytest.param(b"\x80\x03cbuiltins\nexec\n", id="a pickle"),
        pytest.param(b"\x00\x00\x00", id="shorter than its length"),
        pytest.param(_frame(["ok", GOOD[1], [3]], b"ab"), id="texts shorter than said"),
        pytest.param(_frame(["ok", GOOD[1], [3]], b"abcd"), id="texts longer than said"),
        pytest.param(_frame(["ok", GOOD[1], [-1]], b""), id="a negative length"),
        pytest.param(_frame(["ok", GOOD[1], [2]], b"\xff\xfe"), id="a text not UTF-8"),
        pytest.param(_frame(["ok", {**GOOD[1], "text": 1}, [3]], b"abc"), id="no such text"),
        pytest.param(_frame(["ok", {**GOOD[1], "text": -1}, [3]], b"abc"), id="text -1"),
        pytest.param(_frame(["ok", {**GOOD[1], "pages": "2"}, [3]], b"abc"), id="pages a str"),
        pytest.param(_frame(["ok", {**GOOD[1], "pages": True}, [3]], b"abc"), id="pages a bool"),
        pytest.param(
            _frame(["ok", {**GOOD[1], "extra": 1}, [3]], b"abc"), id="a field of no answer"
        ),
        pytest.param(
            _frame(["ok", {**GOOD[1], "sections": [["page", "1", 0, 4, "", None]]}, [3]], b"abc"),
            id="a section past the text",
        ),
        pytest.param(
            _frame(["ok", {**GOOD[1], "sections": [["page", "1", 2, 1, "", None]]}, [3]], b"abc"),
            id="a section ending before it starts",
        ),
        pytest.param(
            _frame(["ok", {**GOOD[1], "sections": [["macro", "1", 0, 1, "", None]]}, [3]], b"abc"),
            id="a section of no kind",
        ),
        pytest.param(
            _frame(["ok", {**GOOD[1], "sections": [["page", "1", 0]]}, [3]], b"abc"),
            id="a section cut short",
        ),
        pytest.param(
            _frame(["ok", {**GOOD[1], "inner": [{"name": "x"}]}, [3]], b"abc"),
            id="an inner document without its fields",
        ),
        pytest.param(_frame(["ok", "text", []]), id="an ok answer without a document"),
        pytest.param(_frame([1, None, []]), id="a status not a string"),
        pytest.param(_frame(["error", ["a", "list"], []]), id="a message not a string"),
        pytest.param(_frame("[" * 100_000), id="nested past any answer"),
    ],
)
def test_a_forged_frame_is_refused(frame: bytes) -> None:
    with pytest.raises(BadAnswer):
        decode(frame)
