"""The worker's entry point: `python -I -S worker/__main__.py --launcher FD` (launcher.py).

It loads this folder as the package `rlm_worker`, by path: `-I` leaves the folder off sys.path,
and putting it there would hand model code our modules under names of its own (`state`, `repl`).
"""

import importlib
import importlib.util
import os
import sys
from typing import Any


def _load_launch() -> Any:
    """launch.py, from this folder loaded as the package `rlm_worker`."""
    folder = os.path.dirname(os.path.abspath(__file__))
    init = os.path.join(folder, "__init__.py")
    spec = importlib.util.spec_from_file_location(
        "rlm_worker", init, submodule_search_locations=[folder]
    )
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {init}")
    package = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = package
    spec.loader.exec_module(package)
    return importlib.import_module("rlm_worker.launch")


if __name__ == "__main__":
    _load_launch().main()
