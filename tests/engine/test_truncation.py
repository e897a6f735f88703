"""`truncate_middle`: what the model is shown of a long output, head and tail kept."""

from __future__ import annotations

import re

import pytest

from rlm_desktop.engine.truncation import truncate_middle

MARKER = re.compile(r"\n\[\.\.\. ([\d,]+) characters cut; print less or slice \.\.\.\]\n")


def test_short_text_is_untouched() -> None:
    assert truncate_middle("hello", 200) == "hello"
    assert truncate_middle("x" * 200, 200) == "x" * 200
    assert truncate_middle("", 200) == ""


@pytest.mark.parametrize(("size", "limit"), [(201, 200), (1_000, 200), (50_000, 20_000)])
def test_long_text_fits_the_limit_and_keeps_both_ends(size: int, limit: int) -> None:
    text = "".join(chr(ord("a") + i % 26) for i in range(size))
    out = truncate_middle(text, limit)
    marker = MARKER.search(out)
    assert marker is not None
    assert len(out) <= limit
    head, tail = out[: marker.start()], out[marker.end() :]
    assert text.startswith(head)
    assert text.endswith(tail)
    assert len(head) >= len(tail) > 0


@pytest.mark.parametrize(("size", "limit"), [(1_000, 200), (50_000, 20_000)])
def test_the_marker_says_how_many_characters_are_hidden(size: int, limit: int) -> None:
    text = "y" * size
    out = truncate_middle(text, limit)
    marker = MARKER.search(out)
    assert marker is not None
    shown = len(out) - len(marker.group(0))
    assert int(marker.group(1).replace(",", "")) == size - shown
