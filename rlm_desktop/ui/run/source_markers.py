"""Numbered source markers in a rendered answer, out of the answer's own reach.

The answer is a model's Markdown, rendered with raw HTML off. It can still write links, and a
link to `source:1` would look and act like a marker. So every link it wrote that is not a web
or mail link is disarmed (its text kept, as plain text) before the markers are inserted, and the
markers are superscript, which Markdown cannot write: any `source:` link left in the document is
one of ours. Images are made text too: Qt would read the file an image names.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from PySide6.QtCore import QUrl
from PySide6.QtGui import (
    QColor,
    QGuiApplication,
    QPalette,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextFragment,
)

from rlm_desktop.review.health.sources import CheckedSource, match_label
from rlm_desktop.ui.appearance.theme import colors

SCHEME = "source"
WEB_SCHEMES = frozenset({"http", "https", "mailto"})
"""The links of an answer that stay links (opened by the desktop, outside the app)."""
CLOSING_MARKS = "\"'”’»›"
"""A marker goes after the quotation mark that closes its passage, not inside it."""


def source_number(url: QUrl) -> int | None:
    """The number of the source a marker's link points at, or None for any other link."""
    path = url.path()
    if url.scheme() != SCHEME or not path.isdigit():
        return None
    return int(path)


def fragments(document: QTextDocument) -> Iterator[QTextFragment]:
    """Every run of text of one format in `document`, in order."""
    block = document.begin()
    while block.isValid():
        pieces = block.begin()
        while not pieces.atEnd():
            yield pieces.fragment()
            pieces += 1
        block = block.next()


def disarm_links(document: QTextDocument) -> int:
    """Make every link in `document` that is not a web or mail link plain text; returns how
    many runs of text were disarmed."""
    armed: list[tuple[int, int, QTextCharFormat]] = []
    for fragment in fragments(document):
        style = fragment.charFormat()
        linked = style.isAnchor() or bool(style.anchorHref())
        if linked and QUrl(style.anchorHref()).scheme() not in WEB_SCHEMES:
            armed.append((fragment.position(), fragment.length(), style))
    for start, length, style in armed:
        plain = QTextCharFormat(style)
        plain.setAnchor(False)
        plain.setAnchorHref("")
        plain.clearForeground()
        plain.setFontUnderline(False)
        cursor = QTextCursor(document)
        cursor.setPosition(start)
        cursor.setPosition(start + length, QTextCursor.MoveMode.KeepAnchor)
        cursor.setCharFormat(plain)
    return len(armed)


def disarm_images(document: QTextDocument) -> int:
    """Put `[image: NAME]` in place of every image in `document`: Qt reads an image's file by
    its name when laying it out, and an answer's names are the model's. Returns how many."""
    images: list[tuple[int, str]] = []
    for fragment in fragments(document):
        style = fragment.charFormat()
        if style.isImageFormat():
            name = style.toImageFormat().name()
            images += [(fragment.position() + k, name) for k in range(fragment.length())]
    for position, name in reversed(images):
        cursor = QTextCursor(document)
        cursor.setPosition(position)
        cursor.setPosition(position + 1, QTextCursor.MoveMode.KeepAnchor)
        cursor.insertText(f"[image: {name}]", QTextCharFormat())
    return len(images)


def marker_format(source: CheckedSource) -> QTextCharFormat:
    """A marker's look: a superscript link, in the warning colour for a source not found."""
    style = QTextCharFormat()
    style.setAnchor(True)
    style.setAnchorHref(f"{SCHEME}:{source.number}")
    style.setVerticalAlignment(QTextCharFormat.VerticalAlignment.AlignSuperScript)
    link = QGuiApplication.palette().color(QPalette.ColorRole.Link)
    style.setForeground(QColor(colors().warning) if not source.found else link)
    style.setToolTip(f"Source [{source.number}]: {match_label(source)}")
    return style


def insert_markers(document: QTextDocument, sources: Sequence[CheckedSource]) -> int:
    """Put `[n]` after each source's passage where the rendered answer holds it word for word,
    the others' at the end; returns how many went inside the text."""
    end = QTextCursor(document)
    end.movePosition(QTextCursor.MoveOperation.End)
    placed: list[tuple[int, CheckedSource]] = []
    for source in sources:
        position = _after_passage(document, source.quote)
        placed.append((end.position() if position is None else position, source))
    inside = sum(1 for position, _ in placed if position < end.position())
    # From the last to the first, so that inserting one keeps the others' positions.
    for position, source in sorted(placed, key=lambda item: (-item[0], -item[1].number)):
        cursor = QTextCursor(document)
        cursor.setPosition(position)
        cursor.insertText(f"[{source.number}]", marker_format(source))
    return inside


def _rendered(quote: str) -> str:
    """`quote` as the rendered answer shows it: its Markdown (`**May 2025**`) made text."""
    rendered = QTextDocument()
    rendered.setMarkdown(quote, QTextDocument.MarkdownFeature.MarkdownDialectGitHub)
    return " ".join(rendered.toPlainText().split())


def _after_passage(document: QTextDocument, quote: str) -> int | None:
    """Where a marker for `quote` goes: after the passage (and its closing quotation mark)."""
    for text in dict.fromkeys((quote.strip(), _rendered(quote))):
        if not text:
            continue
        found = document.find(text, 0, QTextDocument.FindFlag.FindCaseSensitively)
        if not found.isNull():
            break
    else:
        return None
    position = found.selectionEnd()
    if document.characterAt(position) in CLOSING_MARKS:
        position += 1
    return position
