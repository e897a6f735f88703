"""The question box, model pickers, endpoint, mode, depth, profile and budget fields, Run and Stop.

Laid out to fit a small screen: the settings in a grid of two lines under a line that folds them
(folded when a run starts, so the run gets the height, and saying in a sentence what they are),
the budget folded into one line that opens on demand, and a line under them for a problem (with a
button that leads to its fix) or a notice.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QSize, QStringListModel, Qt, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from rlm_desktop.ui.appearance.theme import repolish
from rlm_desktop.ui.run.budget import BudgetFields, BudgetSection, budget_summary
from rlm_desktop.ui.run.endpoint import EndpointPicker
from rlm_desktop.ui.run.follow_up import FollowUpBar
from rlm_desktop.ui.run.model_picker import ModelPicker, short_names
from rlm_desktop.ui.shared.fold_line import FoldLine
from rlm_desktop.ui.shared.preferences import RunDefaults
from rlm_desktop.ui.shared.reflow_grid import ReflowGrid
from rlm_desktop.ui.shared.scroll_when_short import ScrollWhenShort
from rlm_desktop.ui.shared.widgets import plain_label

if TYPE_CHECKING:
    from rlm_desktop.engine.config import Budget, ConfigError, Mode

QUESTION_LINES, QUESTION_LEAST_LINES, QUESTION_PADDING = 3, 2, 16
MODES = (("auto", "Auto"), ("rlm", "RLM (REPL)"), ("direct", "Direct call"))
SCRATCH_QUOTA = "Files model code writes may take"
WHERE_CODE_RUNS = "Where model code runs"
REQUIRE_ISOLATION = "Refuse to run model code without filesystem and network isolation"
"""The choice on Settings → Sandbox, named here as its check box reads."""
SETTING_LABELS = {
    "query": "The question",
    "model": "The root model",
    "sub_model": "The sub-model",
    "api_base": "The server address",
    "mode": "The mode",
    "profile": "The prompt profile",
    "max_depth": "The depth",
    "max_cost_usd": "The cost limit",
    "max_tokens": "The token limit",
    "max_sub_calls": "The sub-call limit",
    "max_turns": "Turns per call",
    "timeout_s": "The time limit",
    "prices": "Prices (Settings → Run defaults):",
    "require_isolation": f"“{REQUIRE_ISOLATION}” (Settings → Sandbox)",
    "scratch_quota_mb": f"“{SCRATCH_QUOTA}” (Settings → Sandbox)",
    "sandbox": f"“{WHERE_CODE_RUNS}” (Settings → Sandbox)",
    "follows": "The follow-up",
}
"""How the engine's settings are called in the window, for its `ConfigError` messages and its
pre-flight problems."""


def sentence(text: str) -> str:
    """`text` as the window shows a message: a capital first letter and a full stop."""
    text = text.strip()
    return text[:1].upper() + text[1:] + ("" if text.endswith((".", "?", "!")) else ".")


def describe_config_error(error: ConfigError) -> str:
    """An engine `ConfigError` as a sentence that names the field to change."""
    return sentence(error.worded(SETTING_LABELS))


@dataclass(frozen=True)
class RunRequest:
    """What the run controls ask for: the question, where it goes, and the limits.

    Empty choices are None ("same as root", "the provider's API", "by model name"), and so are
    the budget's caps set to "no limit".
    """

    query: str
    model: str
    sub_model: str | None
    api_base: str | None
    mode: Mode
    profile: str | None
    budget: Budget


class RunControls(QWidget):
    """Everything that defines the next run.

    `run_requested` and `stop_requested` fire on the buttons (the window binds Ctrl+Enter and
    Esc to the same); `fix_requested` carries the setting a problem's button leads to ("model",
    "sub_model", "api_base" or "api_key").
    """

    run_requested = Signal()
    stop_requested = Signal()
    fix_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None, *, as_form: bool = False) -> None:
        """`as_form` lays the run settings out one per line, without question or buttons
        (the settings dialog's run defaults)."""
        super().__init__(parent)
        self.model_names = QStringListModel(self)
        self.shown_names = QStringListModel(self)
        """`model_names` as the pickers show and complete them (`model_picker.short_names`)."""
        self.question = QPlainTextEdit()
        self.question.setPlaceholderText(
            "Ask a question about the documents… (Ctrl+Enter to run, Esc to stop)"
        )
        self.question.setAccessibleName("Question")
        self.question.setTabChangesFocus(True)
        self._fit_question()
        self.run_button = QPushButton("Run")
        self.run_button.setObjectName("primary")
        self.run_button.setToolTip("Start the run (Ctrl+Enter)")
        self.run_button.setAccessibleName("Run")
        self.run_button.clicked.connect(self.run_requested)
        self.stop_button = QPushButton("Stop")
        self.stop_button.setToolTip("Stop the whole run (Esc)")
        self.stop_button.setAccessibleName("Stop")
        self.stop_button.setEnabled(False)
        self.stop_button.clicked.connect(self.stop_requested)

        self.model = ModelPicker("Root model", "provider/model", self.shown_names)
        self.sub_model = ModelPicker("Sub-model", "same as root", self.shown_names)
        self.endpoint = EndpointPicker()
        self.mode = QComboBox()
        self.mode.setAccessibleName("Mode")
        for value, mode_name in MODES:
            self.mode.addItem(mode_name, value)
        self.mode.setToolTip("Auto answers short inputs with one direct call")
        self.max_depth = QSpinBox()
        self.max_depth.setRange(1, 6)
        self.max_depth.setAccessibleName("Maximum depth")
        self.max_depth.setToolTip("REPL levels: 1 means only the root has a REPL")
        self.profile = QComboBox()
        self.profile.setAccessibleName("Prompt profile")
        self.profile.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.profile.setMinimumContentsLength(13)
        limits = BudgetFields()
        self.max_cost, self.max_tokens, self.max_sub_calls = (
            limits.max_cost,
            limits.max_tokens,
            limits.max_sub_calls,
        )
        self.max_turns, self.timeout = limits.max_turns, limits.timeout

        self.error = plain_label()
        self.error.setObjectName("errorLabel")
        self.error.setWordWrap(True)
        self.error.setAccessibleName("Run error")
        self.error.hide()
        self._fix_setting = ""
        self.fix_button = QPushButton()
        self.fix_button.hide()
        self.fix_button.clicked.connect(lambda: self.fix_requested.emit(self._fix_setting))
        self._in_form = as_form
        if as_form:
            self._form_layout()
            return
        self.follow_up = FollowUpBar()
        self.follow_up.began.connect(self._follow_up_began)
        self.budget = BudgetSection(limits)
        self.settings_line = FoldLine("&Settings", "Show or hide the run's settings (Alt+S)")
        for spin in (self.max_tokens, self.max_sub_calls, self.max_turns, self.timeout):
            spin.valueChanged.connect(self._summarise)
        self.max_cost.valueChanged.connect(self._summarise)
        self.max_depth.valueChanged.connect(self._summarise)
        for picker in (self.model, self.sub_model):
            picker.currentTextChanged.connect(self._summarise)
        for combo in (self.mode, self.profile):
            combo.currentIndexChanged.connect(self._summarise)
        self.endpoint.chosen.connect(self._summarise)
        self._summarise()
        self._run_layout()

    def _run_layout(self) -> None:
        top = QHBoxLayout()
        top.addWidget(self.question, 1)
        buttons = QVBoxLayout()
        buttons.addWidget(self.run_button)
        buttons.addWidget(self.stop_button)
        buttons.addStretch(1)
        top.addLayout(buttons)

        fields = [
            ("&Model", self.model),
            ("S&ub-model", self.sub_model),
            ("&Endpoint", self.endpoint),
            ("M&ode", self.mode),
            ("&Depth", self.max_depth),
            ("&Profile", self.profile),
        ]
        self.settings_grid = ReflowGrid(
            fields,
            orders={2: (0, 1, 3, 4, 2, 5)},  # model and sub-model, mode and depth, then the rest
            left_aligned=[self.max_depth],
            stretches=(3, 3, 2),
        )

        problem = QHBoxLayout()
        problem.addWidget(self.error, 1)
        problem.addWidget(self.fix_button, 0, Qt.AlignmentFlag.AlignTop)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addLayout(top)
        self.below_question = QWidget()
        below = QVBoxLayout(self.below_question)
        below.setContentsMargins(0, 0, 0, 0)
        below.setSpacing(4)
        layout.addWidget(self.below_question)
        below.addWidget(self.follow_up)
        settings = QWidget()
        settings_layout = QVBoxLayout(settings)
        settings_layout.setContentsMargins(0, 0, 0, 0)
        settings_layout.setSpacing(4)
        settings_layout.addWidget(self.settings_grid)
        settings_layout.addWidget(self.budget)
        self.settings_area = ScrollWhenShort(settings, keep=self.model)
        self.settings_line.toggled.connect(self._show_settings)
        self.settings_line.set_open(True)
        below.addWidget(self.settings_line)
        below.addWidget(self.settings_area)
        below.addLayout(problem)
        QWidget.setTabOrder(self.question, self.run_button)
        QWidget.setTabOrder(self.run_button, self.stop_button)
        QWidget.setTabOrder(self.stop_button, self.settings_line.toggle)

    def set_compact(self, compact: bool) -> None:
        """Only the question and its buttons (presenting), or everything back."""
        self.below_question.setVisible(not compact)

    def _show_settings(self, shown: bool) -> None:
        self.settings_area.setVisible(shown)
        self.settings_line.summary.setVisible(not shown)

    def hasHeightForWidth(self) -> bool:  # noqa: N802 (Qt's name)
        """False, so that the window's layout may give the controls less than their full
        height (the settings then scroll) rather than taking a wrapped problem's height for
        their least; `sizeHint` and `minimumSizeHint` follow the width instead."""
        return False

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        """The full height at the present width, the settings unscrolled."""
        hint = super().sizeHint()
        layout = self.layout()
        if self._in_form or layout is None or not layout.hasHeightForWidth():
            return hint
        return QSize(hint.width(), layout.totalHeightForWidth(self.width()))

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        """The question, one line of settings and the problem, wrapped at the present width."""
        least = super().minimumSizeHint()
        layout = self.layout()
        if self._in_form or layout is None or not layout.hasHeightForWidth():
            return least
        return QSize(least.width(), layout.totalMinimumHeightForWidth(self.width()))

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt's name)
        """A new width wraps the problem anew: ask the window's layout again."""
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self.updateGeometry()

    def _form_layout(self) -> None:
        hidden: list[QWidget] = [self.question, self.run_button, self.stop_button]
        for widget in hidden:
            widget.hide()
        form = QFormLayout(self)
        rows: list[tuple[str, QWidget]] = [
            ("Root &model", self.model),
            ("S&ub-model", self.sub_model),
            ("&Endpoint", self.endpoint),
            ("M&ode", self.mode),
            ("&Depth", self.max_depth),
            ("&Profile", self.profile),
            ("Maximum &cost", self.max_cost),
            ("Maximum &tokens", self.max_tokens),
            ("Maximum &sub-calls", self.max_sub_calls),
            ("Turns per call", self.max_turns),
            ("Time &limit", self.timeout),
        ]
        for caption, field in rows:
            form.addRow(caption, field)

    def _follow_up_began(self) -> None:
        self.question.clear()
        self.question.setFocus()

    def _summarise(self, *_args: object) -> None:
        """The budget's line, and the settings' sentence for when they are folded."""
        fields = self.defaults()
        self.budget.summarise(fields)
        settings = [
            self.model.currentText().strip() or "no model",
            *([f"sub-model {fields.sub_model}"] if fields.sub_model else []),
            self.mode.currentText(),
            f"depth {fields.max_depth}",
            self.endpoint.currentText(),
            *([f"profile {fields.profile}"] if fields.profile else []),
            budget_summary(fields),
        ]
        self.settings_line.summarise(" · ".join(settings))

    def show_error(self, message: str) -> None:
        """Show a one-line problem under the fields ("" hides it)."""
        self._show_line(message, "errorLabel")

    def show_problem(self, message: str, setting: str, fix: str) -> None:
        """Show a problem with a button, labelled `fix`, that leads to `setting`."""
        self._show_line(message, "errorLabel")
        self._fix_setting = setting
        self.fix_button.setText(fix)
        self.fix_button.setAccessibleName(fix.replace("&", "").rstrip("…"))
        self.fix_button.show()

    def show_notice(self, message: str) -> None:
        """Show a passing notice under the fields (not a problem)."""
        self._show_line(message, "muted")

    def _show_line(self, message: str, style: str) -> None:
        self.fix_button.hide()
        self._fix_setting = ""
        if self.error.objectName() != style:
            self.error.setObjectName(style)
            repolish(self.error)
        self.error.setText(message)
        self.error.setVisible(bool(message))

    def set_running(self, running: bool) -> None:
        """Enable Stop and lock the inputs while a run is in progress."""
        self.run_button.setEnabled(not running)
        self.stop_button.setEnabled(running)

    def set_model_names(self, names: list[str]) -> None:
        """The names the model pickers complete and list (path-like ids by their short names)."""
        self.model_names.setStringList(names)
        shorts = short_names(names)
        shown = {model: short for short, model in shorts.items()}
        self.shown_names.setStringList([shown.get(name, name) for name in names])
        for picker in (self.model, self.sub_model):
            picker.set_names(names, shorts)

    def set_profiles(self, names: list[str], current: str = "") -> None:
        """The prompt profiles to choose from ("" picks one by model name)."""
        self.profile.clear()
        self.profile.addItem("by model name", "")
        for name in names:
            self.profile.addItem(name, name)
        self.profile.setCurrentIndex(max(0, self.profile.findData(current)))

    def _fit_question(self) -> None:
        """Three lines high, or two when the window is short."""
        line = self.fontMetrics().lineSpacing()  # the question's own may not have changed yet
        self.question.setMinimumHeight(line * QUESTION_LEAST_LINES + QUESTION_PADDING)
        self.question.setMaximumHeight(line * QUESTION_LINES + QUESTION_PADDING)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 (Qt's name)
        """Keep the question box's height in lines when the interface size changes."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            self._fit_question()

    def apply_defaults(self, d: RunDefaults, fields: list[str] | None = None) -> None:
        """Fill the fields from saved defaults (only those named in `fields`, if given)."""
        setters: dict[str, Callable[[], object]] = {
            "model": lambda: self.model.set_model_id(d.model),
            "sub_model": lambda: self.sub_model.set_model_id(d.sub_model),
            "endpoint": lambda: self.endpoint.choose(d.endpoint),
            "mode": lambda: self.mode.setCurrentIndex(max(0, self.mode.findData(d.mode))),
            "max_depth": lambda: self.max_depth.setValue(d.max_depth),
            "profile": lambda: self.profile.setCurrentIndex(
                max(0, self.profile.findData(d.profile))
            ),
            "max_cost_usd": lambda: self.max_cost.setValue(d.max_cost_usd),
            "max_tokens": lambda: self.max_tokens.setValue(d.max_tokens),
            "max_sub_calls": lambda: self.max_sub_calls.setValue(d.max_sub_calls),
            "max_turns": lambda: self.max_turns.setValue(d.max_turns),
            "timeout_s": lambda: self.timeout.setValue(d.timeout_s),
        }
        for name in setters if fields is None else fields:
            setters[name]()

    def defaults(self) -> RunDefaults:
        """The fields as defaults for new runs (0 is "no limit"; no model means the default)."""
        return RunDefaults(
            model=self.model.model_id() or RunDefaults.model,
            sub_model=self.sub_model.model_id(),
            endpoint=self.endpoint.choice,
            mode=self.mode.currentData(),
            max_depth=self.max_depth.value(),
            profile=self.profile.currentData() or "",
            max_cost_usd=self.max_cost.value(),
            max_tokens=self.max_tokens.value(),
            max_sub_calls=self.max_sub_calls.value(),
            max_turns=self.max_turns.value(),
            timeout_s=self.timeout.value(),
        )

    def request(self) -> RunRequest:
        """The run the fields ask for now."""
        fields = self.defaults()
        return RunRequest(
            query=self.question.toPlainText().strip(),
            model=self.model.model_id(),
            sub_model=fields.sub_model or None,
            api_base=self.endpoint.url(),
            mode=self.mode.currentData(),
            profile=fields.profile or None,
            budget=fields.budget(),
        )
