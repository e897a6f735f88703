"""Settings → Providers: API keys in the OS keyring, and local servers by base URL.

Keys are written only through `rlm_desktop.providers.keys` (keyring, or memory for this session when the
user chooses so because no keyring works). This page never writes a key anywhere else.
"""

from __future__ import annotations

import asyncio

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from rlm_desktop import formatting as fmt
from rlm_desktop.providers import keys, registry
from rlm_desktop.providers.catalog import (
    DiscoveryError,
    discover_ollama,
    discover_openai_compatible,
)
from rlm_desktop.ui.appearance.theme import repolish
from rlm_desktop.ui.shared.preferences import Preferences
from rlm_desktop.ui.shared.widgets import plain_label

NO_KEYRING = (
    "{backend}: API keys cannot be saved on this computer. Install or unlock a keyring service "
    "(GNOME Keyring or KWallet on Linux; the Keychain and Credential Manager are built into "
    "macOS and Windows) and restart RLM Desktop — or keep a key for this session only: it stays "
    "in memory and is forgotten when the app closes."
)
NOT_SAVED = (
    "Not saved: tick “Keep keys for this session only” above to use it until RLM Desktop closes."
)
NOT_SAVED_SHORT = "not saved"
NO_KEY = "no key"
SOURCES = {"keyring": "saved in the keyring", "session": "kept for this session only"}
"""What a key row says of a key kept by us, by `keys.key_source`."""
KEY_FIELD_CHARS = 24
"""A key field stays at least this wide, whatever the row says beside it."""


def _source_text(name: str) -> str:
    source = keys.key_source(name)
    if source in SOURCES:
        return SOURCES[source]
    if source:
        return f"from the environment ({source})"
    return NO_KEY


class KeyRow:
    """The widgets of one provider's key: entry, Save, Remove and where the key comes from.

    It takes two lines of `grid` from `row`: the fields, then a problem (hidden while there is
    none), so that a long message never squeezes the key field.
    """

    def __init__(self, page: ProvidersPage, name: str, grid: QGridLayout, row: int) -> None:
        self.page, self.name = page, name
        provider = registry.provider(name)
        self.label = QLabel(provider.label)
        self.edit = QLineEdit()
        self.edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.edit.setPlaceholderText("paste a key to save it")
        self.edit.setAccessibleName(f"{provider.label} API key")
        self.edit.setMinimumWidth(self.edit.fontMetrics().averageCharWidth() * KEY_FIELD_CHARS)
        self.save_button = QPushButton("Save")
        self.save_button.setAccessibleName(f"Save {provider.label} key")
        self.save_button.clicked.connect(self.save)
        self.edit.returnPressed.connect(self.save)
        self.remove_button = QPushButton("Remove")
        self.remove_button.setAccessibleName(f"Remove {provider.label} key")
        self.remove_button.clicked.connect(self.remove)
        self.status = plain_label()
        self.status.setObjectName("muted")
        self.status.setAccessibleName(f"{provider.label} key status")
        says = [*SOURCES.values(), NOT_SAVED_SHORT, NO_KEY]
        if provider.env_var:
            says.append(f"from the environment ({provider.env_var})")
        metrics = self.status.fontMetrics()
        self.status.setMinimumWidth(max(metrics.horizontalAdvance(text) for text in says))
        self.problem = plain_label()
        self.problem.setObjectName("errorLabel")
        self.problem.setWordWrap(True)
        self.problem.setAccessibleName(f"{provider.label} key problem")
        self.problem.hide()
        for column, widget in enumerate(
            (self.label, self.edit, self.save_button, self.remove_button, self.status)
        ):
            grid.addWidget(widget, row, column)
        grid.addWidget(self.problem, row + 1, 1, 1, 4)
        self.refresh()

    def refresh(self) -> None:
        """Say where the provider's key comes from now."""
        self.status.setObjectName("muted")
        self.status.setText(_source_text(self.name))
        repolish(self.status)
        self.problem.hide()
        self.remove_button.setEnabled(keys.key_source(self.name) in ("keyring", "session"))

    def save(self) -> bool:
        """Save the typed key; on failure say why under the row."""
        text = self.edit.text()
        session_only = self.page.session_only.isChecked()
        try:
            keys.set_key(self.name, text, session_only=session_only)
        except keys.KeyringUnavailable as exc:
            self._problem(NOT_SAVED if not keys.keyring_available() else f"Not saved: {exc}.")
            self.page.offer_session_only()
            return False
        except ValueError as exc:
            self._problem(str(exc)[:1].upper() + str(exc)[1:] + ".")
            return False
        self.edit.clear()
        self.refresh()
        self.page.keys_changed()
        return True

    def _problem(self, message: str) -> None:
        self.status.setObjectName("errorLabel")
        self.status.setText(NOT_SAVED_SHORT)
        repolish(self.status)
        self.problem.setText(message)
        self.problem.show()

    def remove(self) -> None:
        """Forget the stored key."""
        keys.delete_key(self.name)
        self.refresh()
        self.page.keys_changed()


