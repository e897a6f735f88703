"""The RLM engine: asyncio, Qt-free. Start here: `Run(config, documents, folders=...).execute()`.

The names below are loaded when first used, so that importing a light module of the engine (its
configuration, say, which the window reads at start-up) does not load the run machinery too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlm_desktop.lazy import lazy_exports

if TYPE_CHECKING:
    from rlm_desktop.engine.bus import EventBus, Subscription
    from rlm_desktop.engine.config import Budget, ConfigError, RunConfig
    from rlm_desktop.engine.context import ContextDocument
    from rlm_desktop.engine.llm import Credentials
    from rlm_desktop.engine.run import Run, RunResult

_HOMES = {
    "Budget": "config",
    "ConfigError": "config",
    "ContextDocument": "context",
    "Credentials": "llm",
    "EventBus": "bus",
    "Run": "run",
    "RunConfig": "config",
    "RunResult": "run",
    "Subscription": "bus",
}

__all__ = [
    "Budget",
    "ConfigError",
    "ContextDocument",
    "Credentials",
    "EventBus",
    "Run",
    "RunConfig",
    "RunResult",
    "Subscription",
]


__getattr__ = lazy_exports(__name__, _HOMES)
