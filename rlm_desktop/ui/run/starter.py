"""Turns the run controls into a started run, and does the start-up work after the first paint.

It checks what a person can fix before anything is sent: first what the window knows (no
question, no documents, a setting the engine refuses), then, while the window stays responsive,
the engine's pre-flight check of the models, endpoint and key. A problem is one line under the
fields, with a button to its fix; with none, the `RunConfig` goes to the `RunController`.
"""

from __future__ import annotations

import asyncio
import gc
import importlib
import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal

from rlm_desktop import formatting as fmt
from rlm_desktop import paths
from rlm_desktop.documents import memory_room
from rlm_desktop.engine.config import (
    DEFAULT_MODEL,
    DEFAULT_SCRATCH_QUOTA_MB,
    ConfigError,
    SandboxChoice,
)
from rlm_desktop.engine.sandbox.choice import backend_for
from rlm_desktop.providers import keys, registry
from rlm_desktop.review.cap_watch import CapWatch
from rlm_desktop.ui.bridge.events import EventBridge
from rlm_desktop.ui.documents.pane import DocumentsPane
from rlm_desktop.ui.run.checks import CHECKING, Problem, check
from rlm_desktop.ui.run.controller import RunController
from rlm_desktop.ui.run.controls import (
    RunControls,
    RunRequest,
    describe_config_error,
    sentence,
)
from rlm_desktop.ui.run.line_follower import LineFollower
from rlm_desktop.ui.run.local_models import ModelLists
from rlm_desktop.ui.run.status_bar import RunStatusBar
from rlm_desktop.ui.shared.preferences import Preferences, RunDefaults
from rlm_desktop.ui.shared.widgets import when_settled

if TYPE_CHECKING:
    from rlm_desktop.engine import RunConfig, RunResult
    from rlm_desktop.engine.run_choices import RunChoices
    from rlm_desktop.store import Store
    from rlm_desktop.ui.run.follow_up import FollowUpLink

log = logging.getLogger(__name__)
MODEL_SETTLE_MS = 300


RUN_MODULES = (
    "rlm_desktop.engine.run",
    "rlm_desktop.engine.direct",
    "psutil",
    "rlm_desktop.store",
    "rlm_desktop.review.history",
    "rlm_desktop.review.health",
)
"""What starting, recording and checking a run imports, loaded ahead: imported on the event loop
they paused the window for a third of a second as the first run started."""


def _direct_call_tokens(model: str, prices_text: str) -> int:
    """The engine's `auto` threshold for a direct call to `model`, by its context window."""
    from rlm_desktop.engine.direct import comfortable_tokens
    from rlm_desktop.engine.pricing import PriceBook, parse_prices

    try:
        prices = parse_prices(prices_text)
    except ValueError:
        prices = {}
    return comfortable_tokens(PriceBook(prices).info(model).context_window)


def warm_engine() -> None:
    """Import litellm and load its tokenizer (seconds, blocking), the modules a run needs, the
    price map and the console's highlighter; run in a worker thread so the first Run starts at
    once instead of freezing the window.

    Then the objects made so far (litellm's are many) are moved out of the garbage collector's
    sight: a full collection over them paused the event loop for ~200 ms in the middle of runs.
    """
    from rlm_desktop.engine.litellm_loader import warm_up
    from rlm_desktop.litellm_files import bundled_price_map
    from rlm_desktop.ui.console import highlighter

    warm_up()
    for module in RUN_MODULES:
        importlib.import_module(module)
    bundled_price_map()
    highlighter.warm_up()
    gc.collect()
    gc.freeze()


def open_store() -> Store:
    """The session store in the data folder (imported here: sqlite-utils waits for the first use)."""
    from rlm_desktop.store import Store

    return Store(paths.database_path())


