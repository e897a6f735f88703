"""A `QSyntaxHighlighter` driven by a pygments lexer and style.

Pygments lexes the whole document at once (so multi-line strings colour correctly); each block
then looks up the tokens that overlap it. Formats are built once per token type from the style.
The lexing slot is connected to the document before Qt's own reformatting slot (by attaching the
document only afterwards), so blocks are always coloured from fresh tokens.
"""

from __future__ import annotations

import bisect

from pygments.lexer import Lexer
from pygments.lexers import PythonLexer
from pygments.style import Style
from pygments.styles import get_style_by_name
from pygments.token import _TokenType
from pygments.util import ClassNotFound
from PySide6.QtGui import QColor, QFont, QSyntaxHighlighter, QTextCharFormat, QTextDocument


def _style_named(name: str) -> type[Style]:
    """The pygments style `name`, or "default" for a name pygments does not know."""
    style: type[Style]
    try:
        style = get_style_by_name(name)
    except ClassNotFound:
        style = get_style_by_name("default")
    return style


def warm_up(style: str = "default") -> None:
    """Compile the Python lexer's rules and load `style`: tens of milliseconds the first time,
    paid here (plain pygments, safe in a worker thread) instead of by the first cell shown."""
    list(PythonLexer(stripnl=False, ensurenl=False).get_tokens("x = 1\n"))
    _style_named(style)


def _format_for(style: type[Style], token: _TokenType) -> QTextCharFormat:
    spec = style.style_for_token(token)
    fmt = QTextCharFormat()
    if spec.get("color"):
        fmt.setForeground(QColor(f"#{spec['color']}"))
    if spec.get("bold"):
        fmt.setFontWeight(QFont.Weight.Bold)
    if spec.get("italic"):
        fmt.setFontItalic(True)
    if spec.get("underline"):
        fmt.setFontUnderline(True)
    return fmt


class PygmentsHighlighter(QSyntaxHighlighter):
    """Colours a `QTextDocument` with pygments; Python by default."""

    def __init__(
        self, document: QTextDocument, style: str = "default", lexer: Lexer | None = None
    ) -> None:
        super().__init__(document.parent() or document)
        self._lexer = lexer or PythonLexer(stripnl=False, ensurenl=False)
        self._formats: dict[_TokenType, QTextCharFormat] = {}
        self._starts: list[int] = []
        self._spans: list[tuple[int, int, QTextCharFormat]] = []
        self._style = _style_named(style)
        document.contentsChange.connect(lambda *_args: self._relex())
        self._relex(document)
        self.setDocument(document)

    def _format(self, token: _TokenType) -> QTextCharFormat:
        fmt = self._formats.get(token)
        if fmt is None:
            fmt = self._formats[token] = _format_for(self._style, token)
        return fmt

    def _relex(self, document: QTextDocument | None = None) -> None:
        doc = document or self.document()
        text = doc.toPlainText() if doc is not None else ""
        spans: list[tuple[int, int, QTextCharFormat]] = []
        for position, token, value in self._lexer.get_tokens_unprocessed(text):
            if value and not value.isspace():
                spans.append((position, len(value), self._format(token)))
        self._spans = spans
        self._starts = [s[0] for s in spans]

    def highlightBlock(self, text: str) -> None:
        """Apply the formats of the tokens that overlap the current block."""
        block_start = self.currentBlock().position()
        block_end = block_start + len(text)
        i = max(0, bisect.bisect_right(self._starts, block_start) - 1)
        while i < len(self._spans):
            start, length, fmt = self._spans[i]
            if start >= block_end:
                break
            lo, hi = max(start, block_start), min(start + length, block_end)
            if hi > lo:
                self.setFormat(lo - block_start, hi - lo, fmt)
            i += 1
