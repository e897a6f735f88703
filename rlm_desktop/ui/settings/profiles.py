"""Settings → Prompt profiles: view the bundled profiles, copy one, edit your copies.

Bundled profiles (in `resources/profiles/`) are read-only. Copies live in the data folder's
`profiles/`, where the engine reads them first: a copy with a bundled profile's patterns wins for
those models.
"""

from __future__ import annotations

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from rlm_desktop import paths
from rlm_desktop.engine.code_stop import AFTER_CODE, FIRST_BLOCK, WHOLE_REPLY
from rlm_desktop.engine.profiles import (
    Profile,
    ProfileDraft,
    delete_user_profile,
    free_name,
    read_profiles,
    save_user_profile,
)
from rlm_desktop.ui.appearance.theme import monospace_font
from rlm_desktop.ui.run.controls import sentence
from rlm_desktop.ui.shared.widgets import note_label, plain_label

PROFILE_ROLE = 0x0101
CODE_STOP_CHOICES = {
    AFTER_CODE: "read on while code follows",
    FIRST_BLOCK: "stop at the first code block",
    WHOLE_REPLY: "read every reply to its end",
}
"""The profile's `code_stop` choices as the editor names them."""


def load_profiles() -> tuple[list[Profile], str]:
    """The engine's profiles that can be used, in matching order, and the problems to show, one
    sentence a file that could not be used ("" when none)."""
    found = read_profiles(paths.profile_folders())
    return found.usable, " ".join(sentence(problem) for problem in found.problems)


def is_users(profile: Profile) -> bool:
    """True for a profile read from the user's folder."""
    return profile.is_in(paths.user_profiles_dir())


def _tokens_spin(name: str) -> QSpinBox:
    spin = QSpinBox()
    spin.setRange(256, 1_000_000)
    spin.setSingleStep(1024)
    spin.setGroupSeparatorShown(True)
    spin.setAccessibleName(name)
    return spin


