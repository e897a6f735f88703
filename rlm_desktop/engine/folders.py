"""The folders a run works in, handed to the engine by the application (`paths.engine_folders`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rlm_desktop.engine.profiles import ProfileFolders


@dataclass(frozen=True)
class EngineFolders:
    """`scratch` is the parent of each run's scratch folder; `profiles` where profiles are read;
    `compiled` where the wasm sandbox keeps its guest compiled for this machine (None: a
    `compiled` folder beside `scratch`)."""

    scratch: Path
    profiles: ProfileFolders
    compiled: Path | None = None

    @property
    def compiled_folder(self) -> Path:
        """The compiled guest's folder."""
        return self.compiled or self.scratch.parent / "compiled"