class ProvidersPage(QScrollArea):
    """Keys for hosted providers, base URLs for local ones, and where keys are kept.

    `servers_changed` fires when a local server's address was saved; `models_found` carries a
    server's provider name and the models it listed.
    """

    servers_changed = Signal()
    models_found = Signal(str, list)

    def __init__(self, prefs: Preferences, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.prefs = prefs
        self.setWidgetResizable(True)
        body = QWidget()
        layout = QVBoxLayout(body)
        self.backend = plain_label()
        self.backend.setWordWrap(True)
        self.backend.setAccessibleName("Keyring backend")
        self.session_only = QCheckBox("Keep keys for this session only (in memory, not saved)")
        self.session_only.setAccessibleName("Keep keys for this session only")
        layout.addWidget(self.backend)
        layout.addWidget(self.session_only)

        hosted = QGroupBox("Hosted providers")
        self.grid = QGridLayout(hosted)
        self.grid.setColumnStretch(1, 1)
        self.rows: dict[str, KeyRow] = {}
        for name in [n for n, p in registry.PROVIDERS.items() if p.needs_key]:
            self._add_row(name)
        self.other = QLineEdit()
        self.other.setPlaceholderText("another litellm provider, e.g. mistral, groq, deepseek")
        self.other.setAccessibleName("Other provider name")
        add_other = QPushButton("Add provider")
        add_other.clicked.connect(self.add_other)
        self.other.returnPressed.connect(self.add_other)
        for name in prefs.extra_providers():
            self._add_row(name)
        other_row = QHBoxLayout()
        other_row.addWidget(self.other, 1)
        other_row.addWidget(add_other)
        layout.addWidget(hosted)
        layout.addLayout(other_row)

        self.list_buttons: dict[str, QPushButton] = {}
        self.list_results: dict[str, QLabel] = {}
        local = QGroupBox("Local servers")
        local_grid = QGridLayout(local)
        local_grid.setColumnStretch(1, 1)
        self.local_url = self._url_row(
            local_grid,
            0,
            "local",
            "OpenAI-compatible server",
            registry.PROVIDERS["local"].base_url or "",
        )
        self.ollama_url = self._url_row(
            local_grid, 2, "ollama", "Ollama", registry.PROVIDERS["ollama"].base_url or ""
        )
        self.local_key = KeyRow(self, "local", local_grid, 4)
        self.local_key.label.setText("Local server key (optional)")
        layout.addWidget(local)
        layout.addStretch(1)
        self.setWidget(body)
        self.refresh_backend()

    def _add_row(self, name: str) -> None:
        if name not in self.rows:
            self.rows[name] = KeyRow(self, name, self.grid, 2 * len(self.rows))

    def _url_row(
        self, grid: QGridLayout, row: int, name: str, label: str, example: str
    ) -> QLineEdit:
        edit = QLineEdit(self.prefs.base_url(name))
        edit.setPlaceholderText(f"not used — e.g. {example}")
        edit.setAccessibleName(f"{label} base URL")
        edit.editingFinished.connect(lambda: self.save_url(name, edit.text()))
        button = QPushButton("List models")
        button.setAccessibleName(f"List {label} models")
        result = plain_label()
        result.setObjectName("muted")
        result.setWordWrap(True)
        result.hide()
        button.clicked.connect(lambda: asyncio.ensure_future(self.list_models(name, edit, result)))
        self.list_buttons[name], self.list_results[name] = button, result
        grid.addWidget(QLabel(label), row, 0)
        grid.addWidget(edit, row, 1, 1, 2)
        grid.addWidget(button, row, 3)
        grid.addWidget(result, row + 1, 1, 1, 4)
        return edit

    def save_url(self, name: str, url: str) -> None:
        """Save a local server's address (the run controls' endpoint follows it)."""
        if url.strip() != self.prefs.base_url(name):
            self.prefs.set_base_url(name, url)
            self.servers_changed.emit()

    async def list_models(self, name: str, edit: QLineEdit, result: QLabel) -> list[str]:
        """Save the base URL and ask the server for its models; show what it said."""
        self.save_url(name, edit.text())
        result.show()
        url = edit.text().strip()
        if not url:
            result.setText("Enter the server's base URL first.")
            return []
        result.setText("asking…")
        loop = asyncio.get_running_loop()
        try:
            if name == "ollama":
                found = await loop.run_in_executor(None, discover_ollama, url)
            else:
                found = await loop.run_in_executor(
                    None, discover_openai_compatible, url, keys.get_key("local")
                )
        except DiscoveryError as exc:
            result.setText(str(exc))
            return []
        shown = ", ".join(map(fmt.model_name, found[:4])) + ("…" if len(found) > 4 else "")
        result.setText(f"{len(found)} model{'s' if len(found) != 1 else ''}: {shown}")
        self.models_found.emit(name, found)
        return found

    def add_other(self) -> None:
        """Add a key row for a provider named by its litellm prefix."""
        name = self.other.text().strip().lower()
        if not name or not name.replace("_", "").replace("-", "").isalnum():
            return
        self.prefs.set_extra_providers([*self.prefs.extra_providers(), name])
        self._add_row(name)
        self.other.clear()

    def refresh_backend(self) -> None:
        """Say which keyring is in use, or plainly that none works."""
        description = keys.backend_description()
        if keys.keyring_available():
            self.backend.setObjectName("muted")
            self.backend.setText(
                f"API keys are kept in your system keyring: {description}. "
                "RLM Desktop never writes them to a file."
            )
            self.session_only.setChecked(False)
            self.session_only.hide()
        else:
            self.backend.setObjectName("warningBox")
            self.backend.setText(
                NO_KEYRING.format(backend=description[:1].upper() + description[1:])
            )
            self.session_only.show()
        repolish(self.backend)

    def offer_session_only(self) -> None:
        """Point at the session-only choice after the keyring refused a key."""
        self.refresh_backend()
        self.session_only.show()
        self.session_only.setFocus()

    def keys_changed(self) -> None:
        """Refresh every row after a key changed, and note whether one is saved in the keyring.

        The note lets the window skip the keyring at start-up; a key kept for this session
        only never counts, since it is gone at the next start.
        """
        rows = (*self.rows.values(), self.local_key)
        for row in rows:
            row.refresh()
        saved = any(keys.key_source(row.name) == "keyring" for row in self.rows.values())
        self.prefs.set("providers/key_saved", saved)

    def focus_server(self, name: str) -> None:
        """Put the cursor in a local server's address ("local" or "ollama")."""
        edit = self.ollama_url if name == "ollama" else self.local_url
        self.ensureWidgetVisible(edit)
        edit.setFocus()
        edit.selectAll()

    def focus_key(self, name: str) -> None:
        """Put the cursor where provider `name`'s key goes (the name ready to add, if unlisted)."""
        row = self.local_key if name == registry.LOCAL else self.rows.get(name)
        if row is None:
            self.other.setText(name)
            edit = self.other
        else:
            edit = row.edit
        self.ensureWidgetVisible(edit)
        edit.setFocus()

    def warning_shown(self) -> bool:
        """True when the page warns that no keyring works."""
        return self.backend.objectName() == "warningBox"
