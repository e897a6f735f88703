"""The single lazy import of litellm (it takes seconds), configured for offline, quiet use."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import threading
import warnings
from collections.abc import Iterator
from functools import cache
from typing import Any

UNAWAITED_LITELLM = "coroutine 'BaseLLMHTTPHandler.async_completion' was never awaited"

_loading = threading.Lock()
_loaded: list[Any] = []


def load_litellm() -> Any:
    """litellm, imported once (a thread that asks while another imports it waits for it)."""
    if _loaded:
        return _loaded[0]
    with _loading:
        if not _loaded:
            _loaded.append(_import_litellm())
    return _loaded[0]


def start_loading_litellm() -> None:
    """Begin litellm's import in a thread of its own, so the work before a run's first request
    (reading the documents, opening the store, starting the worker) goes on beside it; whoever
    needs litellm then waits only for what is left of it."""
    if not _loaded:
        _offline_settings()  # set here: the environment is not written from two threads
        threading.Thread(target=load_litellm, name="litellm-import", daemon=True).start()


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """The cyclic collector off inside (as it was, after): an import makes objects that live
    as long as the process, and the collector's passes over them cost a fifth of the import."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _offline_settings() -> None:
    """The environment litellm reads as it is imported."""
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    # litellm's own HTTP handler (the one most providers use) instead of the openai SDK for
    # OpenAI-compatible chat: the SDK's request transform costs ~20 ms of CPU per call on long
    # histories, which dominated our per-turn overhead. Set the variable to False to go back.
    os.environ.setdefault("EXPERIMENTAL_OPENAI_BASE_LLM_HTTP_HANDLER", "True")
    # Otherwise litellm's import reads a `.env` file from the working directory into the app's
    # environment: keys and settings from whatever folder the app was started in.
    os.environ["LITELLM_MODE"] = "PRODUCTION"


def _import_litellm() -> Any:
    """Import litellm with the bundled price map and without its chatter."""
    _offline_settings()
    with _collector_paused():
        import litellm

        # litellm brings ~250,000 long-lived objects; left in the collector's care, every full
        # collection walks them all, which cost a 1,000-way fan-out ~0.4 ms of CPU per request.
        gc.freeze()
    # Cancelling a request at the wrong moment leaves litellm's inner coroutine unawaited; that is
    # litellm's bookkeeping, not a lost call of ours (the ledger releases the reservation).
    warnings.filterwarnings("ignore", message=UNAWAITED_LITELLM, category=RuntimeWarning)
    litellm.suppress_debug_info = True
    litellm.telemetry = False
    litellm.drop_params = True
    tls_configuration()
    return litellm


@cache
def tls_configuration() -> Any:
    """litellm's TLS settings (an `ssl.SSLContext` with its CA bundle, or False where
    `SSL_VERIFY` turns verification off), made once per process: loading the CA bundle costs
    17–35 ms, which every run's first request would otherwise wait for."""
    from litellm.llms.custom_httpx.http_handler import get_ssl_configuration

    return get_ssl_configuration()


def warm_up(*models: str) -> None:
    """Import litellm and load the price map and the tokenizers of `models` (or the default
    one); run it in a thread so no event loop stalls on it."""
    load_litellm()
    from rlm_desktop.engine.encodings import tokenizer_for
    from rlm_desktop.litellm_files import bundled_price_map

    bundled_price_map()

    for model in models or ("",):
        tokenizer_for(model)


def release_logging_worker() -> None:
    """Drop litellm's background logging queue at the end of a run.

    litellm queues a success-logging coroutine per call on a global worker whose queue binds to the
    first event loop that uses it; the next loop (a new CLI run in the same process, a test) would
    find it bound elsewhere, and its coroutines can hang for litellm's 20 s per-item limit. We use
    none of those callbacks, so the queue is emptied and the worker cancelled without waiting.
    """
    if not _litellm_imported():
        return
    from litellm.litellm_core_utils.logging_worker import GLOBAL_LOGGING_WORKER as worker

    queue: asyncio.Queue[Any] | None = worker._queue
    while queue is not None and not queue.empty():
        queue.get_nowait()["coroutine"].close()
    task = worker._worker_task

    def forget(finished: asyncio.Task[Any] | None = None) -> None:
        if worker._worker_task is task:
            worker._queue = None
            worker._worker_task = None

    if task is None or task.done():
        forget()
    else:
        task.cancel()
        task.add_done_callback(forget)


def _litellm_imported() -> bool:
    return bool(_loaded)
