"""What a run's own server says, learnt before the run chooses a mode: the context windows it
gives its models, and what software it is (which decides how it can constrain replies,
`constrained_replies`).

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
from rlm_desktop.providers.server_facts import ServerFacts, Window, server_facts

log = logging.getLogger(__name__)


async def learn_server_facts(
    config: RunConfig, prices: PriceBook, api_key: str | None
) -> ServerFacts:
    """Ask the server at `config.api_base` what it is and for its models' windows, and put
    the windows in `prices`; returns what it said."""
    if not config.api_base:
        return ServerFacts({})
    models = list(dict.fromkeys((config.model, config.effective_sub_model)))
    try:
        facts = await asyncio.to_thread(server_facts, config.api_base, models, api_key)
    except Exception as error:  # the facts only help: the run goes on with what it assumed
        log.debug("server facts: %s", error)
        return ServerFacts({})
    for model, window in facts.windows.items():
        prices.learn_window(model, window.tokens)
    return facts


def window_words(model: str, tokens: int, said: Window | None) -> str:
    """`model`'s window in a sentence, with who said so when its server did."""
    told = f", as its server's {said.source} says" if said is not None else ""
    return f"{fmt.model_name(model)}'s window ({tokens:,} tokens{told})"
