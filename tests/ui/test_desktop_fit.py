"""The window on a real X desktop, as users have it: Xvfb with openbox, so the window has a title
bar and borders that the window manager adds after it is shown. At 1024×640, and at 2560×1440 at
twice the scale (also with the interface at 16 points, as for a projector), the frame, title bar
included, stays on the screen with the budget open, a problem shown and the timeline on; every
primary control is on the window, shown (scrolled into view, for run settings a short window
has no room for) and usable, measured by what its parents leave of it in view.

Each case starts its own Xvfb (it picks a free display) and openbox, and the real window in a
process of its own (`tests/ui/screen_probe.py`), since Qt's screen is fixed when Qt starts.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from rlm_desktop.ui.appearance.theme import LARGEST_POINTS
from tests.cli import run_python
from tests.ui.test_screen_fit import USABLE, inside

CASES: dict[str, tuple[str, str, int]] = {
    "1024x640": ("1024x640", "1", 0),
    "2560x1440 at 2x": ("2560x1440", "2", 0),
    "2560x1440 at 2x, interface at 16 pt": ("2560x1440", "2", 16),
}
START_S = 10.0


@contextmanager
def desktop_of(size: str) -> Iterator[str]:
    """An X display of `size` ("1024x640") with openbox running on it: its DISPLAY."""
    for program in ("Xvfb", "openbox"):
        if shutil.which(program) is None:
            pytest.fail(
                f"{program} is not installed (make test installs it: apt-get install xvfb openbox)"
            )
    read, write = os.pipe()
    xvfb = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write), "-screen", "0", f"{size}x24", "-nolisten", "tcp"],
        pass_fds=(write,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    os.close(write)
    with os.fdopen(read) as chosen:
        display = f":{chosen.readline().strip()}"
    manager = subprocess.Popen(
        ["openbox"], env={**os.environ, "DISPLAY": display},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    time.sleep(0.5)  # openbox takes the screen; the probe waits for its frame in any case
    try:
        yield display
    finally:
        for process in (manager, xvfb):
            process.terminate()
            process.wait(timeout=10)


@pytest.fixture
def desktop(request: pytest.FixtureRequest) -> Iterator[tuple[str, str, int]]:
    """The case's desktop: (DISPLAY, scale, font size)."""
    size, scale, points = CASES[request.param]
    with desktop_of(size) as display:
        yield display, scale, points


@pytest.mark.parametrize("desktop", list(CASES), indirect=True)
def test_the_framed_window_fits_the_screen_in_every_pane_state(
    desktop: tuple[str, str, int], isolated_home: Path, request: pytest.FixtureRequest
) -> None:
    display, scale, points = desktop
    if points:
        isolated_home.mkdir(parents=True, exist_ok=True)
        (isolated_home / "settings.ini").write_text(
            f"[appearance]\nui_font_size={points}\n", encoding="utf-8"
        )
    env = {"DISPLAY": display, "QT_QPA_PLATFORM": "xcb", "QT_SCALE_FACTOR": scale}
    done = run_python("-m", "tests.ui.screen_probe", home=isolated_home, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["framed"], "no window manager framed the window"
    case = request.node.callspec.params["desktop"]
    assert misfits(report) == set(), report
    assert scrolled(report) <= SCROLLING.get(case, set()), report
    assert not report["pages_scroll"], report  # scrolling the whole window is the last resort


def test_at_the_largest_interface_size_the_window_keeps_to_its_screen_and_scrolls(
    isolated_home: Path,
) -> None:
    """32 pt at 2× on 2560×1440: the panes' least sizes add up to more than the screen; the
    window keeps to the screen, frame and all, and its pages scroll."""
    with desktop_of("2560x1440") as display:
        isolated_home.mkdir(parents=True, exist_ok=True)
        (isolated_home / "settings.ini").write_text(
            f"[appearance]\nui_font_size={LARGEST_POINTS}\n", encoding="utf-8"
        )
        env = {"DISPLAY": display, "QT_QPA_PLATFORM": "xcb", "QT_SCALE_FACTOR": "2"}
        done = run_python("-m", "tests.ui.screen_probe", home=isolated_home, env=env, timeout=90)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["framed"], "no window manager framed the window"
    frames = {"folded": report["frame_folded"], **report["frames"]}
    assert all(inside(frame, report["screen"]) for frame in frames.values()), report
    assert report["pages_scroll"], report


SETTINGS = {"model", "sub_model", "endpoint", "budget", "max_cost", "timeout"}
SCROLLING: dict[str, set[str]] = {"2560x1440 at 2x, interface at 16 pt": SETTINGS}
"""The run settings that are scrolled into view rather than shown at once: at 16 points on a
720-px screen, with the budget open, a problem and the timeline shown, the settings keep one
line and scroll. Nothing else may scroll (the question, Run, the tree and the console are
outside the settings), and nowhere else may settings scroll."""


def scrolled(report: dict[str, Any]) -> set[str]:
    """The controls the probe had to scroll into view, in any state."""
    return {
        name
        for controls in report["states"].values()
        for name, where in controls.items()
        if where.get("scrolled")
    }


def misfits(report: dict[str, Any]) -> set[str]:
    """Each way the window failed to fit, as "<state>: <what>"."""
    found: set[str] = set()
    area = report["screen"]
    frames = {"folded": report["frame_folded"], **report["frames"]}
    for state, frame in frames.items():
        if not inside(frame, area):
            found.add(f"{state}: the frame leaves the screen")
    for state, controls in report["states"].items():
        for name, where in controls.items():
            width, height = USABLE.get(name, (30, 16))
            if not where["visible"]:
                found.add(f"{state}: {name} hidden")
            elif not inside(where["rect"], report["window"]):
                found.add(f"{state}: {name} off the window")
            elif where["rect"][2] < width:
                found.add(f"{state}: {name} too narrow")
            elif where["rect"][3] < height:
                found.add(f"{state}: {name} too low")
    return found
