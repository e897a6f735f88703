"""The README and the manual in docs/ hold together: every relative link and image resolves to a
file of the checkout, every `#anchor` names a heading of its page (as GitHub makes them), and every
screenshot is shown somewhere."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token

from tests.cli import ROOT

_PARSER = MarkdownIt("commonmark").enable("table")


def pages(root: Path) -> list[Path]:
    """README.md and every Markdown page under docs/."""
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def _inline_tokens(tokens: list[Token]) -> Iterator[Token]:
    for token in tokens:
        yield token
        yield from _inline_tokens(token.children or [])


def heading_anchors(text: str) -> set[str]:
    """The anchors GitHub gives the headings of `text`: lower case, punctuation dropped, spaces
    made hyphens, a repeated one numbered (`-1`, `-2`, ...)."""
    tokens = _PARSER.parse(text)
    anchors: set[str] = set()
    for opening, inline in zip(tokens, tokens[1:], strict=False):
        if opening.type != "heading_open":
            continue
        words = "".join(
            t.content
            for t in _inline_tokens(inline.children or [])
            if t.type in ("text", "code_inline")
        )
        slug = "".join(
            c for c in words.strip().lower() if c in " -_" or unicodedata.category(c)[0] in "LN"
        ).replace(" ", "-")
        unique, n = slug, 0
        while unique in anchors:
            n += 1
            unique = f"{slug}-{n}"
        anchors.add(unique)
    return anchors


def targets(text: str) -> Iterator[str]:
    """Every link's and image's target in `text`."""
    for token in _inline_tokens(_PARSER.parse(text)):
        if token.type == "link_open":
            yield str(token.attrs["href"])
        elif token.type == "image":
            yield str(token.attrs["src"])


def broken_links(root: Path) -> list[str]:
    """One line for each relative link, image or anchor in `root`'s pages that leads nowhere."""
    problems: list[str] = []
    for page in pages(root):
        for target in targets(page.read_text(encoding="utf-8")):
            parts = urlsplit(target)
            if parts.scheme or parts.netloc:
                continue
            where = f"{page.relative_to(root)}: {target}"
            file = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if not file.is_relative_to(root.resolve()):
                problems.append(f"{where}: outside the checkout")
            elif not file.exists():
                problems.append(f"{where}: no such file")
            elif (
                parts.fragment
                and file.suffix == ".md"
                and parts.fragment not in heading_anchors(file.read_text(encoding="utf-8"))
            ):
                problems.append(f"{where}: no heading makes #{parts.fragment}")
    return problems


def test_every_relative_link_image_and_anchor_resolves() -> None:
    assert broken_links(ROOT) == []


def test_every_screenshot_is_shown_in_the_readme_or_the_docs() -> None:
    shown = {
        (page.parent / urlsplit(target).path).resolve()
        for page in pages(ROOT)
        for target in targets(page.read_text(encoding="utf-8"))
    }
    pictures = sorted((ROOT / "docs" / "screenshots").glob("*.png"))
    assert pictures
    assert [p.name for p in pictures if p.resolve() not in shown] == []


def test_the_readme_is_a_front_page_that_links_the_manual() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) < 150
    linked = set(targets(readme))
    for page in ("manual", "install", "providers", "command-line", "figures", "development"):
        assert f"docs/{page}.md" in linked


@pytest.mark.parametrize(
    ("target", "problem"),
    [
        ("docs/missing.md", "no such file"),
        ("docs/screenshots/gone.png", "no such file"),
        ("docs/manual.md#no-such-heading", "no heading makes #no-such-heading"),
        ("#nowhere", "no heading makes #nowhere"),
        ("../outside.md", "outside the checkout"),
    ],
)
def test_the_check_names_a_broken_link(tmp_path: Path, target: str, problem: str) -> None:
    (tmp_path / "outside.md").write_text("# Outside\n", encoding="utf-8")
    root = tmp_path / "checkout"
    (root / "docs" / "screenshots").mkdir(parents=True)
    (root / "docs" / "manual.md").write_text("# Using it\n\n## The window\n", encoding="utf-8")
    (root / "docs" / "screenshots" / "main.png").write_bytes(b"")
    link = f"![a picture]({target})" if target.endswith(".png") else f"[a link]({target})"
    (root / "README.md").write_text(
        f"# Title\n\n[fine](docs/manual.md#the-window) ![fine](docs/screenshots/main.png) {link}\n",
        encoding="utf-8",
    )
    assert broken_links(root) == [f"README.md: {target}: {problem}"]


def test_anchors_are_made_as_github_makes_them() -> None:
    text = "# The `run` command\n\n## Side by side: 2× faster!\n\n## Notes\n\n## Notes\n"
    assert heading_anchors(text) == {"the-run-command", "side-by-side-2-faster", "notes", "notes-1"}
