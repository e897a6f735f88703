"""The folders a run works in, handed to the engine by the application (`paths.engine_folders`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rlm_desktop.engine.profiles import ProfileFolders


@dataclass(frozen=True)
class EngineFolders:
    """`scratch` is the parent of each run's scratch folder; `profiles` where profiles are read."""

    scratch: Path
    profiles: ProfileFolders
