"""The environment a worker starts with: an allow-list, so no API key or secret can reach it."""

from __future__ import annotations

import os
from pathlib import Path

ALLOWED = ("PATH", "LANG", "LANGUAGE", "TZ", "TERM", "SYSTEMROOT", "PYTHONHASHSEED")
ALLOWED_PREFIXES = ("LC_",)


def worker_environment(scratch_dir: Path, output_cap_chars: int) -> dict[str, str]:
    """Only locale and search-path variables pass; HOME and TMPDIR point into the scratch folder."""
    env = {
        name: value
        for name, value in os.environ.items()
        if name in ALLOWED or name.startswith(ALLOWED_PREFIXES)
    }
    tmp = scratch_dir / "tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    env.update(
        HOME=str(scratch_dir),
        TMPDIR=str(tmp),
        PYTHONDONTWRITEBYTECODE="1",
        PYTHONIOENCODING="utf-8",
        RLM_WORKER_OUTPUT_CAP=str(output_cap_chars),
    )
    return env
