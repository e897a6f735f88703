"""The frozen bundle's entry point: `rlm-desktop`, the REPL worker's launcher, or the wasm host.

A frozen bundle has no separate Python to start worker/__main__.py with, so the app starts itself
with `--repl-launcher FD` (engine/sandbox/kernel/launcher.py) and this hands over to the worker before
anything of the application is imported: the launcher stays as small as `python -I -S
worker/__main__.py` would be.
"""

import sys

from rlm_desktop.engine.sandbox.worker import launch

if len(sys.argv) > 1 and sys.argv[1] == launch.FROZEN_LAUNCHER_FLAG:
    launch.main(["--launcher", *sys.argv[2:]])
    sys.exit(0)

if len(sys.argv) > 1 and sys.argv[1] == "--wasm-host":  # wasm/launcher.py's FROZEN_HOST_FLAG
    from rlm_desktop.engine.sandbox.wasm import host

    host.main(sys.argv[2:])
    sys.exit(0)

from rlm_desktop.cli import main  # noqa: E402 - only the app, never the worker, loads the rest

sys.exit(main())
