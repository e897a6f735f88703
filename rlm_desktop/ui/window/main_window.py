"""The main window: pages, menus and shortcuts, and starting, stopping and reviewing runs."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QSignalBlocker, QSize, Qt, QTimer, Signal
from PySide6.QtGui import (
    QAction,
    QCloseEvent,
    QKeySequence,
    QMoveEvent,
    QPaintEvent,
    QShowEvent,
)
from PySide6.QtWidgets import (
    QMainWindow,
    QMessageBox,
    QStackedWidget,
    QWidget,
)

from rlm_desktop import formatting as fmt
from rlm_desktop.providers import keys, registry
from rlm_desktop.ui.appearance.theme import icon, monospace_font
from rlm_desktop.ui.console.blocks import CodeView
from rlm_desktop.ui.replay.actions import replay_actions
from rlm_desktop.ui.run.sandbox_preparation import WasmPreparation
from rlm_desktop.ui.run.starter import RunStarter
from rlm_desktop.ui.run.status_bar import RunStatusBar
from rlm_desktop.ui.sessions.imported_banner import left_out_text, session_banner
from rlm_desktop.ui.sessions.open_trajectory import TrajectoryOpener
from rlm_desktop.ui.sessions.trajectory_drops import TrajectoryDrops
from rlm_desktop.ui.shared.actions import window_action
from rlm_desktop.ui.shared.preferences import Preferences, RunDefaults
from rlm_desktop.ui.window.conversations_link import ConversationsLink
from rlm_desktop.ui.window.detail_tabs import TAB_NAMES
from rlm_desktop.ui.window.fits_the_screen import FitsTheScreen
from rlm_desktop.ui.window.last_view import LastView
from rlm_desktop.ui.window.layout_memory import WindowLayout
from rlm_desktop.ui.window.presentation import Presentation
from rlm_desktop.ui.window.welcome import WelcomePage
from rlm_desktop.ui.window.workspace import Workspace
from rlm_desktop.ui.window.zoom import Zoom

if TYPE_CHECKING:
    from rlm_desktop.ui.batches.dialog import BatchesDialog
    from rlm_desktop.ui.compare.dialog import CompareDialog
    from rlm_desktop.ui.dashboard.dialog import DashboardDialog
    from rlm_desktop.ui.evaluation.dialog import EvaluationDialog
    from rlm_desktop.ui.sessions.dialog import SessionsDialog
    from rlm_desktop.ui.settings.dialog import SettingsDialog

TITLE = "RLM Desktop"
WARM_UP_DELAY_MS = 800
"""Start-up work waits this long after the first paint, so the window settles first."""


def _opener(workspace: Workspace, tab: int) -> Callable[[], None]:
    """A slot showing the detail pane's tab `tab`."""
    return lambda: workspace.detail_tabs.show_tab(tab)


