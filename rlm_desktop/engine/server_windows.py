"""The context windows a run's own server gives its models, learnt before the run chooses a mode.

With an API base, the server is asked (`providers.server_facts`) what window it gives the root
model and the sub-model. The windows it names replace litellm's figures (or the 128,000-token
default) in the run's `PriceBook`, which every measure of the window reads: a direct call too
large for the server is refused before it is sent, `auto` orchestrates instead, compaction is due
in time, and the prompt names the sub-model's true window. A server that says nothing, or cannot
be asked, changes nothing.
"""

from __future__ import annotations

import asyncio
import logging

from rlm_desktop import formatting as fmt
from rlm_desktop.engine.config import RunConfig
from rlm_desktop.engine.pricing import PriceBook
from rlm_desktop.providers.server_facts import Window, context_windows

log = logging.getLogger(__name__)


async def learn_server_windows(
    config: RunConfig, prices: PriceBook, api_key: str | None
) -> dict[str, Window]:
    """Ask the server at `config.api_base` for its models' windows and put them in `prices`;
    returns what it said, by model."""
    if not config.api_base:
        return {}
    models = list(dict.fromkeys((config.model, config.effective_sub_model)))
    try:
        windows = await asyncio.to_thread(context_windows, config.api_base, models, api_key)
    except Exception as error:  # the facts only help: the run goes on with what it assumed
        log.debug("server windows: %s", error)
        return {}
    for model, window in windows.items():
        prices.learn_window(model, window.tokens)
    return windows


def window_words(model: str, tokens: int, said: Window | None) -> str:
    """`model`'s window in a sentence, with who said so when its server did."""
    told = f", as its server's {said.source} says" if said is not None else ""
    return f"{fmt.model_name(model)}'s window ({tokens:,} tokens{told})"
