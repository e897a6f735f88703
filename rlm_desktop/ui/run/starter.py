"""Turns the run controls into a started run, and does the start-up work after the first paint.

It checks what a person can fix before anything is sent (no question, no documents, no key) and
says so in one line under the fields; then it builds the engine's `RunConfig` and hands it to the
`RunController`.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import threading
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QTimer

from rlm_desktop import paths
from rlm_desktop.engine.config import DEFAULT_MODEL
from rlm_desktop.providers import keys, registry
from rlm_desktop.providers.catalog import (
    DiscoveryError,
    discover_ollama,
    discover_openai_compatible,
    litellm_model_names,
)
from rlm_desktop.ui.run.controller import RunController

if TYPE_CHECKING:
    from rlm_desktop.ui.main_window import MainWindow

log = logging.getLogger(__name__)
MODEL_SETTLE_MS = 300


def warm_engine() -> None:
    """Import litellm and load its tokenizer (seconds, blocking); run in a worker thread so
    the first Run starts at once instead of freezing the window.

    Then the objects made so far (litellm's are many) are moved out of the garbage collector's
    sight: a full collection over them paused the event loop for ~200 ms in the middle of runs.
    """
    from rlm_desktop.engine.litellm_loader import warm_up

    warm_up()
    gc.collect()
    gc.freeze()


def gather_model_names(local_url: str, ollama_url: str, local_key: str | None) -> list[str]:
    """Discovered local models first, then litellm's names (runs in a worker thread)."""
    found: list[str] = []
    try:
        found += discover_openai_compatible(local_url, local_key)
    except DiscoveryError as exc:
        log.info("model discovery: %s", exc)
    try:
        found += discover_ollama(ollama_url)
    except DiscoveryError as exc:
        log.info("model discovery: %s", exc)
    return [*found, *litellm_model_names()]


class RunStarter(QObject):
    """Glue between the window's controls, the preferences, the keys and the runner."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self._store: Any = None
        self.runner: RunController | None = None
        self.local_models: set[str] = set()
        self._model_timer = QTimer(self, singleShot=True, interval=MODEL_SETTLE_MS)
        self._model_timer.timeout.connect(self.follow_model)
        window.workspace.controls.model.currentTextChanged.connect(
            lambda _text: self._model_timer.start()
        )

    @property
    def running(self) -> bool:
        """True while a run is in progress."""
        return self.runner is not None and self.runner.running

    def store(self) -> Any:
        """The session store, opened on first use."""
        if self._store is None:
            from rlm_desktop.store import Store

            self._store = Store()
        return self._store

    def apply_preferences(self) -> None:
        """Fill the controls from the saved defaults (first time) and the configured servers."""
        prefs, controls = self.window.prefs, self.window.workspace.controls
        if not controls.model.currentText():
            defaults = prefs.run_defaults()
            try:
                controls.set_profiles(_profile_names(), defaults.profile)
            except Exception as exc:
                log.info("profiles: %s", exc)
            controls.apply_defaults(defaults)
        controls.set_endpoints(
            [("Local server", prefs.base_url("local")), ("Ollama", prefs.base_url("ollama"))],
            controls.endpoint.currentData() or "",
        )

    def follow_model(self) -> None:
        """Count new documents' tokens for the chosen root model, and judge "short enough for a
        direct call" by the engine's `auto` threshold for that model's window."""
        from rlm_desktop.engine.direct import comfortable_tokens
        from rlm_desktop.engine.pricing import PriceBook, parse_prices

        model = self.window.workspace.controls.model.currentText().strip()
        if not model:
            return
        try:
            prices = parse_prices(self.window.prefs.prices_text())
        except ValueError:
            prices = {}
        window = PriceBook(prices).info(model).context_window
        self.window.workspace.documents.set_run_model(model, comfortable_tokens(window))

    def warm_up(self) -> None:
        """After the first paint: model names, local models, profiles, and litellm's import."""
        threading.Thread(target=warm_engine, name="rlm-warm-up", daemon=True).start()
        asyncio.ensure_future(self.refresh_models())

    async def refresh_models(self) -> list[str]:
        """Ask configured local servers for their models and fill the pickers."""
        prefs = self.window.prefs
        loop = asyncio.get_running_loop()
        names = await loop.run_in_executor(
            None,
            gather_model_names,
            prefs.base_url("local"),
            prefs.base_url("ollama"),
            keys.get_key("local"),
        )
        self.local_models = {n for n in names if n.startswith(("openai/", "ollama_chat/"))}
        self.window.workspace.controls.set_model_names(names)
        await self.load_profiles()
        return names

    async def load_profiles(self) -> None:
        """Fill the profile picker from the engine's profiles."""
        loop = asyncio.get_running_loop()
        try:
            names = await loop.run_in_executor(None, _profile_names)
        except Exception as exc:
            log.info("profiles: %s", exc)
            return
        controls = self.window.workspace.controls
        controls.set_profiles(
            names, controls.profile.currentData() or self.window.prefs.run_defaults().profile
        )

    def _credentials(self, model: str, api_base: str | None) -> tuple[str | None, str]:
        """(API key or None, a one-line problem or "")."""
        name = registry.provider_for_run(model, api_base)
        provider = registry.provider(name)
        key = keys.get_key(name)
        if key or not provider.needs_key:
            return key, ""
        where = f", or set {provider.env_var}" if provider.env_var else ""
        return None, (
            f"No API key for {provider.label}: add one in Settings → Providers (Ctrl+,){where}."
        )

    def start(self) -> bool:
        """Check the inputs and start a run; False (with a message shown) when it cannot."""
        ws = self.window.workspace
        controls = ws.controls
        values = controls.values()
        problem = ""
        if self.running:
            problem = "A run is already in progress: stop it first (Esc)."
        elif not values["query"]:
            problem = "Type a question first."
        elif not values["model"]:
            problem = f"Choose a root model, e.g. {DEFAULT_MODEL}."
        elif ws.documents.loading:
            problem = "Documents are still loading: run again when they are listed."
        elif not ws.documents.documents():
            problem = "Add at least one document (Ctrl+O), or drop files on the Documents pane."
        key, key_problem = self._credentials(values["model"], values["api_base"])
        problem = problem or key_problem
        if problem:
            controls.show_error(problem)
            return False
        controls.show_error("")
        self.window.statusBar().clearMessage()
        values["prices_text"] = self.window.prefs.prices_text()
        try:
            config = build_config(values)
            ws.begin_view(None)
            self.window.status.max_cost_usd = values["max_cost_usd"]
            self.window.status.max_tokens = values["max_tokens"]
            self.runner = self.runner or self._make_runner()
            self.runner.start(config, ws.documents.documents(), key)
        except ValueError as exc:
            controls.show_error(f"{exc}.")
            return False
        controls.set_running(True)
        return True

    def _make_runner(self) -> RunController:
        runner = RunController(self.window.workspace.bridge, self.store(), self)
        runner.finished.connect(self._finished)
        runner.failed.connect(self.window.workspace.controls.show_error)
        return runner

    def _finished(self, _result: Any) -> None:
        self.window.workspace.controls.set_running(False)
        self.window.status.update_from(self.window.workspace.model.tree)
        self.window.statusBar().showMessage("Run finished and saved.", 5000)

    def stop(self) -> None:
        """Stop the run in progress."""
        if self.runner is not None and self.runner.running:
            self.runner.cancel()
            self.window.statusBar().showMessage("Stopping…")

    async def wait(self) -> None:
        """Wait until the run in progress has ended."""
        if self.runner is not None:
            await self.runner.wait()

    def close(self) -> None:
        """Close the store."""
        if self._store is not None:
            self._store.close()
            self._store = None


def _profile_names() -> list[str]:
    from rlm_desktop.engine.profiles import list_profiles

    return [profile.name for profile in list_profiles(paths.profile_folders())]


def build_config(values: dict[str, Any]) -> Any:
    """The engine's `RunConfig` for the run controls' values."""
    from rlm_desktop.engine.config import Budget, RunConfig
    from rlm_desktop.engine.pricing import parse_prices

    budget = Budget(
        max_cost_usd=values["max_cost_usd"],
        max_tokens=values["max_tokens"],
        max_sub_calls=values["max_sub_calls"],
        max_depth=values["max_depth"],
        max_turns=values["max_turns"],
        timeout_s=values["timeout_s"],
    )
    return RunConfig(
        query=values["query"],
        model=values["model"],
        sub_model=values["sub_model"],
        api_base=values["api_base"],
        mode=values["mode"],
        profile=values["profile"],
        budget=budget,
        prices=parse_prices(values.get("prices_text", "")),
    )
