"""A web page where an API reply was expected, told apart and said in a few words.

An API base that names a web server, a proxy's login or error page, or a server that does not speak
the chat API answers with HTML. Its markup says nothing to the user; its title and text usually
say what went wrong ("404 Not Found", "Unsupported method ('POST')").
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

from rlm_desktop import formatting as fmt

SHOWN_CHARS = 120
API_BASE_HINT = "check the API base (an OpenAI-compatible server's usually ends in /v1)"
_LOOKS_LIKE_HTML = re.compile(r"<(!doctype\s+html|html|head|body|title)\b", re.IGNORECASE)
_HIDDEN = frozenset({"script", "style", "noscript", "template"})


class _TextOf(HTMLParser):
    """Collects a page's title and visible text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.title: list[str] = []
        self.text: list[str] = []
        self._open: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in self._open:
            del self._open[len(self._open) - 1 - self._open[::-1].index(tag) :]

    def handle_data(self, data: str) -> None:
        if any(tag in _HIDDEN for tag in self._open):
            return
        (self.title if "title" in self._open else self.text).append(data)


def page_text(body: str) -> str | None:
    """The title and text of `body` when it is an HTML page, in at most `SHOWN_CHARS` characters;
    None when it is not one."""
    if not _LOOKS_LIKE_HTML.search(body[:2000]):
        return None
    parser = _TextOf()
    parser.feed(body[:100_000])
    parser.close()
    title = " ".join(" ".join(parser.title).split())
    text = " ".join(" ".join(parser.text).split())
    if title and text.startswith(title):
        text = text[len(title) :].strip()
    return fmt.one_line(" — ".join(part for part in (title, text) if part), SHOWN_CHARS) or (
        "an empty page"
    )


def web_page_answer(body: str) -> str | None:
    """What to tell the user when an API answered with the web page `body` (None when it did not)."""
    shown = page_text(body)
    if shown is None:
        return None
    return f"the server answered with a web page ({shown!r}), not the chat API: {API_BASE_HINT}"
