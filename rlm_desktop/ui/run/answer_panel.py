"""The run's final answer, read first, with its sources under it and its figures last (cost,
tokens, time, sub-calls, depth, sandbox level).

The card's colour, icon and title follow how the run ended (`formatting.status_tone`): green
only for a completed run, the warning colour for a run stopped by the user or a limit, the error
colour for a failed one; the style sheet colours the card by its `tone` property.

Once the run's sources are checked (`show_sources`), the answer carries a numbered marker per
source and the card lists them, with the passages the sub-calls read; a marker or a row with a
passage emits `source_chosen` (the documents preview opens it).
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QUrl, Signal
from PySide6.QtGui import (
    QDesktopServices,
    QGuiApplication,
    QResizeEvent,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
)
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QTextBrowser,
    QVBoxLayout,
)

from rlm_desktop import formatting as fmt
from rlm_desktop.engine.events import RunFinished
from rlm_desktop.engine.llm import AUTH_STATUS
from rlm_desktop.engine.sandbox.level import shown_level
from rlm_desktop.review.health.provenance import ReadPassage
from rlm_desktop.review.health.sources import CheckedSource
from rlm_desktop.ui.appearance.theme import repolish, status_icon
from rlm_desktop.ui.run.source_markers import (
    WEB_SCHEMES,
    disarm_images,
    disarm_links,
    insert_markers,
    source_number,
)
from rlm_desktop.ui.run.sources_list import SourcesList, source_passage
from rlm_desktop.ui.shared.widgets import plain_label

MARKDOWN = (
    QTextDocument.MarkdownFeature.MarkdownDialectGitHub
    | QTextDocument.MarkdownFeature.MarkdownNoHTML
)
SOURCES_SHARE = 0.4
"""The most of the card's height the Sources list takes (then it scrolls); the answer keeps the
rest."""
ICON_SIZE = 16
KEY_ADVICE = "Check the API key in Settings → Providers (Ctrl+,)."


class AnswerPanel(QFrame):
    """Hidden until a run finishes; then its answer (or why there is none) and its totals.

    `source_chosen(ChosenPassage)` fires when a source's marker or row, or a passage read to
    answer, is clicked.
    """

    source_chosen = Signal(object)

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("answerCard")
        self.setAccessibleName("Final answer")
        self.icon = QLabel()
        self.icon.setAccessibleName("Run status")
        self.title = plain_label("Answer")
        self.title.setObjectName("answerTitle")
        self.tone = "ok"
        self.stats = plain_label("")
        self.stats.setObjectName("muted")
        self.copy_button = QPushButton("Copy")
        self.copy_button.setAccessibleName("Copy the answer")
        self.copy_button.clicked.connect(self.copy)
        self.text = QTextBrowser()
        # Links are followed here: web links by the desktop, markers to the preview, no others.
        self.text.setOpenLinks(False)
        self.text.anchorClicked.connect(self._follow)
        self.text.setAccessibleName("Answer text")
        self.text.setFrameShape(QFrame.Shape.NoFrame)
        self.text.setStyleSheet("background: transparent;")
        self.stats.setWordWrap(True)
        # Its longest word (the sandbox level) would otherwise set the window's least width.
        self.stats.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.warnings = plain_label("")
        self.warnings.setObjectName("warningLabel")
        self.warnings.setAccessibleName("What could not be saved")
        self.warnings.setWordWrap(True)
        self.warnings.hide()
        header = QHBoxLayout()
        header.addWidget(self.icon)
        header.addWidget(self.title)
        header.addStretch(1)
        header.addWidget(self.copy_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 6, 10, 6)
        layout.setSpacing(2)
        layout.addLayout(header)
        layout.addWidget(self.warnings)
        layout.addWidget(self.text, 100)  # all the room a long answer needs; then the stretch
        self.sources_list = SourcesList()
        self.sources_list.chosen.connect(self.source_chosen)
        layout.addWidget(self.sources_list)
        layout.addWidget(self.stats)
        layout.addStretch(1)  # a short answer: its sources and figures right under it
        self.sources_list.itemExpanded.connect(lambda _item: self.sources_list.updateGeometry())
        self.sources_list.itemCollapsed.connect(lambda _item: self.sources_list.updateGeometry())
        self.answer = ""
        self._error = ""
        self._answered = False
        self.sources: tuple[CheckedSource, ...] = ()
        self.read: tuple[ReadPassage, ...] = ()
        self.hide()

    def show_result(self, finished: RunFinished, retries: int = 0) -> None:
        """Show how the run ended; `retries` (the requests sent again in the run) are told on a
        failure's card, since a failure after retries is the provider's, not a first mishap."""
        self.answer = finished.answer
        self.sources, self.read = (), ()  # checked for this answer later (`show_sources`)
        self.sources_list.show_sources((), ())
        self.tone = fmt.status_tone(finished.status)
        answered = finished.answer_kind == "answer"
        refused = finished.refused_calls if answered and finished.error else 0
        self.title.setText(
            fmt.ending_title(finished.status, answered=answered, refused_calls=refused)
        )
        self.icon.setPixmap(status_icon(finished.status).pixmap(ICON_SIZE, ICON_SIZE))
        self.icon.setToolTip(fmt.status_text(finished.status))
        for widget in (self, self.title):
            widget.setProperty("tone", self.tone)
            repolish(widget)
        cost = fmt.cost(finished.cost_usd, finished.unpriced, long=True)
        tokens = finished.input_tokens + finished.output_tokens
        sandbox = shown_level(finished.sandbox)
        held = (
            f" ({fmt.tokens(finished.held_tokens)} held by requests stopped in flight)"
            if finished.held_tokens
            else ""
        )
        stats = (
            f"{cost} · {fmt.tokens(tokens)} tokens{held} · {fmt.seconds(finished.wall_s)} in all · "
            f"{finished.sub_calls} sub-calls · depth {finished.max_depth_reached}"
            + (f" · {fmt.sandbox_name(sandbox)}" if sandbox else "")
        )
        self.stats.setText(stats)
        self.stats.setToolTip(stats)
        error = finished.error or ""
        if finished.http_status in AUTH_STATUS:
            error += f"\n\n{KEY_ADVICE}"
        if error and retries:
            error += (
                f"\n\n{fmt.plural(retries, 'request was', 'requests were')} sent again before "
                "the run gave up (each call's details count its retries)."
            )
        self._error, self._answered = error, answered
        if answered:
            self._show_text(finished.answer, error)
        else:
            self._show_why_first(error, fmt.not_an_answer(finished.answer_kind, finished.answer))
        self.show_warnings(finished.warnings)
        self.show()
        self._fit_text()

    def _show_text(self, answer: str, error: str) -> None:
        """The answer as Markdown (raw HTML in it shown as text: a model's output is untrusted),
        then the error as plain text (a provider's message, quoted as it came)."""
        document = self.text.document()
        document.setMarkdown(answer, MARKDOWN)
        disarm_links(document)
        disarm_images(document)
        insert_markers(document, self.sources)
        if error or not answer:
            cursor = QTextCursor(document)
            cursor.movePosition(QTextCursor.MoveOperation.End)
            if answer:
                cursor.insertBlock(QTextBlockFormat(), QTextCharFormat())
            cursor.insertText(error or "(no answer)", QTextCharFormat())

    def _show_why_first(self, error: str, left: str) -> None:
        """A run without an answer: why it ended, then what the model left, labelled and bounded
        (plain text: it is not an answer to render)."""
        self.text.document().setPlainText("\n\n".join(part for part in (error, left) if part))

    def show_sources(
        self, sources: Sequence[CheckedSource], read: Sequence[ReadPassage] = ()
    ) -> None:
        """Mark the answer's sources in it and list them, with the passages `read` to answer."""
        self.sources, self.read = tuple(sources), tuple(read)
        if self._answered:
            self._show_text(self.answer, self._error)
        self.sources_list.show_sources(self.sources, self.read)
        self._fit_text()

    def choose_source(self, number: int) -> None:
        """Do what source `number`'s marker does: show its row, and open its passage."""
        self.sources_list.reveal(number)
        source = next((s for s in self.sources if s.number == number), None)
        passage = None if source is None else source_passage(source)
        if passage is not None:
            self.source_chosen.emit(passage)

    def _follow(self, url: QUrl) -> None:
        number = source_number(url)
        if number is not None:
            self.choose_source(number)
        elif url.scheme() in WEB_SCHEMES:
            QDesktopServices.openUrl(url)

    def show_warnings(self, lines: Sequence[str]) -> None:
        """Add what went wrong besides the run (a session not saved in full), one line each."""
        self.warnings.setText("\n".join(f"⚠ {line}" for line in lines))
        self.warnings.setVisible(bool(lines))

    def resizeEvent(self, event: QResizeEvent) -> None:
        """Keep the Sources list to its share of the new height."""
        super().resizeEvent(event)
        self.sources_list.setMaximumHeight(max(60, round(event.size().height() * SOURCES_SHARE)))
        self._fit_text()

    def _fit_text(self) -> None:
        """The answer as high as its text (a long one takes the room and scrolls)."""
        document = self.text.document()
        document.setTextWidth(max(100, self.text.viewport().width()))
        frame = 2 * self.text.frameWidth() + 6
        self.text.setMaximumHeight(int(document.size().height()) + frame)

    def clear(self) -> None:
        """Hide the panel (a new run started)."""
        self.answer = ""
        self._error, self._answered = "", False
        self.sources, self.read = (), ()
        self.text.clear()
        self.sources_list.show_sources((), ())
        self.show_warnings(())
        self.hide()

    def copy(self) -> None:
        """Put the answer on the clipboard."""
        QGuiApplication.clipboard().setText(self.answer)
