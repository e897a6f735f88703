"""The one place that knows where RLM Desktop keeps its files.

`RLM_DESKTOP_HOME` overrides the data folder; otherwise platformdirs' user data folder is used.
`RLM_DESKTOP_COMPILED` overrides where the wasm sandbox keeps its guest compiled for this machine
(a folder several data folders may share: the compiled form depends only on the versions).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rlm_desktop.engine.folders import EngineFolders
    from rlm_desktop.engine.profiles import ProfileFolders

APP_NAME = "rlm-desktop"
HOME_ENV = "RLM_DESKTOP_HOME"
COMPILED_ENV = "RLM_DESKTOP_COMPILED"


def _resources_folder() -> Path:
    """`resources/` beside the package (a checkout, an editable install, a frozen bundle), else
    where a wheel installs it (pipx, pip): `<prefix>/share/rlm-desktop/resources`."""
    import sysconfig

    beside = Path(__file__).resolve().parent.parent / "resources"
    installed = [
        Path(sysconfig.get_path("data", scheme)) / "share" / APP_NAME / "resources"
        for scheme in (sysconfig.get_default_scheme(), f"{os.name}_user")
    ]
    found = (f for f in (beside, *installed) if (f / "profiles" / "profiles.toml").is_file())
    return next(found, beside)


RESOURCES = _resources_folder()


def data_dir() -> Path:
    """The folder holding the database and scratch folders, created if missing."""
    override = os.environ.get(HOME_ENV)
    if override:
        path = Path(override).expanduser()
    else:
        import platformdirs

        path = Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))
    path.mkdir(parents=True, exist_ok=True)
    return path


def database_path() -> Path:
    """The SQLite file that keeps every session."""
    return data_dir() / "sessions.db"


def crash_log_path() -> Path:
    """The file the window writes the errors nothing caught to, with their tracebacks."""
    return data_dir() / "errors.log"


def scratch_root() -> Path:
    """The parent of the per-run scratch folders that workers use as their working directory."""
    path = data_dir() / "scratch"
    path.mkdir(parents=True, exist_ok=True)
    return path


def compiled_root() -> Path:
    """Where the wasm sandbox's guest, compiled for this machine, is kept (not created here)."""
    override = os.environ.get(COMPILED_ENV)
    return Path(override).expanduser() if override else data_dir() / "compiled"


RESULTS_FOLDERS = {"evaluation": "evaluations", "batch": "batches"}


def results_folder(kind: str, runner_id: str) -> Path:
    """Where an evaluation's or a batch's (`kind`) results go by default: `evaluations/ID` or
    `batches/ID` in the data folder. Raises `ids.MalformedId` or `confined.OutsideFolder` for an id
    that could name any other folder."""
    from rlm_desktop import ids

    return ids.folder_for(data_dir() / RESULTS_FOLDERS[kind], runner_id, kind)


def resource(*parts: str) -> Path:
    """A file under the bundled `resources/` folder."""
    return RESOURCES.joinpath(*parts)


def user_profiles_dir() -> Path:
    """The folder of the user's own or edited prompt profiles (not created until written)."""
    return data_dir() / "profiles"


def profile_folders() -> ProfileFolders:
    """The bundled and the user's prompt-profile folders."""
    from rlm_desktop.engine.profiles import ProfileFolders

    return ProfileFolders(bundled=resource("profiles"), user=user_profiles_dir())


def engine_folders() -> EngineFolders:
    """Where a run keeps its scratch folders and reads its prompt profiles."""
    from rlm_desktop.engine.folders import EngineFolders

    return EngineFolders(
        scratch=scratch_root(), profiles=profile_folders(), compiled=compiled_root()
    )
