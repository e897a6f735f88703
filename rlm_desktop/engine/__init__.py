"""The RLM engine: asyncio, Qt-free. Start here: `Run(config, documents, folders=...).execute()`."""

from rlm_desktop.engine.bus import EventBus, Subscription
from rlm_desktop.engine.config import Budget, ConfigError, RunConfig
from rlm_desktop.engine.context import ContextDocument
from rlm_desktop.engine.llm import Credentials
from rlm_desktop.engine.run import Run, RunResult

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
