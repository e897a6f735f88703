"""Mail (.eml, .mbox, Outlook .msg) loads as messages whose attachments are documents of their
own, through the real loader and its bounded reader; damaged and hostile mail costs one line.

The files are written here: .eml and .mbox with the standard library, .msg with `make_msg`.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rlm_desktop.documents import LoadResult, load_paths
from rlm_desktop.documents import mail as mail_reader
from rlm_desktop.documents.extract import ReadSettings
from rlm_desktop.documents.mail import extract_mail
from tests.documents.mail_makers import (
    MsgMessage,
    make_eml,
    make_msg,
    many_attachments_eml,
    nested_eml,
    write_eml,
    write_mbox,
)
from tests.documents.makers import make_docx

GOOD_TEXT = "The good file still loads.\n"


def _by_name(result: LoadResult) -> dict[str, str]:
    return {document.name: document.text for document in result.documents}


def _everything(result: LoadResult) -> str:
    return "\n".join(document.text for document in result.documents)


def _one_line_each(result: LoadResult) -> None:
    for line in [*result.errors, *result.skipped]:
        assert "\n" not in str(line)


def test_a_message_its_attachment_and_its_attached_message_load(tmp_path: Path) -> None:
    report = make_docx(tmp_path / "report.docx", "Report", ["only-in-attachment aardvark"])
    forwarded = make_eml(subject="Forwarded note", body="only-in-attached-message bison")
    message = make_eml(
        subject="=?utf-8?q?Caf=C3=A9?= figures",
        body="only-in-body cheetah",
        attachments=[("report.docx", report.read_bytes()), ("photo.gif", b"GIF89a")],
        messages=[forwarded],
        Cc="Carol <carol@example.com>",
    )
    html = make_eml(subject="Newsletter", body=None, html="<p>only-in-<b>html</b> dingo</p>")
    paths = [write_eml(tmp_path / "mail.eml", message), write_eml(tmp_path / "news.eml", html)]
    result = load_paths(paths)

    texts = _by_name(result)
    everything = _everything(result)
    for phrase in ("only-in-body cheetah", "only-in-html dingo", "only-in-attachment aardvark"):
        assert phrase in everything
    assert "only-in-attached-message bison" in texts["mail.eml/Forwarded note.eml"]
    assert "aardvark" not in texts["mail.eml"]
    assert "<b>" not in texts["news.eml"]
    [attachment] = [d for d in result.documents if d.name == "mail.eml/report.docx"]
    assert attachment.attached_to == "mail.eml"
    assert attachment.type == "docx"
    assert attachment.size == report.stat().st_size
    inner = next(d for d in result.documents if d.name == "mail.eml/Forwarded note.eml")
    assert inner.attached_to == "mail.eml"
    assert texts["mail.eml"].startswith(
        "From: Alice <alice@example.com>\nTo: Bob <bob@example.com>\n"
        "Cc: Carol <carol@example.com>\nDate: Tue, 01 Apr 2025 10:00:00 +0000\n"
        "Subject: Café figures\n\nonly-in-body cheetah\n\nAttachments: report.docx, photo.gif "
        "(not read: image file (.gif), not a text document), Forwarded note.eml\n"
    )
    [skipped] = result.skipped
    assert skipped.path == tmp_path / "mail.eml" / "photo.gif"
    assert result.errors == []


def test_an_attached_message_brings_its_own_attachments(tmp_path: Path) -> None:
    forwarded = make_eml(
        subject="Numbers", body="see the table", attachments=[("table.csv", b"k,v\nyak,1\n")]
    )
    result = load_paths([write_eml(tmp_path / "fwd.eml", make_eml(messages=[forwarded]))])
    [table] = [d for d in result.documents if d.name == "fwd.eml/Numbers.eml/table.csv"]
    assert table.attached_to == "fwd.eml/Numbers.eml"
    assert table.text == "k,v\nyak,1\n"


def test_an_mbox_gives_one_document_per_message(tmp_path: Path) -> None:
    messages = [
        make_eml(subject="First", body="From the start, a line mbox escapes."),
        make_eml(subject="Second/part", body="second body", In_Reply_To="<first@example.com>"),
        make_eml(subject="Third", body="third body", attachments=[("t.csv", b"a,b\n1,2\n")]),
    ]
    box = write_mbox(tmp_path / "box.mbox", messages)
    assert b"\n>From the start" in box.read_bytes()
    result = load_paths([box])

    names = [d.name for d in result.documents]
    assert names == [
        "box.mbox/0001 First", "box.mbox/0002 Second-part", "box.mbox/0003 Third",
        "box.mbox/0003 Third/t.csv",
    ]  # fmt: skip
    texts = _by_name(result)
    assert "\n\nFrom the start, a line mbox escapes." in texts["box.mbox/0001 First"]
    assert "In-Reply-To: <first@example.com>" in texts["box.mbox/0002 Second-part"]
    assert result.documents[3].attached_to == "box.mbox/0003 Third"
    assert all(d.type == "email" for d in result.documents[:3])


def test_an_mbox_with_a_damaged_message_loads_the_others(tmp_path: Path) -> None:
    box = write_mbox(tmp_path / "box.mbox", [make_eml(subject="kept"), make_eml(subject="too")])
    data = box.read_bytes().replace(b"\n\nFrom ", b"\n\nFrom MAILER\n\x00\x01junk\n\nFrom ", 1)
    result = load_paths([write_eml_bytes(box, data)])
    assert [d.name for d in result.documents] == ["box.mbox/0001 kept", "box.mbox/0003 too"]
    [skipped] = result.skipped
    assert skipped.path == box / "0002"
    assert skipped.reason.startswith("not an e-mail message")


def test_a_message_saved_with_an_envelope_line_is_that_message(tmp_path: Path) -> None:
    one = write_mbox(tmp_path / "saved.eml", [make_eml(subject="Only", body="just this")])
    assert one.read_bytes().startswith(b"From ")
    [document] = load_paths([one]).documents
    assert document.name == "saved.eml"
    assert document.text.startswith("From: Alice <alice@example.com>\n")
    assert "just this" in document.text


def test_an_outlook_message_loads_with_its_attachments(tmp_path: Path) -> None:
    report = make_docx(tmp_path / "report.docx", "Report", ["msg-attachment emu"]).read_bytes()
    embedded = MsgMessage("Embedded", html="<p>msg-embedded-<i>html</i> ferret</p>")
    message = MsgMessage(
        "Outlook subject",
        body="msg-body gecko",
        attachments=[("report.docx", report), ("notes.csv", b"x,y\n3,4\n")],
        messages=[embedded],
    )
    result = load_paths([make_msg(tmp_path / "out.msg", message)])

    texts = _by_name(result)
    assert texts["out.msg"] == (
        "From: Alice <alice@example.com>\nTo: Bob <bob@example.com>\n"
        "Date: Tue, 01 Apr 2025 10:00:00 +0000\nSubject: Outlook subject\n\nmsg-body gecko\n\n"
        "Attachments: report.docx, notes.csv, Embedded.msg\n"
    )
    assert "msg-attachment emu" in texts["out.msg/report.docx"]
    assert "msg-embedded-html ferret" in texts["out.msg/Embedded.msg"]
    assert {d.attached_to for d in result.documents[1:]} == {"out.msg"}
    assert result.skipped == []
    assert result.errors == []


@pytest.mark.parametrize(
    ("charset", "declared", "text", "note"),
    [
        ("iso-8859-1", "iso-8859-1", "Grüße aus Köln", None),
        ("utf-8", "utf-8", "Grüße aus Köln ✓", None),
        ("iso-8859-1", "utf-8", "Grüße aus Köln, déjà vu", "declared charset 'utf-8' is wrong"),
        ("utf-8", "iso-8859-1", "Grüße aus Köln, déjà vu", None),
        ("iso-8859-1", "x-no-such", "Grüße aus Köln, déjà vu", "'x-no-such' is unknown"),
    ],
)
def test_body_charsets_and_wrong_ones(
    tmp_path: Path, charset: str, declared: str, text: str, note: str | None
) -> None:
    message = make_eml(body=text, charset=charset)
    if declared != charset:
        message.set_param("charset", declared)
    result = load_paths([write_eml(tmp_path / "m.eml", message)])
    [document] = result.documents
    assert text in document.text
    notes = " ".join(document.notes)
    assert (note in notes) if note else notes == ""


def test_attachment_names_cannot_climb_out_and_broken_header_words_are_replaced(
    tmp_path: Path,
) -> None:
    raw = make_eml(attachments=[("../../etc/table.csv", b"a,b\n")]).as_bytes()
    raw = raw.replace(b"Subject: Hello", b"Subject: =?x-unknown?b?/w==?= Hello")
    result = load_paths([write_eml_bytes(tmp_path / "odd.eml", raw)])
    names = [d.name for d in result.documents]
    assert names == ["odd.eml", "odd.eml/table.csv"]
    result.documents[0].text.encode("utf-8")  # no lone surrogates left


def write_eml_bytes(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def test_damaged_mail_gives_one_line_and_the_rest_loads(tmp_path: Path) -> None:
    noise = os.urandom(4096)
    good = tmp_path / "good.txt"
    good.write_text(GOOD_TEXT, encoding="utf-8")
    random_msg = write_eml_bytes(tmp_path / "random.msg", noise)
    ole_msg = write_eml_bytes(tmp_path / "ole.msg", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + noise)
    real_msg = make_msg(tmp_path / "whole.msg", MsgMessage("Cut", body="cut body")).read_bytes()
    cut_msg = write_eml_bytes(tmp_path / "cut.msg", real_msg[: len(real_msg) // 2])
    random_eml = write_eml_bytes(tmp_path / "random.eml", noise)
    random_mbox = write_eml_bytes(tmp_path / "random.mbox", b"From nobody\n" + noise)
    paths = [random_msg, ole_msg, cut_msg, random_eml, random_mbox, good]
    result = load_paths(paths)

    assert [d.name for d in result.documents] == ["good.txt"]
    assert [e.path for e in result.errors] == paths[:-1]
    _one_line_each(result)
    messages = {e.path.name: e.message for e in result.errors}
    assert messages["random.msg"].startswith("not an e-mail message")
    assert messages["random.eml"].startswith("not an e-mail message")
    assert messages["ole.msg"].startswith("damaged Outlook .msg file")
    assert messages["cut.msg"].startswith("damaged Outlook .msg file")
    assert messages["random.mbox"].startswith("not an e-mail message")


def test_a_truncated_message_keeps_what_it_holds(tmp_path: Path) -> None:
    table = "".join(f"{n},{n * n}\n" for n in range(2000)).encode()
    whole = make_eml(
        body="the part before the cut",
        attachments=[("a.docx", b"PK\x03\x04" + bytes(3000)), ("t.csv", table)],
    )
    raw = whole.as_bytes()
    cut = write_eml_bytes(tmp_path / "cut.eml", raw[: len(raw) - 4000])
    result = load_paths([cut])

    texts = _by_name(result)
    assert "the part before the cut" in texts["cut.eml"]
    [document] = [d for d in result.documents if d.name == "cut.eml"]
    assert any("cut short" in note for note in document.notes)
    [skipped] = result.skipped
    assert skipped.path.name == "a.docx"
    assert skipped.reason.startswith("damaged .docx file")
    _one_line_each(result)


@pytest.mark.timeout(600)
def test_ten_thousand_attachments_read_the_first_two_hundred(tmp_path: Path) -> None:
    bomb = write_eml_bytes(tmp_path / "many.eml", many_attachments_eml(10_000))
    result = load_paths([bomb])

    message = result.documents[0]
    assert message.name == "many.eml"
    assert len(result.documents) == 1 + 200
    assert result.documents[-1].name == "many.eml/table 199.csv"
    assert message.text.rstrip().endswith("table 199.csv, 9,800 more, not read")
    [note] = message.notes
    assert note.startswith("9,800 attachments not read: only a message's first 200")
    [skipped] = result.skipped
    assert skipped.path == bomb / "9,800 more attachments"
    _one_line_each(result)


@pytest.mark.timeout(600)
def test_a_message_nested_fifty_deep_is_read_five_deep(tmp_path: Path) -> None:
    bomb = write_eml(tmp_path / "deep.eml", nested_eml(50, phrase="the fiftieth level"))
    result = load_paths([bomb])

    levels = [d.name.count("/") for d in result.documents]
    assert levels == [0, 1, 2, 3, 4, 5]
    assert "level 5 body" in result.documents[-1].text
    assert "the fiftieth level" not in _everything(result)
    [skipped] = result.skipped
    assert skipped.reason.startswith("not read: the message is inside 5 others")
    assert any("inside 5 others" in note for note in result.documents[-1].notes)


@pytest.mark.timeout(600)
def test_outlook_bounds_hold_too(tmp_path: Path) -> None:
    deep = MsgMessage("level 12", body="the twelfth level")
    for level in range(11, -1, -1):
        deep = MsgMessage(f"level {level}", body=f"level {level} body", messages=[deep])
    many = MsgMessage("many", body="b", attachments=[(f"{n}.csv", b"a\n1\n") for n in range(250)])
    paths = [make_msg(tmp_path / "deep.msg", deep), make_msg(tmp_path / "many.msg", many)]
    result = load_paths(paths)

    deep_docs = [d for d in result.documents if d.name.startswith("deep.msg")]
    assert len(deep_docs) == 6
    assert "the twelfth level" not in _everything(result)
    many_docs = [d for d in result.documents if d.name.startswith("many.msg")]
    assert len(many_docs) == 1 + 200
    assert sorted(s.path.name for s in result.skipped) == [
        "1 more attachment",
        "50 more attachments",
    ]


def test_an_mbox_past_the_documents_bound_says_how_many_were_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bound is 10,000; five (in this process, not the reader's) shows the same lines."""
    monkeypatch.setattr(mail_reader, "MAX_DOCUMENTS", 5)
    box = write_mbox(tmp_path / "box.mbox", [make_eml(subject=f"m{n}") for n in range(8)])
    extracted = extract_mail(box.read_bytes(), ReadSettings())

    assert [found.name for found in extracted.inner] == [
        "0001 m0", "0002 m1", "0003 m2", "0004 m3", "0005 m4", "3 more messages",
    ]  # fmt: skip
    assert extracted.inner[-1].reason == (
        "not read: one file gives at most 5 documents; split the mailbox to read the rest"
    )


def test_names_from_inside_a_mail_file_bring_no_escapes_marks_or_slashes(tmp_path: Path) -> None:
    """A subject or attachment name is the sender's text: it must not put terminal escapes,
    right-to-left overrides or a folder into the names the window, the exports and the command
    line show."""
    hostile = "Invoice \x1b]0;pwned\x07 paid\u202etxt.exe\u200b"
    box = write_mbox(
        tmp_path / "box.mbox",
        [
            make_eml(
                subject=hostile, body="one", attachments=[("..\\..\\a\u202e/b.csv", b"x,y\n")]
            ),
            make_eml(subject="second", body="two"),
        ],
    )
    result = load_paths([box])
    names = [document.name for document in result.documents]
    assert names == [
        "box.mbox/0001 Invoice ]0;pwned paid txt.exe",
        "box.mbox/0001 Invoice ]0;pwned paid txt.exe/b.csv",
        "box.mbox/0002 second",
    ]