class ProfilesPage(QWidget):
    """A list of profiles and an editor that is read-only for bundled ones."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.list = QListWidget()
        self.list.setAccessibleName("Prompt profiles")
        self.info = plain_label()
        self.info.setObjectName("muted")
        self.info.setWordWrap(True)
        self.problems = plain_label()
        self.problems.setObjectName("errorLabel")
        self.problems.setWordWrap(True)
        self.problems.hide()
        self.patterns = QLineEdit()
        self.patterns.setAccessibleName("Model patterns")
        self.patterns.setPlaceholderText("model-name patterns, comma-separated, e.g. openai/gpt-5*")
        self.description = QLineEdit()
        self.description.setAccessibleName("Description")
        self.root_tokens = _tokens_spin("Root output tokens")
        self.sub_tokens = _tokens_spin("Sub-call output tokens")
        self.system_role = QCheckBox("send the instructions as a system message")
        self.system_role.setToolTip(
            "Off for models whose chat template has no system role (Gemma's): the instructions "
            "then open the first user message."
        )
        self.code_stop = QComboBox()
        self.code_stop.setAccessibleName("Code stop")
        for rule, text in CODE_STOP_CHOICES.items():
            self.code_stop.addItem(text, rule)
        self.code_stop.setToolTip(
            "Where a reply stops being read. Read on while code follows: every code block of a "
            "reply runs, in order; reading stops once a block is followed by an imagined output "
            "(Output:, a fenced output block, \"this prints\") or a long paragraph. Stop at the "
            "first code block: one block a turn, for small models that ramble on. What is not "
            "read is never run, so it is not waited for."
        )
        self.constrained_replies = QCheckBox("held to prose and one code block")
        self.constrained_replies.setToolTip(
            "Ask your own server to hold each turn's reply to prose and exactly one code block "
            "while it writes (llama.cpp and llama-cpp-python: a grammar; vLLM: a regex; Ollama "
            "and LM Studio: a JSON schema). A help for small models; other servers are sent "
            "nothing extra."
        )
        self.local_servers = QCheckBox("for my own server's models no other profile names")
        self.local_servers.setToolTip(
            "Chosen for a run with an API base (your own server) when only the catch-all * "
            "pattern would match its model."
        )
        self.editor = QPlainTextEdit()
        self.editor.setFont(monospace_font())
        self.editor.setAccessibleName("System prompt")
        self.copy_button = QPushButton("Copy to my profiles")
        self.save_button = QPushButton("Save")
        self.delete_button = QPushButton("Delete")
        self.copy_button.clicked.connect(lambda: self.copy_selected())
        self.save_button.clicked.connect(self.save_selected)
        self.delete_button.clicked.connect(lambda: self.delete_selected())
        self.list.currentItemChanged.connect(lambda *_args: self._show())

        form = QFormLayout()
        form.addRow("Patterns", self.patterns)
        form.addRow("Description", self.description)
        tokens = QHBoxLayout()
        tokens.addWidget(QLabel("root"))
        tokens.addWidget(self.root_tokens)
        tokens.addWidget(QLabel("sub-calls"))
        tokens.addWidget(self.sub_tokens)
        tokens.addStretch(1)
        form.addRow("Output tokens", tokens)
        form.addRow("System role", self.system_role)
        replies = QHBoxLayout()
        replies.addWidget(self.code_stop)
        replies.addWidget(self.constrained_replies)
        replies.addStretch(1)
        form.addRow("Replies", replies)
        form.addRow("Local server", self.local_servers)
        buttons = QHBoxLayout()
        for button in (self.copy_button, self.save_button, self.delete_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.addWidget(self.problems)
        right_layout.addWidget(self.info)
        right_layout.addLayout(form)
        right_layout.addWidget(self.editor, 1)
        right_layout.addLayout(buttons)
        splitter = QSplitter()
        splitter.addWidget(self.list)
        splitter.addWidget(right)
        splitter.setSizes([200, 560])
        note = note_label(
            f"Your copies are kept in {paths.user_profiles_dir()} and are tried first when a run "
            "picks a profile by model name."
        )
        layout = QVBoxLayout(self)
        layout.addWidget(note)
        layout.addWidget(splitter, 1)
        self.reload()

    def reload(self, select: str | None = None) -> None:
        """List the profiles again, selecting the one called `select` if given."""
        self.list.clear()
        profiles, problem = load_profiles()
        self.problems.setText(problem)
        self.problems.setVisible(bool(problem))
        for profile in profiles:
            own = is_users(profile)
            item = QListWidgetItem(f"{profile.name}{'  (mine)' if own else ''}")
            item.setData(PROFILE_ROLE, profile)
            self.list.addItem(item)
            if profile.name == select:
                self.list.setCurrentItem(item)
        if self.list.currentItem() is None and self.list.count():
            self.list.setCurrentRow(0)
        self._show()

    def selected(self) -> Profile | None:
        """The selected profile, or None."""
        item = self.list.currentItem()
        profile = item.data(PROFILE_ROLE) if item is not None else None
        return profile if isinstance(profile, Profile) else None

    def _show(self) -> None:
        profile = self.selected()
        own = profile is not None and is_users(profile)
        for widget in (self.patterns, self.description, self.editor):
            widget.setReadOnly(not own)
        for field in (self.root_tokens, self.sub_tokens, *self._flags()):
            field.setEnabled(own)
        self.copy_button.setEnabled(profile is not None)
        self.save_button.setEnabled(own)
        self.delete_button.setEnabled(own)
        if profile is None:
            self.info.setText("" if self.problems.text() else "No profiles found.")
            self.editor.clear()
            return
        self.patterns.setText(", ".join(profile.patterns))
        self.patterns.setCursorPosition(0)
        self.description.setText(profile.description)
        self.description.setCursorPosition(0)
        self.root_tokens.setValue(profile.root_max_output_tokens)
        self.sub_tokens.setValue(profile.sub_max_output_tokens)
        self.system_role.setChecked(profile.system_role)
        self.code_stop.setCurrentIndex(max(0, self.code_stop.findData(profile.code_stop)))
        self.constrained_replies.setChecked(profile.constrained_replies)
        self.local_servers.setChecked(profile.local_servers)
        self.editor.setPlainText(profile.prompt)
        where = "yours, editable" if own else "bundled, read-only: copy it to edit"
        self.info.setText(f"{profile.name} — {where} ({profile.source})")

    def _draft(self, name: str) -> ProfileDraft:
        patterns = tuple(p.strip() for p in self.patterns.text().split(",") if p.strip())
        return ProfileDraft(
            name=name,
            prompt=self.editor.toPlainText(),
            patterns=patterns,
            root_max_output_tokens=self.root_tokens.value(),
            sub_max_output_tokens=self.sub_tokens.value(),
            description=self.description.text(),
            system_role=self.system_role.isChecked(),
            code_stop=str(self.code_stop.currentData()),
            constrained_replies=self.constrained_replies.isChecked(),
            local_servers=self.local_servers.isChecked(),
        )

    def _flags(self) -> tuple[QWidget, ...]:
        return (self.system_role, self.code_stop, self.constrained_replies, self.local_servers)

    def copy_selected(self) -> str | None:
        """Copy the selected profile into the user's folder and select the copy."""
        profile = self.selected()
        if profile is None:
            return None
        taken = {self.list.item(i).data(PROFILE_ROLE).name for i in range(self.list.count())}
        name = free_name(profile.name, taken)
        save_user_profile(paths.user_profiles_dir(), self._draft(name))
        self.reload(select=name)
        return name

    def save_selected(self) -> None:
        """Write the edits of the selected user profile."""
        profile = self.selected()
        if profile is not None and is_users(profile):
            save_user_profile(paths.user_profiles_dir(), self._draft(profile.name))
            self.reload(select=profile.name)
            self.info.setText(f"{profile.name} — saved")

    def delete_selected(self, confirm: bool = True) -> None:
        """Delete the selected user profile (asking first unless `confirm` is False)."""
        profile = self.selected()
        if profile is None or not is_users(profile):
            return
        if confirm:
            answer = QMessageBox.question(self, "Delete profile", f"Delete {profile.name}?")
            if answer != QMessageBox.StandardButton.Yes:
                return
        delete_user_profile(paths.user_profiles_dir(), profile.name)
        self.reload()
