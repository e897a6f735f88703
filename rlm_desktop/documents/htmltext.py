"""HTML to readable text with the standard library's tolerant `html.parser`.

Scripts, styles and other non-content elements are dropped; block elements become line breaks,
table cells are separated by tabs, `<pre>` keeps its whitespace and the `<title>` leads the text.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

_HIDDEN = frozenset(
    (
        "script",
        "style",
        "noscript",
        "template",
        "svg",
        "math",
        "iframe",
        "object",
        "canvas",
        "select",
    )
)
_BLOCK = frozenset(
    (
        "address",
        "article",
        "aside",
        "blockquote",
        "details",
        "div",
        "dl",
        "fieldset",
        "figcaption",
        "figure",
        "footer",
        "form",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "header",
        "hr",
        "main",
        "nav",
        "ol",
        "p",
        "pre",
        "section",
        "summary",
        "table",
        "ul",
        "caption",
    )
)
"""Elements set apart by a blank line."""
_LINE = frozenset(("br", "li", "tr", "dt", "dd", "option"))
"""Elements that start a new line."""
_CELL = frozenset(("td", "th"))
_SPACES = re.compile(r"[ \t\r\f\v]+")
_BLANK_RUNS = re.compile(r"\n{3,}")
# Whitespace inside <pre> is shielded from the clean-up as control characters, then restored.
_SHIELD = str.maketrans({"\n": "\x00", " ": "\x01", "\t": "\x02"})
_UNSHIELD = str.maketrans({"\x00": "\n", "\x01": " ", "\x02": "\t"})


class _TextCollector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title: list[str] = []
        self._hidden = 0
        self._pre = 0
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self._in_title = True
        elif tag in _HIDDEN:
            self._hidden += 1
        elif tag == "pre":
            self._pre += 1
        if tag in _BLOCK or tag in _LINE:
            self.parts.append("\n")
        elif tag in _CELL:
            self.parts.append("\t")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _BLOCK or tag in _LINE:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        elif tag in _HIDDEN and self._hidden:
            self._hidden -= 1
        elif tag == "pre" and self._pre:
            self._pre -= 1
        if tag in _BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title.append(data)
        elif self._hidden:
            return
        elif self._pre:
            self.parts.append(data.translate(_SHIELD))
        else:
            self.parts.append(_SPACES.sub(" ", data.replace("\n", " ")))


def html_to_text(markup: str) -> str:
    """The visible text of an HTML page, one block per line."""
    collector = _TextCollector()
    collector.feed(markup)
    collector.close()
    body = "".join(collector.parts)
    lines = [line.strip(" \t") for line in body.split("\n")]
    text = _BLANK_RUNS.sub("\n\n", "\n".join(lines)).strip("\n").translate(_UNSHIELD)
    title = " ".join("".join(collector.title).split())
    if title and not text.startswith(title):
        text = f"{title}\n\n{text}" if text else title
    return text
