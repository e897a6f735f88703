"""Non-secret settings, persisted with QSettings in the data folder (`settings.ini`).

API keys never come here: they live in the keyring (`rlm_desktop.providers.keys`). Because the file sits in
the data folder, `RLM_DESKTOP_HOME` isolates tests and portable installs alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QByteArray, QSettings

from rlm_desktop.engine.config import DEFAULT_MODE, DEFAULT_MODEL, STARTER_BUDGET
from rlm_desktop.paths import data_dir

_CAPS = STARTER_BUDGET


@dataclass
class RunDefaults:
    """The run settings a new run starts from; the engine's `STARTER_BUDGET` until changed.

    A cap of 0 means "no limit", as the run controls show it.
    """

    model: str = DEFAULT_MODEL
    sub_model: str = ""
    mode: str = DEFAULT_MODE
    max_depth: int = _CAPS.max_depth
    profile: str = ""
    max_cost_usd: float = _CAPS.max_cost_usd or 0.0
    max_tokens: int = _CAPS.max_tokens or 0
    max_sub_calls: int = _CAPS.max_sub_calls or 0
    max_turns: int = _CAPS.max_turns
    timeout_s: int = int(_CAPS.timeout_s or 0)


def _to_int(value: Any, default: int) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def _to_float(value: Any, default: float) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return default


class Preferences:
    """Typed access to the settings file."""

    def __init__(self, path: str | None = None) -> None:
        self.path = path or str(data_dir() / "settings.ini")
        self.qsettings = QSettings(self.path, QSettings.Format.IniFormat)

    def get(self, key: str, default: Any = None) -> Any:
        """The raw value stored under `key`."""
        return self.qsettings.value(key, default)

    def set(self, key: str, value: Any) -> None:
        """Store `value` under `key` and write the file."""
        self.qsettings.setValue(key, value)
        self.qsettings.sync()

    def get_bool(self, key: str, default: bool = False) -> bool:
        """A stored boolean (QSettings keeps them as text in INI files)."""
        value = self.get(key, default)
        if isinstance(value, str):
            return value.lower() in ("1", "true", "yes")
        return bool(value)

    def get_str(self, key: str, default: str = "") -> str:
        """A stored string."""
        value = self.get(key, default)
        return default if value is None else str(value)

    def run_defaults(self) -> RunDefaults:
        """The saved defaults for new runs."""
        d = RunDefaults()
        return RunDefaults(
            model=self.get_str("run/model", d.model) or d.model,
            sub_model=self.get_str("run/sub_model", d.sub_model),
            mode=self.get_str("run/mode", d.mode),
            max_depth=_to_int(self.get("run/max_depth"), d.max_depth),
            profile=self.get_str("run/profile", d.profile),
            max_cost_usd=_to_float(self.get("run/max_cost_usd"), d.max_cost_usd),
            max_tokens=_to_int(self.get("run/max_tokens"), d.max_tokens),
            max_sub_calls=_to_int(self.get("run/max_sub_calls"), d.max_sub_calls),
            max_turns=_to_int(self.get("run/max_turns"), d.max_turns),
            timeout_s=_to_int(self.get("run/timeout_s"), d.timeout_s),
        )

    def set_run_defaults(self, defaults: RunDefaults) -> None:
        """Save the defaults for new runs."""
        for name, value in vars(defaults).items():
            self.qsettings.setValue(f"run/{name}", value)
        self.qsettings.sync()

    def prices_text(self) -> str:
        """The user's own model prices, one `model = input, output` line each (USD per 1M tokens)."""
        return self.get_str("run/prices")

    def set_prices_text(self, text: str) -> None:
        """Save the user's model prices."""
        self.set("run/prices", text.strip())

    def base_url(self, provider: str) -> str:
        """The configured base URL of a local provider ("" when none)."""
        return self.get_str(f"providers/{provider}_base_url")

    def set_base_url(self, provider: str, url: str) -> None:
        """Save (or clear) a local provider's base URL."""
        self.set(f"providers/{provider}_base_url", url.strip())

    def extra_providers(self) -> list[str]:
        """Providers the user added by litellm name."""
        value = self.get_str("providers/extra")
        return [p for p in value.split(",") if p]

    def set_extra_providers(self, names: list[str]) -> None:
        """Save the providers the user added by litellm name."""
        self.set("providers/extra", ",".join(dict.fromkeys(n.strip() for n in names if n.strip())))

    @property
    def theme(self) -> str:
        """ "light", "dark" or "system"."""
        value = self.get_str("appearance/theme", "system")
        return value if value in ("light", "dark", "system") else "system"

    def window_state(self, name: str) -> QByteArray | None:
        """Saved geometry or splitter state called `name`."""
        value = self.get(f"window/{name}")
        return value if isinstance(value, QByteArray) else None

    def set_window_state(self, name: str, value: QByteArray) -> None:
        """Remember geometry or splitter state (written when the window closes)."""
        self.qsettings.setValue(f"window/{name}", value)
