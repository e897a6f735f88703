"""The first-run page: what the app does, a sample document to try, and the way to a provider."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from rlm_desktop.paths import resource
from rlm_desktop.ui.appearance.theme import icon, repolish

NEEDS_PROVIDER = (
    "To run, RLM Desktop needs a model provider: an API key for OpenAI, Anthropic, Gemini or "
    "OpenRouter, or a local server (Ollama or any OpenAI-compatible one) on this machine."
)
HAS_PROVIDER = (
    "A model provider is set up: open a sample document, or go to the workspace and add your own."
)
WATCH_NOTE = "A run recorded over the sample memos, replayed: no key, server or network needed."
TEXT_COLUMN_CHARS = 95
"""The welcome text's widest line, in average characters of the interface font."""
INTRO = (
    "Ask questions about your own documents with a <b>Recursive Language Model</b>. "
    "The root model never reads the documents whole: they are loaded into a Python REPL, "
    "and the model writes code to search, slice and sample them, sending the pieces to "
    "sub-calls, which may recurse with REPLs of their own."
)
STEPS = (
    "<ol>"
    "<li><b>Add documents</b>: files or whole folders (text, Markdown, PDF, Word, code…).</li>"
    "<li><b>Ask</b>, and watch the tree of sub-calls grow, with the code each call ran and "
    "what it printed.</li>"
    "<li><b>Stay in control</b>: a budget caps cost, tokens, sub-calls and time, and Stop "
    "(Esc) halts the whole tree.</li>"
    "<li><b>Review later</b>: every run is kept on this computer, searchable and "
    "replayable offline. API keys stay in your system keyring.</li>"
    "</ol>"
)


SAMPLES = (
    ("server.log", "Which incidents happened in this log, and when did each start and end?"),
    ("memos", "What is Project Heron's budget, and when does it go live?"),
)


RECORDINGS = ("heron-memos.jsonl",)
"""Runs recorded over the samples (`tools/record-demo`), in `resources/samples/recorded/`."""


def recorded_runs() -> list[Path]:
    """The shipped recorded runs that exist, the one to watch first."""
    folder = resource("samples") / "recorded"
    return [folder / name for name in RECORDINGS if (folder / name).is_file()]


def sample_documents() -> list[tuple[Path, str]]:
    """The bundled samples that exist, each with a question worth asking of it."""
    folder = resource("samples")
    return [(folder / name, question) for name, question in SAMPLES if (folder / name).exists()]


class WelcomePage(QWidget):
    """Shown while no provider is configured."""

    open_sample = Signal(Path, str)
    open_settings = Signal()
    watch_recording = Signal(Path)
    skip = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        logo = QLabel()
        logo.setPixmap(icon("rlm-desktop").pixmap(96, 96))
        title = QLabel("Welcome to RLM Desktop")
        title.setObjectName("welcomeTitle")
        intro = QLabel(INTRO)
        intro.setWordWrap(True)
        intro.setTextFormat(Qt.TextFormat.RichText)
        steps = QLabel(STEPS)
        steps.setWordWrap(True)
        steps.setTextFormat(Qt.TextFormat.RichText)
        note = self.note = QLabel(NEEDS_PROVIDER)
        note.setWordWrap(True)
        note.setObjectName("muted")

        self.settings_button = QPushButton("Set up a provider…")
        self.settings_button.setObjectName("primary")
        self.settings_button.setAccessibleName("Set up a provider")
        self.settings_button.clicked.connect(self.open_settings)
        self.samples = sample_documents()
        self.sample_button = QPushButton("Open a sample document")
        self.sample_button.setAccessibleName("Open a sample document")
        self.sample_button.setEnabled(bool(self.samples))
        self.sample_button.clicked.connect(self._open_sample)
        self.recordings = recorded_runs()
        self.watch_button = QPushButton("Watch a recorded run")
        self.watch_button.setAccessibleName("Watch a recorded run")
        self.watch_button.setToolTip(
            "Replay a run recorded over the sample memos: no key, no server, no network"
        )
        self.watch_button.setEnabled(bool(self.recordings))
        self.watch_button.clicked.connect(self._watch)
        self.skip_button = QPushButton("Go to the workspace")
        self.skip_button.clicked.connect(self.skip)

        buttons = QHBoxLayout()
        buttons.addWidget(self.settings_button)
        buttons.addWidget(self.sample_button)
        buttons.addWidget(self.skip_button)
        buttons.addStretch(1)
        column = QVBoxLayout()
        column.setSpacing(14)
        column.addStretch(1)
        column.addWidget(logo)
        column.addWidget(title)
        column.addWidget(intro)
        column.addWidget(steps)
        column.addWidget(note)
        column.addLayout(buttons)
        watching = QHBoxLayout()  # its own line: a demo needs nothing set up
        watching.addWidget(self.watch_button)
        watch_note = QLabel(WATCH_NOTE)
        watch_note.setObjectName("muted")
        watch_note.setWordWrap(True)
        watching.addWidget(watch_note, 1)
        column.addLayout(watching)
        column.addStretch(2)
        holder = QWidget()
        holder.setMaximumWidth(self.fontMetrics().averageCharWidth() * TEXT_COLUMN_CHARS)
        holder.setLayout(column)
        page = QWidget()
        centred = QHBoxLayout(page)
        centred.setContentsMargins(40, 40, 40, 40)
        centred.addStretch(1)
        centred.addWidget(holder, 4)
        centred.addStretch(1)
        scroller = QScrollArea()  # large type on a small screen scrolls instead of being cut
        scroller.setWidgetResizable(True)
        scroller.setFrameShape(QFrame.Shape.NoFrame)
        scroller.setWidget(page)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(scroller)

    def show_configured(self, configured: bool) -> None:
        """Say whether a provider is set up, and lead with what comes next."""
        self.note.setText(HAS_PROVIDER if configured else NEEDS_PROVIDER)
        self.settings_button.setText("Providers…" if configured else "Set up a provider…")
        self.settings_button.setObjectName("" if configured else "primary")
        self.skip_button.setObjectName("primary" if configured else "")
        for button in (self.settings_button, self.skip_button):
            repolish(button)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 (Qt's name)
        """Enter presses the button that has the focus, as in a dialog."""
        focused = self.focusWidget()
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and isinstance(
            focused, QPushButton
        ):
            focused.click()
            return
        super().keyPressEvent(event)

    def _open_sample(self) -> None:
        if self.samples:
            self.open_sample.emit(*self.samples[0])

    def _watch(self) -> None:
        if self.recordings:
            self.watch_recording.emit(self.recordings[0])
