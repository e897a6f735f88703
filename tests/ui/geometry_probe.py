"""Opens the real main window on whatever screen Qt was given, prints its geometry as JSON, then,
as asked, leaves it at a size or maximised and closes it (as a user quits), so that the next
start reads what it saved. Run by `test_geometry_across_screens` in processes of their own,
since a screen's size is fixed when Qt starts.

`python -m tests.ui.geometry_probe [WIDTHxHEIGHT|max]` prints `{"screen": [x, y, w, h],
"window": [...], "maximized": bool}` as the window opened.
"""

from __future__ import annotations

import json
import sys

from PySide6.QtCore import QRect
from PySide6.QtWidgets import QApplication

from rlm_desktop.ui.app import create_application
from rlm_desktop.ui.window.main_window import MainWindow


def _rect(rect: QRect) -> list[int]:
    return [rect.x(), rect.y(), rect.width(), rect.height()]


def main(leave: str = "") -> int:
    """Show the window, report where it opened, leave it as `leave` says and close it."""
    app = create_application([])
    assert isinstance(app, QApplication)
    window = MainWindow(warm_up=False)
    window.show()
    for _ in range(5):
        app.processEvents()
    report = {
        "screen": _rect(window.screen().availableGeometry()),
        "window": _rect(window.frameGeometry()),
        "maximized": window.isMaximized(),
    }
    if leave == "max":
        window.showMaximized()
    elif leave:
        width, _x, height = leave.partition("x")
        window.resize(int(width), int(height))
    for _ in range(5):
        app.processEvents()
    window.close()
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
