"""Opening a search hit at its word: the call that holds it chosen, the tab that shows its text
in front, the text scrolled into view and the matched word selected.

A hit (`store.search`) names its field and the word's offsets in the field's whole text, in code
points. Each view shows that text its own way (output cut as the model saw it, code without its
last new lines, a reply without its code, the answer rendered from Markdown), so the word is
found in the text the view holds (`locate`) and selected there in Qt's own units (UTF-16: an
emoji before the word counts two).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import QTimer
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QTabWidget, QTextEdit, QWidget

from rlm_desktop.engine.parsing import CODE_BLOCK
from rlm_desktop.review.search import locate

if TYPE_CHECKING:
    from rlm_desktop.review.call_tree import CallNode
    from rlm_desktop.ui.console.blocks import CellView, OutputBlock
    from rlm_desktop.ui.console.view import ConsoleView, TurnCard
    from rlm_desktop.ui.run.answer_panel import AnswerPanel
    from rlm_desktop.ui.tree.details import DetailPanel
    from rlm_desktop.ui.tree.model import CallTreeModel
    from rlm_desktop.ui.tree.panel import TreePanel

Hit = dict[str, Any]
TextView = QLabel | QPlainTextEdit | QTextEdit


class Workspace(Protocol):
    """What opening a hit needs of the window's workspace (`ui/window/workspace.py`)."""

    @property
    def reviewing(self) -> str | None: ...
    @property
    def model(self) -> CallTreeModel: ...
    @property
    def tree_panel(self) -> TreePanel: ...
    @property
    def detail_tabs(self) -> QTabWidget: ...
    @property
    def answer(self) -> AnswerPanel: ...
    @property
    def console(self) -> ConsoleView: ...
    @property
    def details(self) -> DetailPanel: ...


CELL_OUTPUTS = {"stdout": "stdout", "stderr": "stderr", "error": "traceback"}
"""A cell's searched fields -> the console's name for the block that shows each."""


def land(workspace: Workspace, hit: Hit) -> TextView | None:
    """Show `hit` in the workspace (which must be showing its session): choose its call and tab,
    select its word and bring it into view. Returns the view holding the word, or None when it
    cannot be found there (the call is still chosen)."""
    tree = workspace.model.tree
    if workspace.reviewing is None or tree.run.run_id != hit.get("session_id"):
        return None  # the session did not open (a run in progress, or gone)
    node = tree.nodes.get(hit.get("call_id") or "") or tree.root
    if node is None:
        return None
    workspace.tree_panel.select(node)
    field, start, end = hit["field"], hit.get("start"), hit.get("end")
    if start is None or end is None:
        return None
    if hit.get("call_id") is None:
        if field == "answer":
            _show_tab_of(workspace, workspace.answer)
            return _select(workspace.answer.text, workspace.answer.answer, start, end)
        return _in_call_tab(workspace, node, "prompt", start, end)
    if hit.get("turn") is None:
        return _in_call_tab(workspace, node, field, start, end)
    _show_tab_of(workspace, workspace.console)
    return _in_console(workspace, node, hit, start, end)


def _in_call_tab(
    workspace: Workspace, node: CallNode, field: str, start: int, end: int
) -> TextView | None:
    """The call's prompt, response or error, in the Call tab."""
    details = workspace.details
    edit, text = {
        "prompt": (details.prompt, node.prompt),
        "response": (details.response, node.response),
        "error": (details.error, node.error or ""),
    }[field]
    _show_tab_of(workspace, details)
    details.tabs.setCurrentWidget(edit)
    return _select(edit, text, start, end)


def _in_console(
    workspace: Workspace, node: CallNode, hit: Hit, start: int, end: int
) -> TextView | None:
    """A turn's reply, or a cell's code, output, stderr or traceback, in the console."""
    console = workspace.console
    turn = hit["turn"]
    if turn >= len(console.cards) or turn >= len(node.turns):
        return None
    card, field = console.cards[turn], hit["field"]
    if field in ("reply", "unfinished_reply"):
        return _in_reply(
            workspace, card, node.turns[turn].reply or node.turns[turn].streaming, start, end
        )
    cell = next((c for c in card.cells if c.number == hit.get("cell")), None)
    if cell is None:
        return None
    if field == "code":
        console.reveal(cell)
        return _select(cell.code, _cell_text(node, turn, cell, field), start, end)
    block = next((b for b in cell.outputs if b.kind == CELL_OUTPUTS.get(field)), None)
    if block is None:
        return None
    _show_all_for(block, start, end)
    console.reveal(block)
    return _select(block.view, block.full_text, start, end)


def _in_reply(
    workspace: Workspace, card: TurnCard, reply: str, start: int, end: int
) -> TextView | None:
    """A word of a turn's reply: in the code of a block the reply wrote (its cell's, or the
    code still being written), or in what it said around its code."""
    console = workspace.console
    for index, block in enumerate(CODE_BLOCK.finditer(reply)):
        if block.start(2) <= start < block.end(2):
            code = card.cells[index].code if index < len(card.cells) else card.live_code
            if code is None:
                return None
            console.reveal(code.parentWidget() or code)
            at = block.start(2)
            return _select(code, block.group(2), start - at, end - at)
    said = CODE_BLOCK.sub("", reply[:end])  # the word is the same occurrence here
    console.reveal(card)
    return _select(card.prose, said, len(said) - (end - start), len(said))


def _show_tab_of(workspace: Workspace, widget: QWidget) -> None:
    """Bring the detail tab that holds `widget` into view."""
    tabs = workspace.detail_tabs
    for index in range(tabs.count()):
        page = tabs.widget(index)
        if page is not None and (page is widget or page.isAncestorOf(widget)):
            tabs.setCurrentIndex(index)
            return


def _cell_text(node: CallNode, turn: int, cell: CellView, field: str) -> str:
    executed = node.turns[turn].cells
    numbers = node.turns[turn].cell_numbers
    index = numbers.index(cell.number) if cell.number in numbers else cell.number - 1
    return str(getattr(executed[index], field) or "") if index < len(executed) else ""


def _show_all_for(block: OutputBlock, start: int, end: int) -> None:
    """Show the whole output when the word is in the part cut out of it."""
    shown = block.view.toPlainText()
    cut_out = locate(shown, block.full_text, start, end) != (start, end)
    if cut_out and shown != block.full_text.removesuffix("\n"):
        block.toggle_all()


def _select(view: QWidget, text: str, start: int, end: int) -> TextView | None:
    """Select the word `text[start:end]` where `view` shows it, and scroll it into view."""
    if isinstance(view, QLabel):
        shown = view.text()
    elif isinstance(view, QPlainTextEdit | QTextEdit):
        shown = view.toPlainText()
    else:
        return None
    found = locate(shown, text, start, end)
    if found is None:
        return None
    begin, finish = (_utf16(shown, at) for at in found)
    if isinstance(view, QLabel):
        view.setSelection(begin, finish - begin)
        return view
    cursor = QTextCursor(view.document())
    cursor.setPosition(begin)
    cursor.setPosition(finish, QTextCursor.MoveMode.KeepAnchor)
    view.setTextCursor(cursor)
    view.ensureCursorVisible()
    QTimer.singleShot(0, view, view.ensureCursorVisible)  # again once its box is laid out
    return view


def _utf16(text: str, index: int) -> int:
    """Qt's position (UTF-16 units) of the code point `index` of `text`."""
    return len(text[:index].encode("utf-16-le")) // 2
