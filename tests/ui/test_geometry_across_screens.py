"""A restart fits the window to the screen it opens on: left filling a 1024×640 screen, it fills
a 2560×1440 one as well (not the old small size); left at its size on a large screen, it is
fitted inside a small one, on it; left maximised, it opens maximised.

Each start is a process of its own on an offscreen screen of the case's size (Qt's screens are
fixed when it starts); the data folder, and with it the saved geometry, is shared.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.cli import run_python
from tests.ui.test_screen_fit import inside


def _start(home: Path, tmp_path: Path, width: int, height: int, leave: str = "") -> Any:
    config = tmp_path / f"screen-{width}x{height}.json"
    screen = {"name": "probe", "x": 0, "y": 0, "dpr": 1, "width": width, "height": height}
    config.write_text(json.dumps({"screens": [screen]}), encoding="utf-8")
    env = {"QT_QPA_PLATFORM": f"offscreen:configfile={config}"}
    done = run_python("-m", "tests.ui.geometry_probe", leave, home=home, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_left_filling_a_small_screen_it_fills_a_large_one(
    isolated_home: Path, tmp_path: Path
) -> None:
    _start(isolated_home, tmp_path, 1024, 640, leave="1024x640")
    opened = _start(isolated_home, tmp_path, 2560, 1440)
    assert inside(opened["window"], opened["screen"]), opened
    assert opened["window"][2] >= 2400, opened
    assert opened["window"][3] >= 1300, opened


def test_left_at_part_of_a_small_screen_it_takes_that_part_of_a_large_one(
    isolated_home: Path, tmp_path: Path
) -> None:
    _start(isolated_home, tmp_path, 1024, 640, leave="768x480")  # three quarters
    opened = _start(isolated_home, tmp_path, 2560, 1440)
    assert inside(opened["window"], opened["screen"]), opened
    assert abs(opened["window"][2] - 1920) <= 40, opened
    assert abs(opened["window"][3] - 1080) <= 40, opened


def test_left_on_a_large_screen_it_fits_a_small_one(isolated_home: Path, tmp_path: Path) -> None:
    _start(isolated_home, tmp_path, 2560, 1440, leave="1800x1100")
    opened = _start(isolated_home, tmp_path, 1024, 640)
    assert inside(opened["window"], opened["screen"]), opened


def test_left_maximised_it_opens_maximised(isolated_home: Path, tmp_path: Path) -> None:
    _start(isolated_home, tmp_path, 1024, 640, leave="max")
    opened = _start(isolated_home, tmp_path, 2560, 1440)
    assert opened["maximized"], opened
    assert inside(opened["window"], opened["screen"]), opened
