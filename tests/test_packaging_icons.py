"""The app icon at every size each platform needs, as packaging/make_icons.py renders it."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from rlm_desktop.ui.app import DESKTOP_ID
from tests.cli import ROOT

ICONS = ROOT / "packaging" / "icons"
HICOLOR_SIZES = (16, 22, 24, 32, 48, 64, 128, 256, 512)
ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk."""
    assert data[:8] == PNG_SIGNATURE
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


@pytest.mark.parametrize("size", HICOLOR_SIZES)
def test_linux_gets_a_png_of_each_size(size: int) -> None:
    path = ICONS / "hicolor" / f"{size}x{size}" / "apps" / f"{DESKTOP_ID}.png"
    assert png_size(path.read_bytes()) == (size, size)


def test_the_scalable_icon_is_the_apps_own_svg() -> None:
    scalable = ICONS / "hicolor" / "scalable" / "apps" / f"{DESKTOP_ID}.svg"
    assert scalable.read_bytes() == (ROOT / "resources" / "icons" / "rlm-desktop.svg").read_bytes()


def test_the_windows_icon_holds_every_size_as_png() -> None:
    data = (ICONS / "rlm-desktop.ico").read_bytes()
    reserved, kind, count = struct.unpack("<HHH", data[:6])
    assert (reserved, kind, count) == (0, 1, len(ICO_SIZES))
    sizes = []
    for index in range(count):
        side, _, _, _, _, _, length, offset = struct.unpack(
            "<BBBBHHII", data[6 + 16 * index : 22 + 16 * index]
        )
        width, height = png_size(data[offset : offset + length])
        assert width == height == (side or 256)
        sizes.append(width)
    assert sizes == list(ICO_SIZES)


def test_the_macos_iconset_and_icns_hold_1x_and_2x_images() -> None:
    iconset = ICONS / "rlm-desktop.iconset"
    names = sorted(path.name for path in iconset.iterdir())
    assert len(names) == 10
    for name in names:
        points = int(name.split("_")[1].split("x")[0])
        scale = 2 if name.endswith("@2x.png") else 1
        assert png_size((iconset / name).read_bytes()) == (points * scale, points * scale)
    data = (ICONS / "rlm-desktop.icns").read_bytes()
    assert data[:4] == b"icns"
    assert struct.unpack(">I", data[4:8])[0] == len(data)
    position, kinds = 8, []
    while position < len(data):
        kinds.append(data[position : position + 4])
        position += struct.unpack(">I", data[position + 4 : position + 8])[0]
    assert position == len(data)
    assert {b"icp4", b"ic07", b"ic08", b"ic09", b"ic10"} <= set(kinds)


def test_every_icon_file_is_one_make_icons_writes() -> None:
    expected = {
        *(Path("hicolor") / f"{s}x{s}" / "apps" / f"{DESKTOP_ID}.png" for s in HICOLOR_SIZES),
        Path("hicolor") / "scalable" / "apps" / f"{DESKTOP_ID}.svg",
        Path("rlm-desktop.ico"),
        Path("rlm-desktop.icns"),
    }
    found = {p.relative_to(ICONS) for p in ICONS.rglob("*") if p.is_file()}
    assert {p for p in found if p.parent.name != "rlm-desktop.iconset"} == expected
