"""Render the app icon (resources/icons/rlm-desktop.svg) at the sizes each platform needs.

Run from the repository root: `QT_QPA_PLATFORM=offscreen .venv/bin/python packaging/make_icons.py`.
The results are checked in; tests/test_packaging_icons.py checks every size is there.

- Linux: packaging/icons/hicolor/NxN/apps/APP_ID.png (16 to 512) beside the scalable SVG;
- Windows: packaging/icons/rlm-desktop.ico (PNG entries, 16 to 256);
- macOS: packaging/icons/rlm-desktop.iconset/ (the source set `iconutil -c icns` reads) and
  packaging/icons/rlm-desktop.icns assembled from it.
"""

from __future__ import annotations

import shutil
import struct
import sys
from pathlib import Path

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, Qt
from PySide6.QtGui import QGuiApplication, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "resources" / "icons" / "rlm-desktop.svg"
ICONS = ROOT / "packaging" / "icons"
APP_ID = "io.github.rlm_desktop.RLMDesktop"
HICOLOR_SIZES = (16, 22, 24, 32, 48, 64, 128, 256, 512)
ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)
ICONSET = {  # file in the .iconset -> (pixels, ICNS type)
    "icon_16x16.png": (16, b"icp4"),
    "icon_16x16@2x.png": (32, b"ic11"),
    "icon_32x32.png": (32, b"icp5"),
    "icon_32x32@2x.png": (64, b"ic12"),
    "icon_128x128.png": (128, b"ic07"),
    "icon_128x128@2x.png": (256, b"ic13"),
    "icon_256x256.png": (256, b"ic08"),
    "icon_256x256@2x.png": (512, b"ic14"),
    "icon_512x512.png": (512, b"ic09"),
    "icon_512x512@2x.png": (1024, b"ic10"),
}


def render_png(renderer: QSvgRenderer, size: int) -> bytes:
    """The SVG drawn on a transparent size x size image, as PNG bytes."""
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
    renderer.render(painter)
    painter.end()
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buffer, "PNG"):
        raise SystemExit(f"cannot encode a {size}px PNG")
    return bytes(data.data())


def ico(pngs: dict[int, bytes]) -> bytes:
    """A Windows icon holding each PNG as is (Vista and later read PNG entries)."""
    header = struct.pack("<HHH", 0, 1, len(pngs))
    offset = len(header) + 16 * len(pngs)
    directory, images = b"", b""
    for size, png in sorted(pngs.items()):
        side = 0 if size >= 256 else size  # 0 means 256 in an ICO directory
        directory += struct.pack("<BBBBHHII", side, side, 0, 0, 1, 32, len(png), offset)
        images += png
        offset += len(png)
    return header + directory + images


def icns(entries: list[tuple[bytes, bytes]]) -> bytes:
    """An Apple icon file: PNG entries under their ICNS types."""
    body = b"".join(kind + struct.pack(">I", len(png) + 8) + png for kind, png in entries)
    return b"icns" + struct.pack(">I", len(body) + 8) + body


def main() -> int:
    """Write every icon file from the SVG."""
    _app = QGuiApplication(sys.argv[:1])
    renderer = QSvgRenderer(str(SOURCE))
    if not renderer.isValid():
        raise SystemExit(f"{SOURCE} is not a valid SVG")
    sizes = sorted({*HICOLOR_SIZES, *ICO_SIZES, *(pixels for pixels, _ in ICONSET.values())})
    pngs = {size: render_png(renderer, size) for size in sizes}
    scalable = ICONS / "hicolor" / "scalable" / "apps"
    scalable.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(SOURCE, scalable / f"{APP_ID}.svg")
    for size in HICOLOR_SIZES:
        folder = ICONS / "hicolor" / f"{size}x{size}" / "apps"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{APP_ID}.png").write_bytes(pngs[size])
    (ICONS / "rlm-desktop.ico").write_bytes(ico({size: pngs[size] for size in ICO_SIZES}))
    iconset = ICONS / "rlm-desktop.iconset"
    iconset.mkdir(exist_ok=True)
    for name, (pixels, _kind) in ICONSET.items():
        (iconset / name).write_bytes(pngs[pixels])
    (ICONS / "rlm-desktop.icns").write_bytes(
        icns([(kind, pngs[pixels]) for pixels, kind in ICONSET.values()])
    )
    print(f"icons written under {ICONS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
