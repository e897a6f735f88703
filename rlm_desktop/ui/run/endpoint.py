"""The endpoint picker: the provider's own API, or a local server, remembered by name.

A choice is kept by the server's provider name ("local", "ollama"), not its address, so editing
the address in Settings → Providers keeps the choice, and a server whose address is cleared for
a moment comes back chosen with its new one.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QComboBox, QWidget

from rlm_desktop.ui.shared.preferences import Endpoint

NAME_ROLE = Qt.ItemDataRole.UserRole + 1
"""Each item's data is its base URL ("" for the provider's API); its provider name is here."""
PROVIDER_API = "provider's API"


class EndpointPicker(QComboBox):
    """Where requests go. `chosen` carries the provider name of a new choice ("" for the API)."""

    chosen = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Endpoint")
        self.setToolTip("Where requests go: the provider's own API or a local server")
        self.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.choice = ""
        """The provider name chosen last, listed or not."""
        self.set_endpoints([])
        self.currentIndexChanged.connect(self._changed)

    def set_endpoints(self, endpoints: list[Endpoint], current: str | None = None) -> None:
        """List the provider's API, then `endpoints`; choose `current` (by default the last
        choice), or the provider's API while that one is not listed."""
        if current is not None:
            self.choice = current
        self.blockSignals(True)
        self.clear()
        self.addItem(PROVIDER_API, "")
        self.setItemData(0, "", NAME_ROLE)
        for endpoint in endpoints:
            index = self.count()
            self.addItem(endpoint.label, endpoint.url)
            self.setItemData(index, endpoint.name, NAME_ROLE)
            self.setItemData(index, endpoint.url, Qt.ItemDataRole.ToolTipRole)
        self.setCurrentIndex(max(0, self.findData(self.choice, NAME_ROLE)))
        self.blockSignals(False)

    def choose(self, name: str) -> None:
        """Choose the endpoint called `name` ("" for the provider's API)."""
        self.set_endpoints(self.endpoints(), name)

    def endpoints(self) -> list[Endpoint]:
        """The local servers listed now."""
        return [
            Endpoint(str(self.itemData(i, NAME_ROLE)), self.itemText(i), str(self.itemData(i)))
            for i in range(1, self.count())
        ]

    def name(self) -> str:
        """The provider name of the endpoint in use ("" for the provider's own API)."""
        return str(self.currentData(NAME_ROLE) or "")

    def url(self) -> str | None:
        """The base URL requests go to (None for the provider's own API)."""
        return str(self.currentData() or "") or None

    def _changed(self, _index: int) -> None:
        self.choice = self.name()
        self.chosen.emit(self.choice)
