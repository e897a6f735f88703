"""Start-up: the window paints without litellm, and the packaging files are well-formed."""

from __future__ import annotations

import configparser
import xml.etree.ElementTree as ET
from pathlib import Path

from rlm_desktop.ui.app import DESKTOP_ID, PAINT_PROBE_ENV
from tests.cli import ROOT, run_cli


def test_first_paint_happens_before_heavy_imports(isolated_home: Path) -> None:
    done = run_cli(
        home=isolated_home, env={PAINT_PROBE_ENV: "1"}, module="rlm_desktop.ui.app", timeout=60
    )
    assert done.returncode == 0, done.stderr
    line = next(ln for ln in done.stdout.splitlines() if ln.startswith("first-paint "))
    assert line.endswith("heavy=-"), line


def test_desktop_entry_and_metainfo_are_well_formed() -> None:
    entry = configparser.ConfigParser(interpolation=None)
    entry.optionxform = str  # type: ignore[assignment,method-assign]
    entry.read(ROOT / "packaging" / f"{DESKTOP_ID}.desktop", encoding="utf-8")
    section = entry["Desktop Entry"]
    assert section["Exec"] == "rlm-desktop"
    assert section["Icon"] == DESKTOP_ID
    icon = ROOT / "packaging" / "icons" / "hicolor" / "scalable" / "apps" / f"{DESKTOP_ID}.svg"
    assert ET.parse(icon).getroot().tag.endswith("svg")
    meta = ET.parse(ROOT / "packaging" / f"{DESKTOP_ID}.metainfo.xml").getroot()
    assert meta.findtext("id") == DESKTOP_ID
    assert meta.find("launchable").text == f"{DESKTOP_ID}.desktop"  # type: ignore[union-attr]
