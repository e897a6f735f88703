"""Model names for the pickers, and the local server a run goes to when nothing else can serve it.

The names come from litellm's bundled map and from the local servers set up in Settings →
Providers: asked after the first paint, and taken at once whenever Settings lists a server's
models. When a local server is the only provider with a usable key, it becomes the endpoint (kept
with the run defaults), and the stock default model gives way to one the server lists.
"""

from __future__ import annotations

import asyncio
import logging

from PySide6.QtCore import QObject

from rlm_desktop import formatting as fmt
from rlm_desktop.engine.config import DEFAULT_MODEL
from rlm_desktop.providers import keys, registry
from rlm_desktop.providers.catalog import (
    DiscoveryError,
    discover_ollama,
    discover_openai_compatible,
    litellm_model_names,
)
from rlm_desktop.ui.run.controls import RunControls
from rlm_desktop.ui.shared.preferences import Endpoint, Preferences

log = logging.getLogger(__name__)


def discover(servers: list[Endpoint], local_key: str | None) -> dict[str, list[str]]:
    """The models each reachable server lists, by provider name (runs in a worker thread)."""
    found: dict[str, list[str]] = {}
    for server in servers:
        try:
            if server.name == "ollama":
                found[server.name] = discover_ollama(server.url)
            else:
                found[server.name] = discover_openai_compatible(server.url, local_key)
        except DiscoveryError as exc:
            log.info("model discovery: %s", exc)
    return found


def keyed_providers(catalog: list[str], extra: list[str]) -> set[str]:
    """The hosted providers of `catalog` (and `extra`, added in Settings) that have a key (runs
    in a worker thread: a keyring can be slow to answer)."""
    providers = {registry.provider_for_model(name) for name in catalog} | set(extra)
    return {name for name in providers if keys.get_key(name)}


class ModelLists(QObject):
    """What the model pickers list: local servers' models first, then litellm's names of the
    hosted providers that have a key (all of litellm's while nothing at all is set up, so a new
    user still sees what there is to choose from)."""

    def __init__(self, controls: RunControls, prefs: Preferences, parent: QObject | None) -> None:
        super().__init__(parent)
        self.controls = controls
        self.prefs = prefs
        self.local: dict[str, list[str]] = {}
        self.catalog: list[str] = []
        self.keyed: set[str] | None = None
        """The hosted providers with a key, once asked (None: not yet, list them all)."""

    def names(self) -> list[str]:
        """Every name the pickers offer, local servers' first, each once."""
        local = [name for found in self.local.values() for name in found]
        hosted = self.catalog
        if self.keyed is not None and (self.keyed or local):
            hosted = [n for n in hosted if registry.provider_for_model(n) in self.keyed]
        return list(dict.fromkeys([*local, *hosted]))

    async def refresh(self) -> list[str]:
        """Ask the configured local servers for their models and fill the pickers."""
        loop = asyncio.get_running_loop()
        servers = self.prefs.endpoints()
        self.local = await loop.run_in_executor(None, discover, servers, keys.get_key("local"))
        if not self.catalog:
            self.catalog = await loop.run_in_executor(None, litellm_model_names, DEFAULT_MODEL)
        extra = self.prefs.extra_providers()
        self.keyed = await loop.run_in_executor(None, keyed_providers, self.catalog, extra)
        self.controls.set_model_names(self.names())
        self.adopt_local_server()
        return self.names()

    def found(self, server: str, names: list[str]) -> None:
        """Take the models a server listed just now (in Settings → Providers)."""
        self.local[server] = list(names)
        self.controls.set_model_names(self.names())
        self.adopt_local_server()

    def adopt_local_server(self, choose_server: bool = True) -> str:
        """Use a local server when it is the only provider with a usable key (unless not
        `choose_server`: the user just chose), and one of its models instead of the stock
        default; returns the notice shown ("" when nothing changed).
        """
        self.controls.endpoint.set_endpoints(self.prefs.endpoints())
        adopted = self._choose_server() if choose_server else None
        in_use = [s for s in self.prefs.endpoints() if s.name == self.controls.endpoint.name()]
        model = self._choose_model(in_use[0]) if in_use else ""
        if adopted is not None:
            notice = f"No hosted provider has a key: runs go to {adopted.label} ({adopted.url})"
            notice += f" with {fmt.model_name(model)}." if model else "."
        elif model:
            notice = (
                f"The root model is now {fmt.model_name(model)}, which {in_use[0].label} lists."
            )
        else:
            return ""
        self.controls.show_notice(notice)
        return notice

    def _choose_server(self) -> Endpoint | None:
        """The server chosen because the provider's API cannot serve the model without a key."""
        controls, prefs = self.controls, self.prefs
        servers = prefs.endpoints()
        if not servers or controls.endpoint.url() is not None:
            return None
        model = controls.model.model_id()
        if not registry.provider(registry.provider_for_model(model)).needs_key:
            return None
        if keys.any_key([*registry.PROVIDERS, *prefs.extra_providers()]):
            return None
        controls.endpoint.choose(servers[0].name)
        prefs.set("run/endpoint", servers[0].name)
        return servers[0]

    def _choose_model(self, server: Endpoint) -> str:
        """One of `server`'s models instead of the stock default, which it does not list."""
        listed = self.local.get(server.name, [])
        model = self.controls.model.model_id()
        if not listed or model != DEFAULT_MODEL or model in listed:
            return ""
        self.controls.model.set_model_id(listed[0])
        self.prefs.set("run/model", listed[0])
        return listed[0]
