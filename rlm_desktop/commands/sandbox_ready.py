"""Before a run from the command line: the wasm sandbox compiled for this machine, said in a line.

The first run that needs the wasm sandbox on a machine would otherwise sit silent for the
seconds its guest takes to compile, inside the run's time limit.
"""

from __future__ import annotations

from collections.abc import Callable

from rlm_desktop import paths
from rlm_desktop.engine.config import ConfigError, RunConfig

PREPARING = "preparing the WebAssembly sandbox for this machine (once; a few seconds)"


def ready_sandbox(config: RunConfig, say: Callable[[str], None]) -> None:
    """Compile the wasm sandbox's guest now if `config` runs model code there and it is not
    compiled yet, saying so first. Raises `ConfigError` (setting `sandbox`) when the sandbox
    chosen cannot be had here or its guest is missing."""
    from rlm_desktop.engine.sandbox.choice import backend_for

    if config.mode == "direct" or backend_for(config.sandbox) != "wasm":
        return
    from rlm_desktop.engine.sandbox.wasm.compiled import GuestMissing
    from rlm_desktop.engine.sandbox.wasm.prepare import is_prepared, prepare

    compiled = paths.compiled_root()
    try:
        if is_prepared(compiled):
            return
        say(PREPARING)
        seconds = prepare(compiled)
    except GuestMissing as missing:
        raise ConfigError(f"wasm: {missing}", "sandbox") from None
    if seconds:
        say(f"the WebAssembly sandbox is ready (compiled in {seconds:.0f} s)")
