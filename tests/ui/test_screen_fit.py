"""The window fits the screen: on a 1024×640 screen, and on 2560×1440 at twice the scale, the
first size stays within the available area and every primary control is on it, shown and usable.

Each screen needs a Qt of its own (the offscreen platform takes its screens from a JSON file at
start-up), so the real window is started in a subprocess by `tests/ui/screen_probe.py`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli import run_python

USABLE = {
    "tree": (200, 100),
    "console": (150, 100),
    "timeline": (150, 100),
    "question": (300, 40),
}
"""Sizes (width, height) below which a pane is there but not really usable; others need 30×16."""
SCREENS: dict[str, tuple[dict[str, int], dict[str, str]]] = {
    "1024x640": ({"width": 1024, "height": 640}, {}),
    "2560x1440 at 2x": ({"width": 2560, "height": 1440}, {"QT_SCALE_FACTOR": "2"}),
}


def inside(inner: list[int], outer: list[int]) -> bool:
    x, y, w, h = inner
    ox, oy, ow, oh = outer
    return ox <= x and oy <= y and x + w <= ox + ow and y + h <= oy + oh


@pytest.mark.parametrize("screen", list(SCREENS))
def test_every_primary_control_is_on_screen_and_usable(
    screen: str, isolated_home: Path, tmp_path: Path
) -> None:
    size, extra = SCREENS[screen]
    config = tmp_path / "screens.json"
    config.write_text(
        json.dumps({"screens": [{"name": "probe", "x": 0, "y": 0, "dpr": 1, **size}]}),
        encoding="utf-8",
    )
    env = {"QT_QPA_PLATFORM": f"offscreen:configfile={config}", **extra}
    done = run_python("-m", "tests.ui.screen_probe", home=isolated_home, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    area = report["screen"]
    scale = int(extra.get("QT_SCALE_FACTOR", "1"))
    assert area[2:] == [size["width"] // scale, size["height"] // scale]
    assert inside(report["frame"], area), report
    for state, controls in report["states"].items():
        for name, where in controls.items():
            assert where["visible"], f"{name} hidden ({state})"
            assert inside(where["rect"], report["window"]), f"{name} off the window ({state})"
            width, height = USABLE.get(name, (30, 16))
            assert where["rect"][2] >= width, f"{name} too narrow ({state}): {where}"
            assert where["rect"][3] >= height, f"{name} too low ({state}): {where}"
