"""Non-secret settings, persisted in the data folder's `settings.ini` (Qt's INI format).

API keys never come here: they live in the keyring (`rlm_desktop.providers.keys`). Because the file sits in
the data folder, `RLM_DESKTOP_HOME` isolates tests and portable installs alike. The file holds plain
values only and is read and written by `rlm_desktop.settings_file`, never by QSettings, which would
decode (and, through PySide, unpickle) whatever type a value names.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import TypeVar

from PySide6.QtCore import QByteArray

from rlm_desktop.engine.config import (
    DEFAULT_MODE,
    DEFAULT_MODEL,
    DEFAULT_SCRATCH_QUOTA_MB,
    MAX_SCRATCH_QUOTA_MB,
    SANDBOX_CHOICES,
    STARTER_BUDGET,
    Budget,
    SandboxChoice,
)
from rlm_desktop.paths import data_dir
from rlm_desktop.settings_file import SettingsFile
from rlm_desktop.settings_ini import Plain
from rlm_desktop.ui.shared.workspace_documents import (
    documents_file,
    pairs,
    read_documents,
    write_documents,
)

_CAPS = STARTER_BUDGET
LOCAL_SERVERS = (("local", "Local server"), ("ollama", "Ollama"))
"""Local servers by provider name, with the label the endpoint pickers show."""


@dataclass(frozen=True)
class Endpoint:
    """A local server requests can go to: its provider name, label and base URL."""

    name: str
    label: str
    url: str


WORKSPACE = "workspace"
WORKSPACE_DOCUMENTS = f"{WORKSPACE}/documents"
"""The section of what the workspace was left with, kept apart from the defaults for new runs."""


@dataclass
class RunDefaults:
    """The run settings a new run starts from; the engine's `STARTER_BUDGET` until changed.

    A cap of 0 means "no limit", as the run controls show it. `endpoint` names where requests
    go: "" for the provider's own API, or a local server ("local", "ollama") whose address is
    looked up when a run starts, so editing the address keeps the choice.
    """

    model: str = DEFAULT_MODEL
    sub_model: str = ""
    endpoint: str = ""
    mode: str = DEFAULT_MODE
    max_depth: int = _CAPS.max_depth
    profile: str = ""
    max_cost_usd: float = _CAPS.max_cost_usd or 0.0
    max_tokens: int = _CAPS.max_tokens or 0
    max_sub_calls: int = _CAPS.max_sub_calls or 0
    max_turns: int = _CAPS.max_turns
    timeout_s: int = int(_CAPS.timeout_s or 0)

    def budget(self) -> Budget:
        """The limits as the engine takes them: a cap of 0 ("no limit") becomes None."""
        return Budget(
            max_cost_usd=self.max_cost_usd or None,
            max_tokens=self.max_tokens or None,
            max_sub_calls=self.max_sub_calls or None,
            max_depth=self.max_depth,
            max_turns=self.max_turns,
            timeout_s=float(self.timeout_s) if self.timeout_s else None,
        )

    def changed_since(self, before: RunDefaults) -> list[str]:
        """The names of the settings that differ from `before`'s."""
        return [f.name for f in fields(self) if getattr(self, f.name) != getattr(before, f.name)]


_Number = TypeVar("_Number", int, float)


def _number(value: object, kind: type[_Number], default: _Number) -> _Number:
    """`value` as a `kind` (an INI file keeps numbers as text), or `default` when it is none."""
    if isinstance(value, int | float | str):
        try:
            return kind(value)
        except ValueError:
            pass
    return default