class MainWindow(QMainWindow):
    """The application window. `warm_up` loads model names and litellm after the first paint."""

    first_painted = Signal()

    def __init__(
        self, prefs: Preferences | None = None, warm_up: bool = True, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.prefs = prefs or Preferences()
        self.setWindowTitle(TITLE)
        self.setWindowIcon(icon("rlm-desktop"))
        self.setAccessibleName(TITLE)
        self.workspace = Workspace()
        self.welcome = WelcomePage()
        self.pages = QStackedWidget()
        self.pages.addWidget(self.welcome)
        self.pages.addWidget(self.workspace)
        self.frame = FitsTheScreen(self.pages)
        self.setCentralWidget(self.frame)
        self.status = RunStatusBar()
        self.setStatusBar(self.status)
        self.starter = RunStarter(
            self.workspace.controls,
            self.workspace.documents,
            self.status,
            self.prefs,
            self.workspace.bridge,
            parent=self,
        )
        self.preparation = WasmPreparation(self.status, self)
        self.trajectories = TrajectoryOpener(self)
        drops = TrajectoryDrops(self, self.trajectories.open, self.workspace.documents.add_paths)
        drops.watch(self.workspace.documents)
        drops.watch(self, documents_too=True)
        self._closing = False
        self._painted = False
        self._warm_up = warm_up
        self._build_actions()
        self._connect()
        self.layout_memory = WindowLayout(self, self.workspace, self.prefs)
        self.layout_memory.restore()
        self.last_view = LastView(self.workspace, self.prefs, self.open_session, self.starter.store)
        self.first_painted.connect(lambda: QTimer.singleShot(0, self.last_view.reopen))
        self.workspace.details.trace_source = self._trace_of
        with QSignalBlocker(self.documents_action):
            self.documents_action.setChecked(self.workspace.documents_shown())
        if not self.workspace.documents_shown():
            self.workspace.show_documents(False)  # left folded: hidden, as folding it now does
        self.conversations = ConversationsLink(self, self)
        self.conversations_action.toggled.connect(self.conversations.show)
        self.documents_action.toggled.connect(self.conversations.documents_toggled)
        self.workspace.documents_wanted.connect(lambda: self.documents_action.setChecked(True))
        self.conversations_action.setChecked(self.conversations.shown_at_start())
        self.starter.apply_preferences()
        configured = self.provider_configured()
        self.pages.setCurrentWidget(self.workspace if configured else self.welcome)
        self.status.setVisible(configured)
        self.workspace.begin_view(None)

    def least_size(self) -> QSize:
        """The least size the window shows everything in without scrolling its pages."""
        scrolled = self.frame.minimumSizeHint()
        least = self.frame.content_least()
        extra = QSize(
            max(0, least.width() - scrolled.width()), max(0, least.height() - scrolled.height())
        )
        return self.minimumSizeHint() + extra

    @property
    def painted(self) -> bool:
        """True once the window was first painted (start-up work waits for it)."""
        return self._painted

    def provider_configured(self) -> bool:
        """True once a local server is set up or any provider has a key.

        Cheap checks come first (settings, then the environment and this session's keys); the
        keyring is asked only when they find nothing, since a keyring service can be slow to
        answer at start-up. The note that a key was saved in the keyring stands for it.
        """
        if self.prefs.endpoints() or self.prefs.get_bool("providers/key_saved"):
            return True
        return keys.any_key([*registry.PROVIDERS, *self.prefs.extra_providers()])

    def _build_actions(self) -> None:
        ws = self.workspace
        docs, tree = ws.documents, ws.tree_panel
        self.run_action = window_action(
            self, "&Run", [QKeySequence("Ctrl+Return"), QKeySequence("Ctrl+Enter")], self.start_run
        )
        self.stop_action = window_action(self, "&Stop", QKeySequence("Esc"), self.stop_run)
        self.question_action = window_action(
            self, "Go to the &question", QKeySequence("Ctrl+L"), self.focus_question
        )
        self.follow_up_action = window_action(
            self,
            "Ask a &follow-up",
            QKeySequence("Ctrl+Shift+F"),
            ws.controls.follow_up.begin,
            ws.controls.follow_up.ask_button,
        )
        self.new_question_action = window_action(
            self, "&New question", QKeySequence("Ctrl+N"), self.new_question
        )
        self.copy_answer_action = window_action(
            self,
            "&Copy the answer",
            QKeySequence("Ctrl+Shift+A"),
            self.copy_answer,
            ws.answer.copy_button,
        )
        self.add_files_action = window_action(
            self,
            "Add &files…",
            QKeySequence.StandardKey.Open,
            docs.choose_files,
            docs.add_files_button,
        )
        self.add_folder_action = window_action(
            self,
            "Add f&older…",
            QKeySequence("Ctrl+Shift+O"),
            docs.choose_folder,
            docs.add_folder_button,
        )
        self.open_trajectory_action = window_action(
            self, "Open &trajectory…", QKeySequence("Ctrl+Shift+T"), self.trajectories.choose
        )
        self.open_trajectory_action.setToolTip(
            "Open a run saved elsewhere: an RLM Desktop export or an rlms (RLMLogger) log"
        )
        self.sessions_action = window_action(
            self, "&Sessions…", QKeySequence("Ctrl+Shift+S"), self.browse_sessions
        )
        self.history_action = window_action(
            self, "&History dashboard…", QKeySequence("Ctrl+Shift+H"), self.show_dashboard
        )
        self.evaluation_action = window_action(
            self, "E&valuate settings…", QKeySequence("Ctrl+Shift+V"), self.show_evaluation
        )
        self.batches_action = window_action(self, "&Batches…", None, self.show_batches)
        self.settings_action = window_action(
            self, "S&ettings…", QKeySequence("Ctrl+,"), lambda: self.show_settings()
        )
        self.quit_action = window_action(self, "&Quit", QKeySequence.StandardKey.Quit, self.close)
        self.welcome_action = window_action(self, "&Welcome page", None, self.show_welcome)
        self.about_action = window_action(self, "&About RLM Desktop", None, self.show_about)
        view_actions: list[QAction | None] = [
            window_action(
                self,
                "&Expand all",
                QKeySequence("Ctrl+Shift+E"),
                tree.expand_all,
                tree.expand_button,
            ),
            window_action(
                self,
                "&Collapse all",
                QKeySequence("Ctrl+Shift+C"),
                tree.collapse_all,
                tree.collapse_button,
            ),
            window_action(
                self, "&Next error", QKeySequence("F8"), tree.next_error, tree.next_error_button
            ),
            window_action(self, "&Filter calls", QKeySequence("Ctrl+F"), tree.filter.setFocus),
        ]
        self.timeline_action = window_action(
            self,
            "&Timeline",
            QKeySequence("Ctrl+T"),
            ws.detail_tabs.toggle_timeline,
        )
        self.timeline_action.setCheckable(True)
        ws.detail_tabs.timeline_shown.connect(self.timeline_action.setChecked)
        view_actions.append(self.timeline_action)
        view_actions.append(None)
        for number, name in enumerate(TAB_NAMES):
            view_actions.append(
                window_action(
                    self, f"{name} tab", QKeySequence(f"Ctrl+{number + 1}"), _opener(ws, number)
                )
            )
        self.zoom = Zoom(self, self.prefs, self.least_size)
        zoom_actions = [
            window_action(
                self, "Zoom &in", [QKeySequence("Ctrl+="), QKeySequence("Ctrl++")], self._zoom_in
            ),
            window_action(self, "Zoom &out", QKeySequence("Ctrl+-"), self._zoom_out),
            window_action(self, "&Actual size", QKeySequence("Ctrl+0"), self._zoom_reset),
        ]
        self.documents_action = window_action(
            self, "&Documents pane", QKeySequence("Ctrl+Shift+D"), lambda: None
        )
        self.documents_action.setCheckable(True)
        self.documents_action.setChecked(True)
        self.documents_action.toggled.connect(ws.show_documents)
        ws.main_splitter.splitterMoved.connect(
            lambda _pos, _index: self.documents_action.setChecked(ws.documents_shown())
        )
        view_actions.insert(0, self.documents_action)
        self.conversations_action = window_action(
            self, "Con&versations", QKeySequence("Ctrl+Shift+B"), lambda: None
        )
        self.conversations_action.setCheckable(True)
        self.conversations_action.setToolTip("Your questions and their follow-ups, beside the run")
        view_actions.insert(0, self.conversations_action)
        bar = self.menuBar()
        file_menu = bar.addMenu("&File")
        for action in (
            self.add_files_action,
            self.add_folder_action,
            self.open_trajectory_action,
            self.sessions_action,
        ):
            file_menu.addAction(action)
        file_menu.addAction(self.history_action)
        file_menu.addAction(self.evaluation_action)
        file_menu.addAction(self.batches_action)
        file_menu.addSeparator()
        file_menu.addAction(self.settings_action)
        file_menu.addSeparator()
        file_menu.addAction(self.quit_action)
        run_menu = bar.addMenu("&Run")
        run_menu.addAction(self.run_action)
        run_menu.addAction(self.stop_action)
        run_menu.addSeparator()
        for action in (
            self.question_action,
            self.follow_up_action,
            self.new_question_action,
            self.copy_answer_action,
        ):
            run_menu.addAction(action)
        view_menu = bar.addMenu("&View")
        for entry in view_actions:
            if entry is None:
                view_menu.addSeparator()
            else:
                view_menu.addAction(entry)
        view_menu.addSeparator()
        for action in zoom_actions:
            view_menu.addAction(action)
        replay = replay_actions(self, ws.replay)
        replay_menu = bar.addMenu("Re&play")
        for action in replay:
            replay_menu.addAction(action)
        self.watch_action = window_action(self, "&Watch a recorded run", None, self.watch_recording)
        self.watch_action.setEnabled(bool(self.welcome.recordings))
        replay_menu.addSeparator()
        replay_menu.addAction(self.watch_action)
        _play, _next_event, _previous_event, next_turn, previous_turn = replay
        self.presentation = Presentation(
            self,
            ws,
            self.zoom,
            [(next_turn, "PgDown"), (previous_turn, "PgUp")],
            self.refresh_console,
        )
        self.presentation_action = window_action(
            self, "&Presentation", QKeySequence("F5"), lambda: None
        )
        self.presentation_action.setCheckable(True)
        self.presentation_action.setToolTip(
            "Full screen, large type, the tree and console first (F5 to leave)"
        )
        self.presentation_action.toggled.connect(self._present)
        view_menu.addSeparator()
        view_menu.addAction(self.presentation_action)
        help_menu = bar.addMenu("&Help")
        help_menu.addAction(self.welcome_action)
        help_menu.addAction(self.about_action)

    def _connect(self) -> None:
        ws = self.workspace
        ws.controls.run_requested.connect(self.start_run)
        ws.controls.stop_requested.connect(self.stop_run)
        ws.controls.fix_requested.connect(self.go_to_fix)
        ws.run_changed.connect(self._show_run_figures)
        self.starter.run_starting.connect(lambda: ws.begin_view(None))
        self.starter.run_starting.connect(lambda: ws.controls.settings_line.set_open(False))
        self.starter.run_starting.connect(self.preparation.step_aside)
        self.starter.run_finished.connect(self._show_run_figures)
        self.starter.run_finished.connect(
            lambda: ws.health.check_session(self.starter.store(), ws.model.tree.run.run_id)
        )
        self.starter.unsaved.connect(ws.answer.show_warnings)
        ws.leave_review.connect(self.leave_review)
        self.welcome.open_settings.connect(lambda: self.show_settings("providers"))
        self.welcome.open_sample.connect(self.open_sample)
        self.welcome.watch_recording.connect(self.watch_recording)
        self.welcome.skip.connect(lambda: self.pages.setCurrentWidget(self.workspace))
        self.pages.currentChanged.connect(
            lambda _i: self.status.setVisible(self.pages.currentWidget() is self.workspace)
        )
        self.pages.currentChanged.connect(lambda _i: self.focus_question())

    # Runs -----------------------------------------------------------------------------------

    def _show_run_figures(self) -> None:
        """Bring the status bar's figures up to date with the run in view."""
        self.status.update_from(self.workspace.model.tree)

    def start_run(self) -> bool:
        """Start a run with the current question, documents and settings; False if it cannot."""
        if self.pages.currentWidget() is not self.workspace or self.workspace.reviewing:
            return False
        started = self.starter.start()
        if started:
            self.remember_workspace()
        return started

    def stop_run(self) -> None:
        """Stop the run in progress (the whole tree)."""
        self.starter.stop()

    def focus_question(self) -> None:
        """Put the cursor in the question box, its text selected (not while reviewing a saved
        session, which has none)."""
        controls = self.workspace.controls
        if self.pages.currentWidget() is self.workspace and not controls.isHidden():
            controls.question.setFocus(Qt.FocusReason.ShortcutFocusReason)
            controls.question.selectAll()

    def new_question(self) -> None:
        """Back to a new run: out of a saved session, or a question of its own after a run (the
        last run stays in view until the next starts)."""
        self.pages.setCurrentWidget(self.workspace)
        if self.workspace.reviewing:
            self.leave_review()
        controls = self.workspace.controls
        controls.follow_up.end()
        controls.question.clear()
        controls.question.setFocus(Qt.FocusReason.ShortcutFocusReason)

    def copy_answer(self) -> None:
        """Put the answer in view on the clipboard, and say so."""
        answer = self.workspace.answer
        if answer.isHidden():
            self.status.showMessage("No answer to copy yet.", 4000)
            return
        answer.copy()
        self.status.showMessage("Answer copied.", 4000)

    def go_to_fix(self, setting: str) -> None:
        """Lead to where a pre-flight problem about `setting` is fixed."""
        controls = self.workspace.controls
        if setting in ("model", "sub_model"):
            field = controls.model if setting == "model" else controls.sub_model
            field.setFocus()
            line = field.lineEdit()
            if line is not None:
                line.selectAll()
            return
        dialog = self.show_settings("providers")
        if setting == "api_base":
            dialog.providers.focus_server(controls.endpoint.name() or "local")
        else:
            request = controls.request()
            dialog.providers.focus_key(registry.provider_for_run(request.model, request.api_base))

    def open_sample(self, path: Path, question: str) -> None:
        """Load a sample document and suggest a question about it (leaving a saved session
        being reviewed: its documents cannot be added to)."""
        if self.workspace.reviewing:
            self.leave_review()
        self.pages.setCurrentWidget(self.workspace)
        self.workspace.documents.add_paths([path])
        if not self.workspace.controls.question.toPlainText().strip():
            self.workspace.controls.question.setPlainText(question)

    def watch_recording(self, path: Path | None = None) -> None:
        """Open a recorded run (the first shipped one by default: imported once, later the
        session made then reopens) and play it at a readable pace; no key, server or network
        is needed."""
        recording = path or next(iter(self.welcome.recordings), None)
        if recording is not None:
            self.trajectories.open(recording, readable=True)

    # Pages and dialogs ------------------------------------------------------------------------

    def show_welcome(self) -> None:
        """Go to the welcome page."""
        self.welcome.show_configured(self.provider_configured())
        self.pages.setCurrentWidget(self.welcome)

    def show_settings(self, page: str = "") -> SettingsDialog:
        """Open the settings dialog (on `page` if given); returns the dialog.

        Models a local server lists there reach the pickers at once; run defaults changed there
        reach the run controls when it closes.
        """
        from rlm_desktop.ui.settings.dialog import SettingsDialog

        before = self.prefs.run_defaults()
        dialog = SettingsDialog(
            self.prefs,
            self,
            page=page,
            models=self.starter.models.names(),
            preparation=self.preparation,
        )
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.finished.connect(lambda _code: self._after_settings(before))
        dialog.appearance.theme_changed.connect(self.refresh_console)
        dialog.providers.models_found.connect(self.starter.models.found)
        dialog.open()
        return dialog

    def _present(self, active: bool) -> None:
        """Enter or leave the Presentation view (from the welcome page too: it shows the run)."""
        if active:
            self.pages.setCurrentWidget(self.workspace)
        self.presentation.set_active(active)

    def _zoom_in(self) -> None:
        if self.zoom.zoom_in():
            self._after_zoom()

    def _zoom_out(self) -> None:
        if self.zoom.zoom_out():
            self._after_zoom()

    def _zoom_reset(self) -> None:
        if self.zoom.reset():
            self._after_zoom()

    def _after_zoom(self) -> None:
        self.refresh_console()
        self.fit_to_screen()

    def refresh_console(self) -> None:
        """Rebuild the console (after a theme or font change)."""
        console = self.workspace.console
        console.code_font = monospace_font()
        console.show_call(console.node)

    def _after_settings(self, before: RunDefaults) -> None:
        self.starter.apply_preferences(since=before)
        if self._painted:  # keys and servers may have changed: the pickers list anew
            asyncio.ensure_future(self.starter.refresh_models())
        self.refresh_console()
        self.fit_to_screen()  # a new interface size applies at once, within the screen
        if self.pages.currentWidget() is self.welcome and self.provider_configured():
            self.pages.setCurrentWidget(self.workspace)
        self.focus_question()  # back where the user was about to type

    def browse_sessions(self) -> QMessageBox | None:
        """The Sessions action: the browser, or a message saying why the session database
        cannot be opened and what to do (returned, for a test to read)."""
        from rlm_desktop.store import StoreError

        try:
            self.show_sessions()
        except StoreError as error:
            box = QMessageBox(QMessageBox.Icon.Warning, "Saved sessions", str(error), parent=self)
            box.open()
            return box
        return None

    def show_sessions(self) -> SessionsDialog:
        """Open the session browser; returns the dialog."""
        from rlm_desktop.ui.sessions.dialog import SessionsDialog
        from rlm_desktop.ui.sessions.landing import land

        dialog = SessionsDialog(self.starter.store(), self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open_session.connect(self.open_session)
        dialog.hit_opened.connect(lambda hit: land(self.workspace, hit))  # at its word
        dialog.replay_session.connect(self.replay_session)
        dialog.compare_sessions.connect(
            lambda left, right: self.compare_sessions(left, right, dialog)
        )
        dialog.finished.connect(lambda _code: self.conversations.refresh())  # some deleted
        dialog.open()
        return dialog

    def show_dashboard(self) -> DashboardDialog:
        """Open the history dashboard over all saved runs; returns the dialog."""
        from rlm_desktop.ui.dashboard.dialog import DashboardDialog

        dialog = DashboardDialog(self.starter.store(), self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open_session.connect(self.open_session)
        dialog.open()
        return dialog

    def show_evaluation(self) -> EvaluationDialog:
        """Open the evaluation page, starting from the model and server in the run controls."""
        from rlm_desktop.ui.evaluation.dialog import EvaluationDialog

        request = self.workspace.controls.request()
        dialog = EvaluationDialog(
            self.starter.store(), request.model, request.api_base, self.prefs.prices_text(), self
        )
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open_session.connect(self.open_session)
        dialog.show()  # not modal: runs open in the window beside it while it works
        return dialog

    def show_batches(self) -> BatchesDialog:
        """Open the Batches view: the stored batches, their rows, each row's run opened here."""
        from rlm_desktop.ui.batches.dialog import BatchesDialog

        dialog = BatchesDialog(self.starter.store(), self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open_session.connect(self.open_session)
        dialog.show()  # not modal: rows open in the window beside it
        return dialog

    def compare_sessions(
        self, left_id: str, right_id: str, over: QWidget | None = None
    ) -> CompareDialog:
        """Open two saved sessions side by side, over `over` (the session browser they were
        chosen in, there again once they are compared) or the window; returns the dialog."""
        from rlm_desktop.ui.compare.dialog import CompareDialog

        dialog = CompareDialog(self.starter.store(), left_id, right_id, over or self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()
        return dialog

    def open_session(self, session_id: str, call_id: str = "", play: bool = False) -> bool:
        """Show a saved session read-only, replayed through the same path as a live run, with
        `call_id` (where a search found its text) selected when given; with `play`, play it
        back from the start. Its health is checked beside the window's loop and shown when
        done (`HealthPanel.check_session`)."""
        if self.starter.running:
            self.workspace.controls.show_error(
                "A run is in progress: stop it (Esc) before opening a saved session."
            )
            return False
        store = self.starter.store()
        from rlm_desktop.store import StoreError

        try:
            head = store.session(session_id)["session"]
        except StoreError as error:  # gone meanwhile, or damaged (a shared database)
            self.pages.setCurrentWidget(self.workspace)  # where the line saying why is shown
            self.workspace.controls.show_error(str(error))
            return False
        self.pages.setCurrentWidget(self.workspace)
        self.workspace.begin_view(review=session_banner(head))
        origin = head.get("imported") or {}
        self.workspace.set_review_details(left_out_text(origin.get("left_out") or []))
        self.conversations.opened(head)
        self.workspace.documents.show_saved(
            head.get("documents", []), store.document_texts(head["id"])
        )
        self.status.max_cost_usd = head.get("settings", {}).get("budget", {}).get("max_cost_usd")
        self.workspace.replay.load(store.replay(head["id"]))
        self.workspace.health.check_session(store, head["id"])
        tree = self.workspace.model.tree
        self.status.update_from(tree)
        self.setWindowTitle(f"{fmt.one_line(head.get('query') or '', 60)} — {TITLE}")
        found = tree.nodes.get(call_id)
        if found is not None:
            self.workspace.tree_panel.select(found)
        if play:
            self.workspace.replay.play()
        return True

    def replay_session(self, session_id: str) -> bool:
        """Open a saved session and play it back from the start."""
        return self.open_session(session_id, play=True)

    def leave_review(self) -> None:
        """Back to the live workspace after reviewing a saved session (however it was asked
        for: the banner's button, Ctrl+N, a conversation's New), the replay put away, the cursor
        in the question."""
        self.workspace.replay.unload()
        self.workspace.documents.restore_live()
        self.workspace.begin_view(None)
        self.conversations.left()
        self.status.clear_run()
        self.setWindowTitle(TITLE)
        self.focus_question()

    def show_about(self) -> None:
        """A short about box."""
        import platform
        from html import escape

        from PySide6 import __version__ as pyside_version

        from rlm_desktop import __version__, paths

        QMessageBox.about(
            self,
            "About RLM Desktop",
            f"<b>RLM Desktop {__version__}</b><br>Recursive Language Models over "
            "local documents, with a live view of every sub-call.<br><br>"
            f"Python {platform.python_version()}, PySide6 {pyside_version}<br>"
            f"Data: {escape(str(paths.data_dir()))}<br>"
            f"Keys: {keys.backend_description()}",
        )

    # Window state ---------------------------------------------------------------------------

    def fit_to_screen(self) -> None:
        """Keep the window, frame and all, inside its screen's available area."""
        self.layout_memory.fit_to_screen()

    def save_layout(self) -> None:
        """Remember geometry, splitter positions, tree columns, the budget row and code
        wrapping, and the workspace's run settings and documents."""
        self.layout_memory.save()
        self.last_view.save()
        self.remember_workspace()

    def remember_workspace(self) -> None:
        """Keep the run settings and documents in view for the next start."""
        ws = self.workspace
        self.prefs.set_workspace(ws.controls.defaults(), ws.documents.kept())

    def showEvent(self, event: QShowEvent) -> None:
        """Fit the window to its screen again once shown, when its frame's size is known; the
        cursor starts in the question."""
        super().showEvent(event)
        if not self._painted:
            self.fit_to_screen()
            self.focus_question()

    def moveEvent(self, event: QMoveEvent) -> None:
        """A window manager frames the window after it is shown, moving it: fit it again."""
        super().moveEvent(event)
        self.layout_memory.frame_changed()

    def paintEvent(self, event: QPaintEvent) -> None:
        """Tell listeners about the first paint (start-up work waits for it)."""
        super().paintEvent(event)
        if not self._painted:
            self._painted = True
            QTimer.singleShot(0, self._reload_documents)  # before the last view reopens over it
            self.first_painted.emit()
            QTimer.singleShot(WARM_UP_DELAY_MS, self.conversations.refresh)
            QTimer.singleShot(
                WARM_UP_DELAY_MS,
                lambda: self.preparation.start_if_needed(self.prefs.sandbox_backend),
            )
            if self._warm_up:
                QTimer.singleShot(WARM_UP_DELAY_MS, self.starter.warm_up)
                QTimer.singleShot(WARM_UP_DELAY_MS, self.prime_view)

    def _reload_documents(self) -> None:
        """Load the documents the workspace was left with, unless some were added already."""
        documents = self.workspace.documents
        if not documents.live_entries() and not documents.loading:
            documents.reload(self.prefs.workspace_documents())

    def _trace_of(self, call_id: str) -> str:
        """The messages `call_id`'s requests sent and what came back, as the store has them."""
        import sqlite3  # the store's stack loads after the first paint

        from rlm_desktop.review.trace import call_trace, trace_text
        from rlm_desktop.store.detail import load_detail
        from rlm_desktop.store.store import StoreError

        run_id = self.workspace.model.tree.run.run_id
        if not run_id:
            return "No run in view."
        try:
            detail = load_detail(self.starter.store(), run_id)
        except (StoreError, sqlite3.Error, OSError) as error:
            return f"The messages cannot be read from the session store: {error}"
        return trace_text(call_trace(detail, call_id))

    def prime_view(self) -> None:
        """Make now, while the window is idle, what the first run's view would make on the spot
        (~100 ms once): a code box, with the enum types PySide creates lazily for its text
        formats and the code font's glyphs, and the tree's viewport."""
        code = CodeView("import os  # primed", self.workspace.console.code_font)
        code.grab()
        code.deleteLater()
        self.workspace.tree_panel.repaint_clocks()

    def closeEvent(self, event: QCloseEvent) -> None:
        """Stop a running run before closing; remember the layout."""
        if self.starter.running and not self._closing:
            self._closing = True
            event.ignore()
            self.starter.stop()
            asyncio.ensure_future(self._close_when_stopped())
            return
        self.presentation_action.setChecked(False)  # the layout from before presenting is kept
        self.save_layout()
        self.shutdown()
        super().closeEvent(event)

    async def _close_when_stopped(self) -> None:
        await self.starter.wait()
        self.close()

    def shutdown(self) -> None:
        """Release threads and files: the loader thread, the store."""
        self.workspace.documents.shutdown()
        self.starter.close()
