"""The pieces of a console cell: highlighted code, and output blocks with "show all" and "copy".

Every text box is only as tall as its text (up to `MAX_VISIBLE_LINES`) and leaves the mouse
wheel to the console unless the user clicked into it, so scrolling over a cell scrolls the turns.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QGuiApplication, QResizeEvent, QWheelEvent
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from rlm_desktop.engine.events import CellExecuted
from rlm_desktop.engine.truncation import truncate_middle
from rlm_desktop.ui.appearance.theme import colors
from rlm_desktop.ui.console.highlighter import PygmentsHighlighter

MAX_VISIBLE_LINES = 18


def _fitted_height(edit: QPlainTextEdit, lines: int) -> int:
    """The height that shows `lines` lines of `edit` (capped), plus room for a horizontal scroll
    bar when a line is too long to show whole."""
    metrics = edit.fontMetrics()
    shown = max(1, min(lines, MAX_VISIBLE_LINES))
    margins = int(edit.document().documentMargin() * 2) + edit.frameWidth() * 2 + 4
    sideways = edit.horizontalScrollBar()
    scroll = sideways.sizeHint().height() if sideways.maximum() > 0 else 0
    return shown * metrics.lineSpacing() + margins + scroll


def _fit_height(edit: QPlainTextEdit, lines: int) -> None:
    """Size `edit` to show `lines` lines (see `_fitted_height`)."""
    edit.setFixedHeight(_fitted_height(edit, lines))


class WrappedText(QPlainTextEdit):
    """Read-only text that grows with its (wrapped) lines, up to `MAX_VISIBLE_LINES`."""

    _widths: tuple[int, ...] = ()
    """The widths of the last refits made by resizing."""
    _settled: frozenset[int] = frozenset()
    """Two widths the box has been flipping between (a scroll bar of the console coming and going as
    the box's height changes): at those it keeps the taller fit instead of refitting, which would
    flip it again, forever."""

    def resizeEvent(self, event: QResizeEvent) -> None:
        """Refit the height to the lines the new width wraps into."""
        super().resizeEvent(event)
        width = event.size().width()
        if width == event.oldSize().width():
            return  # only the height changed: the refit did that
        if width in self._settled:
            return
        if len(self._widths) == 2 and self._widths[0] == width != self._widths[1]:
            self._settled = frozenset(self._widths)
            self.setFixedHeight(max(self.height(), _fitted_height(self, self.visual_lines())))
            return
        self._widths = (*self._widths, width)[-2:]
        self.refit()

    def refit(self) -> None:
        """Size the box to its text (and forget any flipping: the text or the wrap changed)."""
        self._settled = frozenset()
        _fit_height(self, self.visual_lines())

    def set_wrap(self, wrap: bool) -> None:
        """Wrap long lines at the box's width, or scroll sideways to read them."""
        mode = QPlainTextEdit.LineWrapMode
        self.setLineWrapMode(mode.WidgetWidth if wrap else mode.NoWrap)
        self.refit()

    def visual_lines(self) -> int:
        """How many lines the text takes at the current width (counted up to the cap)."""
        if self.lineWrapMode() == QPlainTextEdit.LineWrapMode.NoWrap:
            return self.document().blockCount()
        width = max(1, self.viewport().width() - 2 * int(self.document().documentMargin()))
        metrics = self.fontMetrics()
        lines = 0
        block = self.document().firstBlock()
        while block.isValid() and lines <= MAX_VISIBLE_LINES:
            advance = metrics.horizontalAdvance(block.text())
            lines += max(1, -(-advance // width))
            block = block.next()
        return lines

    def wheelEvent(self, event: QWheelEvent) -> None:
        """Scroll this box only once the user clicked into it, or sideways; else pass the wheel
        on to the console (an ignored wheel event goes to the parent widgets)."""
        delta = event.angleDelta()
        if self.hasFocus() or abs(delta.x()) > abs(delta.y()):
            super().wheelEvent(event)
        else:
            event.ignore()


def _text_view(name: str, text: str, font: QFont) -> WrappedText:
    edit = WrappedText()
    edit.setObjectName(name)
    edit.setReadOnly(True)
    edit.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
    edit.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    edit.setFont(font)
    edit.setPlainText(text)
    edit.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
    flags = Qt.TextInteractionFlag
    edit.setTextInteractionFlags(flags.TextSelectableByMouse | flags.TextSelectableByKeyboard)
    _fit_height(edit, text.count("\n") + 1)
    return edit


def _shown(text: str) -> str:
    """Output as the box shows it: without the final newline, which would be an empty line."""
    return text[:-1] if text.endswith("\n") else text


class CodeView(WrappedText):
    """Read-only code with pygments colours; long lines scroll sideways unless `wrap`."""

    def __init__(self, code: str, font: QFont, wrap: bool = False) -> None:
        super().__init__()
        self.setObjectName("code")
        self.setReadOnly(True)
        self.setFont(font)
        self.setAccessibleName("Code")
        self.highlighter = PygmentsHighlighter(self.document(), colors().pygments_style)
        self.setPlainText(code.rstrip("\n"))
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.set_wrap(wrap)


class OutputBlock(QFrame):
    """A labelled block of output, truncated as the model saw it, with show all and copy."""

    def __init__(self, kind: str, text: str, limit: int, font: QFont) -> None:
        super().__init__()
        self.kind = kind
        self.full_text = text
        self.shown_text, self.truncated = truncate_middle(text, limit), len(text) > limit
        self._showing_all = False
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 2, 0, 2)
        layout.setSpacing(1)
        header = QHBoxLayout()
        header.setSpacing(8)
        label = QLabel(kind)
        label.setObjectName("errorLabel" if kind in ("stderr", "traceback") else "muted")
        header.addWidget(label)
        self.note = QLabel()
        self.note.setObjectName("muted")
        header.addWidget(self.note)
        self._describe(limit)
        header.addStretch(1)
        self.show_all_button = self._link("Show all", self.toggle_all)
        self.show_all_button.setVisible(self.truncated)
        header.addWidget(self.show_all_button)
        self.copy_button = self._link("Copy", self.copy)
        header.addWidget(self.copy_button)
        layout.addLayout(header)
        style = "stderr" if kind in ("stderr", "traceback") else "stdout"
        self.view = _text_view(style, _shown(self.shown_text), font)
        self.view.setAccessibleName(kind)
        layout.addWidget(self.view)

    def _link(self, text: str, slot: Callable[[], object]) -> QToolButton:
        button = QToolButton()
        button.setObjectName("link")
        button.setText(text)
        button.setAccessibleName(f"{text} {self.kind}")
        button.setCursor(Qt.CursorShape.PointingHandCursor)
        button.clicked.connect(slot)
        return button

    def _describe(self, limit: int) -> None:
        self._limit = limit
        total = len(self.full_text)
        if not self.truncated:
            self.note.setText("")
        elif self._showing_all:
            self.note.setText(f"all {total:,} characters; the model saw {limit:,}")
        else:
            self.note.setText(f"cut to {limit:,} of {total:,} characters, as the model saw it")

    def set_limit(self, limit: int) -> None:
        """Cut to a new limit (a turn's cells share the model's output limit)."""
        if len(self.full_text) <= limit:
            return
        self.shown_text, self.truncated = truncate_middle(self.full_text, limit), True
        self.show_all_button.show()
        self._describe(limit)
        if not self._showing_all:
            self.view.setPlainText(_shown(self.shown_text))
            self.view.refit()

    def toggle_all(self) -> None:
        """Switch between the text as the model saw it and the whole text."""
        self._showing_all = not self._showing_all
        text = self.full_text if self._showing_all else self.shown_text
        self.view.setPlainText(_shown(text))
        self.view.refit()
        label = "Show less" if self._showing_all else "Show all"
        self.show_all_button.setText(label)
        self.show_all_button.setAccessibleName(f"{label} {self.kind}")
        self._describe(self._limit)

    def copy(self) -> None:
        """Put the whole text on the clipboard."""
        QGuiApplication.clipboard().setText(self.full_text)


class CellView(QWidget):
    """One code block and what running it printed, with its duration.

    `number` is the cell's number within its call, as tracebacks name it (`<cell 3>`).
    """

    def __init__(
        self, cell: CellExecuted, number: int, limit: int, font: QFont, wrap: bool = False
    ) -> None:
        super().__init__()
        self.number = number
        self.failed = bool(cell.error or cell.timed_out)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 4)
        layout.setSpacing(2)
        meta = [f"cell {number}", f"{cell.duration_s:.2f} s"]
        if cell.timed_out:
            meta.append("timed out")
        if cell.variables_lost:
            meta.append("worker restarted: variables lost")
        info = QLabel(" · ".join(meta))
        info.setObjectName("errorLabel" if cell.timed_out or cell.error else "muted")
        layout.addWidget(info)
        self.code = CodeView(cell.code, font, wrap)
        layout.addWidget(self.code)
        self.outputs: list[OutputBlock] = []
        for kind, text in (
            ("stdout", cell.stdout),
            ("stderr", cell.stderr),
            ("traceback", cell.error or ""),
        ):
            if text:
                block = OutputBlock(kind, text, limit, font)
                self.outputs.append(block)
                layout.addWidget(block)
        if not self.outputs:
            quiet = QLabel("(no output)")
            quiet.setObjectName("muted")
            layout.addWidget(quiet)
