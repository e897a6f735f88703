"""The pre-flight check before a run is sent, worded for the window.

The engine's `preflight` decides what is wrong (one rule, shared with the command line); this
module says it in the window's words and names the button that leads to the fix.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from rlm_desktop.providers import registry
from rlm_desktop.ui.run.controls import SETTING_LABELS, sentence

if TYPE_CHECKING:
    from rlm_desktop.engine import RunConfig
    from rlm_desktop.engine.preflight import PreflightProblem

CHECKING = "Checking the model and endpoint…"
PROVIDERS_PAGE = "Open Settings → Providers"
FIXES = {
    "model": "Choose the root model",
    "sub_model": "Choose the sub-model",
    "api_base": PROVIDERS_PAGE,
    "api_key": PROVIDERS_PAGE,
}
"""The button under a problem, by the setting it is about."""


@dataclass(frozen=True)
class Problem:
    """A pre-flight problem as the window shows it: a sentence, and a button to its fix."""

    setting: str
    message: str
    fix: str


def missing_key(model: str, api_base: str | None) -> str:
    """The sentence for a run whose provider needs a key that is nowhere to be found."""
    provider = registry.provider(registry.provider_for_run(model, api_base))
    where = f", or set {provider.env_var}" if provider.env_var else ""
    return f"No API key for {provider.label}: add one in Settings → Providers (Ctrl+,){where}."


def worded(problem: PreflightProblem, config: RunConfig, has_key: bool) -> Problem:
    """The engine's problem in the window's words (its settings called as the window calls them)."""
    if problem.setting == "api_key" and not has_key:
        message = missing_key(config.model, config.api_base)
    else:
        message = sentence(problem.worded(SETTING_LABELS))
    return Problem(problem.setting, message, FIXES.get(problem.setting, PROVIDERS_PAGE))


async def check(config: RunConfig, api_key: str | None) -> list[Problem]:
    """What would stop `config` at its first request, in the window's words (empty: none)."""
    from rlm_desktop.engine import Credentials
    from rlm_desktop.engine.preflight import preflight

    found = await preflight(config, Credentials(api_key=api_key))
    return [worded(problem, config, api_key is not None) for problem in found]
