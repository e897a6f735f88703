"""Full-text search over a call tree: which calls mention a text, and what to show for them.

A call matches when the text (ignoring case) occurs in anything it holds: its id, kind, model
and status, its prompt, response, answer and error, and every turn's reply, code, output and
traceback. The calls to show are the matches and their ancestors, so that each match is seen in
its place. Live runs keep a search current by handing it the calls that changed.

`locate` finds a saved session's search hit (`store.search`) in the text a view shows.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from rlm_desktop import formatting as fmt
from rlm_desktop.review.call_nodes import CallNode
from rlm_desktop.review.call_tree import CallTree, Changes


def call_texts(node: CallNode) -> Iterator[str]:
    """Every piece of text a call holds, one at a time."""
    yield f"{node.kind} {node.call_id}"
    yield node.model
    yield fmt.status_text(node.status)
    yield node.prompt
    yield node.response
    if node.answer:
        yield node.answer
    if node.error:
        yield node.error
    for turn in node.turns:
        yield turn.reply
        for cell in turn.cells:
            yield cell.code
            yield cell.stdout
            yield cell.stderr
            if cell.error:
                yield cell.error


def mentions(node: CallNode, needle: str) -> bool:
    """True when `needle` (already case-folded) occurs in one of the call's texts."""
    return any(needle in text.casefold() for text in call_texts(node) if text)


class CallSearch:
    """The calls of `tree` that mention `text`, kept current with `update`."""

    def __init__(self, tree: CallTree, text: str) -> None:
        self.text = text
        self.needle = text.casefold()
        self.matched: set[CallNode] = {n for n in tree.nodes.values() if mentions(n, self.needle)}
        self.shown: set[CallNode] = set()
        self._widen()

    def _widen(self) -> None:
        shown: set[CallNode] = set()
        for node in self.matched:
            if node in shown:
                continue
            shown.add(node)
            for ancestor in node.ancestors():
                if ancestor in shown:
                    break
                shown.add(ancestor)
        self.shown = shown

    def __contains__(self, node: object) -> bool:
        return node in self.shown

    def update(self, changes: Changes) -> bool:
        """Test again the calls whose text may have changed; True when the calls to show did."""
        return self.retest((*changes.added, *changes.turns))

    def retest(self, nodes: Iterable[CallNode]) -> bool:
        """Test `nodes` again; True when the calls to show changed."""
        changed = False
        for node in nodes:
            hit = mentions(node, self.needle)
            if hit != (node in self.matched):
                changed = True
                if hit:
                    self.matched.add(node)
                else:
                    self.matched.discard(node)
        if changed:
            before = self.shown
            self._widen()
            return self.shown != before
        return False


def locate(shown: str, text: str, start: int, end: int) -> tuple[int, int] | None:
    """Where the word at `text[start:end]` (a search hit's offsets) is in `shown`, the text as
    a view shows it (cut, stripped, rendered from Markdown), in code points; None when it is
    not there. Where `shown` begins as `text` does, the offsets hold; elsewhere it is the same
    occurrence of the word (the third "lemur" stays the third), or the last one shown."""
    word = text[start:end]
    if not word:
        return None
    if shown[start:end] == word and shown[:start] == text[:start]:
        return start, end
    before = _occurrences(text[:end], word) - 1
    found = list(_positions(shown, word))
    if not found:
        return None
    at = found[min(before, len(found) - 1)]
    return at, at + len(word)


def _occurrences(text: str, word: str) -> int:
    return sum(1 for _ in _positions(text, word))


def _positions(text: str, word: str) -> Iterator[int]:
    at = text.find(word)
    while at >= 0:
        yield at
        at = text.find(word, at + len(word))