class RunStarter(QObject):
    """Glue between the run controls, the preferences, the keys and the runner.

    It works with what it is given: the controls it reads and answers in, the documents pane, the
    status bar, the preferences, the bridge that runs publish their events to, and a way to open
    the session store (on first use). `run_starting` fires once a run's inputs have checked out,
    just before the engine starts (the window clears its view of the last run); `run_finished`
    fires after a run ended.
    """

    run_starting = Signal()
    run_finished = Signal()
    unsaved = Signal(list)
    """What of the finished run could not be saved, one line each."""

    def __init__(
        self,
        controls: RunControls,
        documents: DocumentsPane,
        status: RunStatusBar,
        prefs: Preferences,
        bridge: EventBridge,
        store_opener: Callable[[], Store] = open_store,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.controls = controls
        self.documents = documents
        self.status = status
        self.prefs = prefs
        self.bridge = bridge
        self.models = ModelLists(controls, prefs, self)
        self._open_store = store_opener
        self._store: Store | None = None
        self.runner: RunController | None = None
        self._asked: RunConfig | None = None
        """The configuration of the run started last (a follow-up goes on from it)."""
        self.checking: asyncio.Task[None] | None = None
        """The pre-flight check of the run about to start, while it runs."""
        self.sending: asyncio.Future[None] | None = None
        """The trace of the last run on its way to the OTLP collector, while it goes."""
        when_settled(controls.model.currentTextChanged, MODEL_SETTLE_MS, self.follow_model, self)
        controls.endpoint.chosen.connect(self._endpoint_chosen)
        self.line = LineFollower(self, self)
        """Keeps the line under the fields true to them as the models and endpoint change."""

    @property
    def running(self) -> bool:
        """True while a run is being checked or is in progress."""
        task = self.checking
        checking = task is not None and not task.done() and not task.cancelling()
        return checking or (self.runner is not None and self.runner.running)

    def store(self) -> Store:
        """The session store, opened on first use."""
        if self._store is None:
            self._store = self._open_store()
        return self._store

    def apply_preferences(self, since: RunDefaults | None = None) -> None:
        """Fill the controls from the saved defaults and the configured servers.

        The first time, every field, as the workspace was left (the defaults where it was not);
        later, the defaults that changed `since` then (Settings was open), leaving the rest as
        the user left them.
        """
        prefs, controls = self.prefs, self.controls
        first = not controls.model.currentText()
        defaults = prefs.workspace_choices() if first else prefs.run_defaults()
        if first or since is not None:
            changed = None if first or since is None else defaults.changed_since(since)
            current = controls.profile.currentData() or ""
            try:
                profile = defaults.profile if changed is None or "profile" in changed else current
                self._fill_profiles(*_profile_names(), profile)
            except Exception as exc:
                log.info("profiles: %s", exc)
            controls.apply_defaults(defaults, changed)
        controls.endpoint.set_endpoints(prefs.endpoints())
        self.models.adopt_local_server()
        self.documents.ocr = prefs.ocr
        self.line.follow()  # an endpoint's address may have changed in the settings

    def _endpoint_chosen(self, name: str) -> None:
        """Keep the endpoint the user chose for the next runs, and the next start."""
        self.prefs.set("run/endpoint", name)
        self.models.adopt_local_server(choose_server=False)

    def follow_model(self) -> None:
        """Count new documents' tokens for the chosen root model, and judge "short enough for a
        direct call" by the engine's `auto` threshold for that model's window (looked up off
        the GUI thread: the first lookup reads litellm's price map)."""
        model = self.controls.model.model_id()
        if model:
            asyncio.ensure_future(self._follow(model, self.prefs.prices_text()))

    async def _follow(self, model: str, prices_text: str) -> None:
        direct_tokens = await asyncio.to_thread(_direct_call_tokens, model, prices_text)
        if self.controls.model.model_id() == model:  # not changed meanwhile
            self.documents.set_run_model(model, direct_tokens)

    def warm_up(self) -> None:
        """After the first paint: model names, local models, profiles, and litellm's import."""
        threading.Thread(target=warm_engine, name="rlm-warm-up", daemon=True).start()
        asyncio.ensure_future(self.refresh_models())

    async def refresh_models(self) -> list[str]:
        """Ask configured local servers for their models and fill the pickers."""
        names = await self.models.refresh()
        await self.load_profiles()
        return names

    async def load_profiles(self) -> None:
        """Fill the profile picker from the engine's profiles; a profile file that cannot be
        used is said under the fields (the others are listed)."""
        loop = asyncio.get_running_loop()
        try:
            names, problems = await loop.run_in_executor(None, _profile_names)
        except Exception as exc:
            log.info("profiles: %s", exc)
            return
        current = self.controls.profile.currentData() or self.prefs.run_defaults().profile
        self._fill_profiles(names, problems, current)

    def _fill_profiles(self, names: list[str], problems: tuple[str, ...], current: str) -> None:
        self.controls.set_profiles(names, current)
        if problems:
            self.controls.show_error(" ".join(sentence(problem) for problem in problems))

    def _problem(self, request: RunRequest) -> str:
        """What keeps the run from starting that a person can fix, in one line ("" for nothing)."""
        if self.running:
            return "A run is already in progress: stop it first (Esc)."
        if not request.query:
            return "Type a question first."
        if not request.model:
            return f"Choose a root model, e.g. {DEFAULT_MODEL}."
        if self.documents.loading:
            return "Documents are still loading: run again when they are listed."
        documents = self.documents.documents()
        if not documents:
            return "Add at least one document (Ctrl+O), or drop files on the Documents pane."
        too_heavy = memory_room.refusal(sum(d.chars for d in documents), listed=True)
        return f"{too_heavy[0].upper()}{too_heavy[1:]}." if too_heavy else ""

    def start(self) -> bool:
        """Check the inputs and begin: the pre-flight check, then the run.

        False (with a message shown) when the inputs cannot make a run; True when the check
        has begun (a problem it finds is shown under the fields, and no run starts).
        """
        controls = self.controls
        request = controls.request()
        problem = self._problem(request)
        if problem:
            controls.show_error(problem)
            return False
        try:
            config = self.config_for(request)
            config.validate()
            backend_for(config.sandbox)  # a choice this system cannot give, said before checking
        except ConfigError as exc:
            controls.show_error(describe_config_error(exc))
            return False
        self.status.clearMessage()
        notice = self.notice_for(request)
        controls.show_notice(CHECKING)
        controls.set_running(True)
        self.checking = asyncio.ensure_future(self._check_then_run(config, notice))
        return True

    def config_for(self, request: RunRequest) -> RunConfig:
        """The `RunConfig` for `request` with the user's prices and sandbox settings (not yet
        validated); raises `ConfigError`."""
        return build_config(
            request,
            self.prefs.prices_text(),
            allow_read=self.prefs.opened_folders(),
            require_isolation=self.prefs.require_isolation,
            scratch_quota_mb=self.prefs.scratch_quota_mb,
            sandbox=self.prefs.sandbox_backend,
            follow_up=self.controls.follow_up.link(),
        )

    def notice_for(self, request: RunRequest) -> str:
        """What a run of `request` assumes, said under the fields while it runs ("" for
        nothing): its models counted at $0 on the user's own server, folders that expose
        secrets."""
        from rlm_desktop.engine.pricing import parse_prices

        free = free_local_models(request, parse_prices(self.prefs.prices_text()))
        notice = (
            f"{', '.join(free)} on your own server: counted at $0 against the dollar cap "
            "(give a price in Settings → Run defaults → Prices if it costs money)."
            if free
            else ""
        )
        return " ".join(filter(None, [exposure_notice(self.prefs.opened_folders()), notice]))

    async def checked(self, config: RunConfig) -> list[Problem]:
        """The pre-flight problems of `config` with the key its provider has (empty: none)."""
        return await check(config, self._key(config))

    @staticmethod
    def _key(config: RunConfig) -> str | None:
        return keys.get_key(registry.provider_for_run(config.model, config.api_base))

    async def _check_then_run(self, config: RunConfig, notice: str) -> None:
        """Run `config` once the pre-flight check passes; `notice` stays under the fields while
        it runs (what the run's settings assume)."""
        controls = self.controls
        key = self._key(config)
        try:
            problems = await check(config, key)
        except Exception as exc:
            log.exception("the pre-flight check failed")
            problems = []
            self.status.showMessage(f"Could not check first ({type(exc).__name__}): running.", 5000)
        if problems:
            self.line.show_problem(problems[0])
            controls.set_running(False)
            return
        self.line.show_notice(notice)
        cost_p90 = await asyncio.to_thread(self._history_p90)
        await self._launch(config, key, cost_p90)

    def _history_p90(self) -> float | None:
        """`_cost_p90`, None when the store cannot be read (starting the run then says why).
        Run in a worker thread: opening the store the first time (its migrations) and reading a
        long history would pause the window as the run starts."""
        from rlm_desktop.store import StoreError

        try:
            return self._cost_p90()
        except StoreError:
            return None

    async def _launch(self, config: RunConfig, key: str | None, cost_p90: float | None) -> None:
        from rlm_desktop.store import StoreError

        try:
            self.run_starting.emit()
            self.status.max_cost_usd = config.budget.max_cost_usd
            self.status.max_tokens = config.budget.max_tokens
            self.status.watch = CapWatch(
                {
                    "cost": config.budget.max_cost_usd,
                    "tokens": config.budget.max_tokens,
                    "sub_calls": config.budget.max_sub_calls,
                    "seconds": config.budget.timeout_s,
                },
                cost_p90,
            )
            self.runner = self.runner or self._make_runner()
            await self.runner.start(config, self.documents.documents(), key)
            self._asked = config
        except ConfigError as exc:
            self.controls.show_error(describe_config_error(exc))
            self.controls.set_running(False)
        except StoreError as exc:  # the session database cannot be opened or written
            self.controls.show_error(f"Not started: {exc}")
            self.controls.set_running(False)

    def _cost_p90(self) -> float | None:
        """The user's p90 cost per run over their saved runs (None with too few)."""
        from rlm_desktop.review.cap_watch import cost_p90
        from rlm_desktop.review.history import load_history

        history = load_history(self.store())
        return cost_p90([run.cost_usd for run in history.runs if run.cost_usd is not None])

    def _make_runner(self) -> RunController:
        runner = RunController(self.bridge, self.store(), self)
        runner.finished.connect(self._finished)
        runner.failed.connect(self.controls.show_error)
        return runner

    def _finished(self, result: RunResult | None) -> None:
        self.controls.set_running(False)
        asked = self._asked
        if result is not None and asked is not None:
            self.controls.follow_up.offer(result.session_id, asked.query, asked.conversation_id)
        self.run_finished.emit()
        self.status.watch = None
        if result is not None and result.warnings:
            self.unsaved.emit(list(result.warnings))
            self.status.showMessage("Run finished, but it was not saved in full.")
        else:
            self.status.showMessage(ended_and_saved(result), 5000)
        if result is not None and self.prefs.otlp_endpoint:
            self.sending = asyncio.ensure_future(
                self._send_traces(result.session_id, self.prefs.otlp_endpoint)
            )

    async def _send_traces(self, session_id: str, endpoint: str) -> None:
        """Send the run's trace to the collector in the settings, off the event loop; a
        collector that cannot take it is one line in the status bar."""
        problem = await asyncio.to_thread(send_saved_traces, session_id, endpoint)
        self.status.showMessage(problem or f"Trace sent to {endpoint}.", 10000)

    def stop(self) -> None:
        """Stop the run in progress, or the check before it."""
        if self.checking is not None and not self.checking.done():
            self.checking.cancel()
            self.controls.show_notice("")
            self.controls.set_running(False)
            self.status.showMessage("Stopped before the run started.", 5000)
        elif self.runner is not None and self.runner.running:
            self.runner.cancel()
            self.status.showMessage("Stopping…")

    async def wait(self) -> None:
        """Wait until the run in progress (or the check before it) has ended."""
        if self.checking is not None:
            await asyncio.gather(self.checking, return_exceptions=True)
        if self.runner is not None:
            await self.runner.wait()
        if self.sending is not None:
            await asyncio.gather(self.sending, return_exceptions=True)

    def close(self) -> None:
        """Close the store."""
        if self._store is not None:
            self._store.close()
            self._store = None


def send_saved_traces(session_id: str, endpoint: str) -> str | None:
    """Post a saved session's trace (with a store of this thread's own); None when accepted,
    else one line saying why not."""
    from rlm_desktop.exports import send_traces
    from rlm_desktop.store import Store, StoreError

    try:
        store = Store(paths.database_path())
    except StoreError as error:
        return f"Trace not sent: {error}"
    try:
        problem = send_traces(store, session_id, endpoint)
    finally:
        store.close()
    return problem[:1].upper() + problem[1:] if problem else None


def exposure_notice(allow_read: tuple[str, ...]) -> str:
    """The sentence that tells a run opens a folder exposing secrets ("" when none does)."""
    from rlm_desktop.engine.exposure import exposure_warnings

    lines = exposure_warnings(allow_read, paths.data_dir())
    if not lines:
        return ""
    more = f" (and {len(lines) - 1} more such folders)" if len(lines) > 1 else ""
    return f"Settings → Sandbox: {lines[0]}{more}."


def _profile_names() -> tuple[list[str], tuple[str, ...]]:
    """The names of the profiles that can be used, and what is wrong with the others."""
    from rlm_desktop.engine.profiles import read_profiles

    found = read_profiles(paths.profile_folders())
    return [profile.name for profile in found.usable], found.problems


def free_local_models(request: RunRequest, prices: dict[str, tuple[float, float]]) -> list[str]:
    """The run's models that are served by the user's own server (a local endpoint is chosen)
    and have no price: under a dollar cap they count as free, so that a first run on Ollama is
    not refused; the user is told, and a price given in the settings wins."""
    from rlm_desktop.engine import run_choices

    return run_choices.free_local_models(_choices(request, prices))


def build_config(
    request: RunRequest,
    prices_text: str = "",
    *,
    allow_read: tuple[str, ...] = (),
    require_isolation: bool = False,
    scratch_quota_mb: int = DEFAULT_SCRATCH_QUOTA_MB,
    sandbox: SandboxChoice = "auto",
    follow_up: FollowUpLink | None = None,
) -> RunConfig:
    """The engine's `RunConfig` for what the run controls ask, with the user's prices, the
    sandbox settings (Settings → Sandbox) and the question it follows up on, if any."""
    from rlm_desktop.engine.pricing import parse_prices
    from rlm_desktop.engine.run_choices import build_run_config

    choices = _choices(
        request,
        parse_prices(prices_text),
        allow_read=allow_read,
        require_isolation=require_isolation,
        scratch_quota_mb=scratch_quota_mb,
        sandbox=sandbox,
        follows=follow_up.follows if follow_up else None,
        conversation_id=follow_up.conversation_id if follow_up else None,
    )
    return build_run_config(choices, local_models_free=True)


def _choices(
    request: RunRequest, prices: dict[str, tuple[float, float]], **more: Any
) -> RunChoices:
    """The engine's `RunChoices` for the controls' request; `more` adds the window's others."""
    from rlm_desktop.engine.run_choices import RunChoices

    return RunChoices(**vars(request), prices=prices, **more)


def ended_and_saved(result: RunResult | None) -> str:
    """The status bar's word on a run that ended and was saved: how it ended, truthfully."""
    status = result.status if result is not None else "error"
    if status == "completed":
        return "Run finished and saved."
    if status == "cancelled":
        return "Run stopped and saved."
    return f"Run ended ({fmt.status_text(status)}) and saved."
