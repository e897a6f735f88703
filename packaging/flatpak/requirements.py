"""Print the app's dependencies from pyproject.toml as a requirements file, but PySide6, which the
Flatpak's base app (io.qt.PySide.BaseApp) provides, and what the app's own build needs beyond the
SDK's setuptools (componentize-py builds the wasm sandbox's guest; the manifest removes it from the
app once everything is built). The input of flatpak-pip-generator:

    python3 requirements.py > requirements.txt
    flatpak-pip-generator --runtime org.kde.Sdk//6.9 --requirements-file requirements.txt \
        --output python3-requirements
"""

from __future__ import annotations

import tomllib
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"
FROM_THE_BASE_APP = ("pyside6", "shiboken6")


def requirements() -> list[str]:
    """The project's dependencies and build requirements the Flatpak must bring itself."""
    pyproject = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))
    needed = pyproject["project"]["dependencies"]
    builders = pyproject["build-system"]["requires"]
    return [d for d in needed if not d.lower().startswith(FROM_THE_BASE_APP)] + [
        r for r in builders if not r.startswith("setuptools")
    ]


if __name__ == "__main__":
    print("\n".join(requirements()))