class Preferences:
    """Typed access to the settings file."""

    def __init__(self, path: str | None = None) -> None:
        self.path = path or str(data_dir() / "settings.ini")
        self.file = SettingsFile.at(self.path)
        self._documents_kept: list[tuple[str, str]] | None = None

    def get(self, key: str, default: object = None) -> object:
        """The value stored under `key` (text, a list of text or bytes), else `default`."""
        value = self.file.get(key)
        return default if value is None else value

    def set(self, key: str, value: Plain | None) -> None:
        """Store `value` under `key` (None removes it) and write the file."""
        self.file.update({key: value})

    def set_many(self, values: Mapping[str, Plain | None]) -> None:
        """Store several values in one write of the file."""
        self.file.update(values)

    def get_bool(self, key: str, default: bool = False) -> bool:
        """A stored boolean (an INI file keeps them as text: `true`, `false`)."""
        value = self.get(key, default)
        if isinstance(value, str):
            return value.lower() in ("1", "true", "yes")
        return bool(value)

    def get_str(self, key: str, default: str = "") -> str:
        """A stored string."""
        value = self.get(key, default)
        return default if value is None else str(value)

    def get_int(self, key: str, default: int = 0) -> int:
        """A stored whole number (`default` when missing or not a number)."""
        return _number(self.get(key), int, default)

    def get_float(self, key: str, default: float = 0.0) -> float:
        """A stored number (`default` when missing or not a number)."""
        return _number(self.get(key), float, default)

    def run_defaults(self) -> RunDefaults:
        """The saved defaults for new runs."""
        return self._run_settings("run", RunDefaults())

    def _run_settings(self, section: str, d: RunDefaults) -> RunDefaults:
        return RunDefaults(
            model=self.get_str(f"{section}/model", d.model) or d.model,
            sub_model=self.get_str(f"{section}/sub_model", d.sub_model),
            endpoint=self.get_str(f"{section}/endpoint", d.endpoint),
            mode=self.get_str(f"{section}/mode", d.mode),
            max_depth=self.get_int(f"{section}/max_depth", d.max_depth),
            profile=self.get_str(f"{section}/profile", d.profile),
            max_cost_usd=self.get_float(f"{section}/max_cost_usd", d.max_cost_usd),
            max_tokens=self.get_int(f"{section}/max_tokens", d.max_tokens),
            max_sub_calls=self.get_int(f"{section}/max_sub_calls", d.max_sub_calls),
            max_turns=self.get_int(f"{section}/max_turns", d.max_turns),
            timeout_s=self.get_int(f"{section}/timeout_s", d.timeout_s),
        )

    def set_run_defaults(self, defaults: RunDefaults, only: list[str] | None = None) -> None:
        """Save the defaults for new runs (only the settings named in `only`, if given)."""
        self.set_many(_run_values("run", defaults, only))

    def workspace_choices(self) -> RunDefaults:
        """The run settings the workspace was left with (`set_workspace`), each one missing
        taken from the defaults for new runs: what the window starts with."""
        return self._run_settings(WORKSPACE, self.run_defaults())

    def workspace_documents(self) -> list[tuple[str, str]]:
        """The documents the workspace held when it was left, in order: (path, name) each
        (kept in a file of their own, `workspace_documents`; earlier versions kept them in
        the settings)."""
        kept = read_documents(documents_file(self.path))
        return pairs(self._json_list(WORKSPACE_DOCUMENTS)) if kept is None else kept

    def set_workspace(self, choices: RunDefaults, documents: Sequence[tuple[str, str]]) -> None:
        """Remember the workspace's run settings and documents for the next start (the
        documents' file is written only when they changed since this object last wrote it)."""
        values = _run_values(WORKSPACE, choices)
        values[WORKSPACE_DOCUMENTS] = None  # an earlier version's copy, now in its own file
        self.set_many(values)
        if self._documents_kept != documents:
            write_documents(documents_file(self.path), documents)
            self._documents_kept = list(documents)

    def prices_text(self) -> str:
        """The user's own model prices, one `model = input, output` line each (USD per 1M tokens)."""
        return self.get_str("run/prices")

    def set_prices_text(self, text: str) -> None:
        """Save the user's model prices."""
        self.set("run/prices", text.strip())

    def allowed_folders(self) -> list[str]:
        """The folders the user opened to model code (read-only), as saved, missing ones included."""
        return [str(f) for f in self._json_list("sandbox/allow_read") if f]

    def _json_list(self, key: str) -> list[object]:
        """The JSON list stored under `key` ([] when missing, damaged or not a list)."""
        try:
            value = json.loads(self.get_str(key, "[]"))
        except ValueError:
            return []
        return value if isinstance(value, list) else []

    def opened_folders(self) -> tuple[str, ...]:
        """The saved folders that exist now: what runs open to model code (a missing one is
        left out, so it cannot stop a run)."""
        return tuple(f for f in self.allowed_folders() if os.path.isdir(f))

    def set_allowed_folders(self, folders: list[str]) -> None:
        """Save the folders opened to model code."""
        self.set("sandbox/allow_read", json.dumps(list(dict.fromkeys(folders))))

    @property
    def require_isolation(self) -> bool:
        """True when runs must refuse model code without filesystem and network isolation."""
        return self.get_bool("sandbox/require_isolation")

    def set_require_isolation(self, required: bool) -> None:
        """Save whether runs refuse model code without isolation."""
        self.set("sandbox/require_isolation", bool(required))

    @property
    def scratch_quota_mb(self) -> int:
        """The most model code's files may take in a run, in MB (out-of-range values: the
        engine's default)."""
        value = self.get_int("sandbox/scratch_quota_mb", DEFAULT_SCRATCH_QUOTA_MB)
        return value if 1 <= value <= MAX_SCRATCH_QUOTA_MB else DEFAULT_SCRATCH_QUOTA_MB

    def set_scratch_quota_mb(self, megabytes: int) -> None:
        """Save the most model code's files may take in a run."""
        self.set("sandbox/scratch_quota_mb", int(megabytes))

    @property
    def sandbox_backend(self) -> SandboxChoice:
        """Where runs put model code: `auto` (the default), `kernel` or `wasm` (see
        `RunConfig.sandbox`); a value the app never writes reads as `auto`."""
        value = self.get_str("sandbox/backend", "auto")
        return next((choice for choice in SANDBOX_CHOICES if choice == value), "auto")

    def set_sandbox_backend(self, choice: SandboxChoice) -> None:
        """Save where runs put model code."""
        self.set("sandbox/backend", choice)

    @property
    def ocr(self) -> bool:
        """True (the default) when images and scanned PDF pages are read by OCR."""
        return self.get_bool("documents/ocr", True)

    def set_ocr(self, on: bool) -> None:
        """Save whether images and scanned PDF pages are read by OCR."""
        self.set("documents/ocr", bool(on))

    @property
    def otlp_endpoint(self) -> str:
        """The OTLP/HTTP collector each finished run's trace is sent to ("" for none)."""
        return self.get_str("traces/otlp_endpoint")

    def set_otlp_endpoint(self, url: str) -> None:
        """Save the collector runs' traces are sent to ("" to send none)."""
        self.set("traces/otlp_endpoint", url.strip())

    def base_url(self, provider: str) -> str:
        """The configured base URL of a local provider ("" when none)."""
        return self.get_str(f"providers/{provider}_base_url")

    def set_base_url(self, provider: str, url: str) -> None:
        """Save (or clear) a local provider's base URL."""
        self.set(f"providers/{provider}_base_url", url.strip())

    def endpoints(self) -> list[Endpoint]:
        """The local servers that have an address, in the order the pickers list them."""
        found = [Endpoint(name, label, self.base_url(name)) for name, label in LOCAL_SERVERS]
        return [e for e in found if e.url]

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
        return QByteArray(value) if isinstance(value, bytes) else None

    def set_window(self, states: Mapping[str, QByteArray], switches: Mapping[str, bool]) -> None:
        """Remember the window's geometry and splitter states and its switches, in one write."""
        values: dict[str, Plain] = {f"window/{n}": bytes(s.data()) for n, s in states.items()}
        self.set_many(values | {f"window/{name}": on for name, on in switches.items()})


def _run_values(
    section: str, settings: RunDefaults, only: list[str] | None = None
) -> dict[str, Plain | None]:
    """`settings` as the values kept under `section` (only those named in `only`, if given)."""
    return {
        f"{section}/{name}": value
        for name, value in vars(settings).items()
        if only is None or name in only
    }
