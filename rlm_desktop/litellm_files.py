"""What the installed litellm package holds, read without importing it (which takes seconds):
the package's folder, and its bundled price map (the file litellm itself loads offline).

Below the engine and the providers alike: the engine's prices and token encodings and the model
pickers' names all come from these files.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from functools import cache
from pathlib import Path
from typing import Any

PRICE_MAP_FILE = "model_prices_and_context_window_backup.json"


@cache
def litellm_package_dir() -> Path | None:
    """The folder of the installed litellm package, found without importing it."""
    try:
        spec = importlib.util.find_spec("litellm")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


@cache
def bundled_price_map() -> dict[str, dict[str, Any]]:
    """litellm's bundled price map, the file litellm itself loads offline (it is never fetched).

    Read straight from the package (about 10 ms) instead of importing litellm (seconds), so the
    window can ask for a model's limits at any time; taken from litellm, which parsed the same
    file, when it is imported already. Empty when litellm is not installed.
    """
    imported = getattr(sys.modules.get("litellm"), "model_cost", None)
    if isinstance(imported, dict) and imported:
        data: dict[str, Any] = imported
    else:
        package = litellm_package_dir()
        path = package / PRICE_MAP_FILE if package is not None else None
        if path is None or not path.is_file():
            return {}
        data = json.loads(path.read_text(encoding="utf-8"))
    return {name: entry for name, entry in data.items() if isinstance(entry, dict)}
