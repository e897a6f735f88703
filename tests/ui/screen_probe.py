"""Opens the real main window on whatever screen Qt was given and prints where its primary
controls ended up, as one JSON object (run by `test_screen_fit` in a process of its own, since a
screen's size is fixed when Qt starts).

`{"screen": [x, y, w, h], "frame": [...], "window": [...], "states": {state: {control:
{"rect": [...], "visible": bool}}}}`: rectangles in global coordinates, `screen` being the
available area; one state with the budget folded, one with it open and a problem shown, one with
the timeline shown in the detail pane (in the console's place), and one with the conversations sidebar as well. A run setting the window had no room for is scrolled into view (the
settings scroll when the window is short) and marked `scrolled`. On a real X display the report waits for the window manager to frame the
window (`framed` says whether it did), since the frame is what must fit.
"""

from __future__ import annotations

import json
import sys
import time

from PySide6.QtCore import QRect
from PySide6.QtWidgets import QApplication, QWidget

from rlm_desktop.ui.app import create_application
from rlm_desktop.ui.window.detail_tabs import TIMELINE
from rlm_desktop.ui.window.main_window import MainWindow


def _rect(rect: QRect) -> list[int]:
    return [rect.x(), rect.y(), rect.width(), rect.height()]


def _where(widget: QWidget) -> dict[str, object]:
    """Where the part of `widget` that can be seen is: a pane squeezed below its least size
    by a short window, or scrolled, is cut off by its parents, and only what they leave of it
    counts."""
    shown = _whole(widget)
    parent = widget.parentWidget()
    while parent is not None:
        shown &= QRect(parent.mapToGlobal(parent.rect().topLeft()), parent.size())
        parent = parent.parentWidget()
    return {"rect": _rect(shown), "visible": widget.isVisible() and not shown.isEmpty()}


def _controls(window: MainWindow) -> dict[str, dict[str, object]]:
    ws = window.workspace
    widgets: dict[str, QWidget] = {
        "question": ws.controls.question,
        "run": ws.controls.run_button,
        "stop": ws.controls.stop_button,
        "model": ws.controls.model,
        "sub_model": ws.controls.sub_model,
        "endpoint": ws.controls.endpoint,
        "budget": ws.controls.budget.toggle,
        "tree": ws.tree_panel.view,
        "console": ws.console,
        "documents": ws.documents,
    }
    if not ws.conversations.isHidden():
        widgets["conversations"] = ws.conversations
    if ws.documents.isHidden():  # folded to make room for the conversations, and said so
        del widgets["documents"]
    if ws.detail_tabs.currentIndex() == TIMELINE:  # the timeline takes the console's place
        del widgets["console"]
        widgets["timeline"] = ws.timeline
    if ws.controls.budget.is_open:
        widgets["max_cost"] = ws.controls.max_cost
        widgets["timeout"] = ws.controls.timeout
    if ws.controls.fix_button.isVisible():
        widgets["fix"] = ws.controls.fix_button
    found = {name: _where(widget) for name, widget in widgets.items()}
    area = ws.controls.settings_area
    for name, widget in widgets.items():
        if area.isAncestorOf(widget) and found[name]["rect"] != _rect(_whole(widget)):
            area.ensureWidgetVisible(widget, 0, 0)
            settle(QApplication.instance())  # type: ignore[arg-type]
            found[name] = {**_where(widget), "scrolled": True}
    area.verticalScrollBar().setValue(0)
    return found


def _pages_scroll(window: MainWindow) -> bool:
    """True when the window's pages are larger than it and scroll (the last resort)."""
    frame = window.frame
    return frame.horizontalScrollBar().maximum() > 0 or frame.verticalScrollBar().maximum() > 0


def _whole(widget: QWidget) -> QRect:
    return QRect(widget.mapToGlobal(widget.rect().topLeft()), widget.size())


FRAME_WAIT_S = 5.0


def settle(app: QApplication) -> None:
    """Let layouts and the window system catch up."""
    for _ in range(5):
        app.processEvents()


def wait_for_frame(app: QApplication, window: MainWindow) -> bool:
    """True once a window manager has put a frame around `window` (never, offscreen)."""
    deadline = time.monotonic() + FRAME_WAIT_S
    while time.monotonic() < deadline:
        settle(app)
        if window.frameGeometry().size() != window.size():
            settle(app)  # the window is fitted again in the frame's move
            return True
        time.sleep(0.02)
    return False


def main() -> int:
    """Show the window, report its controls folded and unfolded."""
    app = create_application([])
    assert isinstance(app, QApplication)
    window = MainWindow(warm_up=False)
    window.pages.setCurrentWidget(window.workspace)
    window.show()
    framed = app.platformName() == "xcb" and wait_for_frame(app, window)
    settle(app)
    states = {"folded": _controls(window)}
    folded_frame = _rect(window.frameGeometry())
    window.workspace.controls.budget.set_open(True)
    window.workspace.controls.show_problem(
        "The root model 'openai/no-such-model' is not served at http://127.0.0.1:8000/v1; "
        "pick one it lists: openai/test-model.",
        "model",
        "Choose the root model",
    )
    settle(app)
    states["open"] = _controls(window)
    frames = {"open": _rect(window.frameGeometry())}
    window.timeline_action.trigger()
    settle(app)
    states["timeline"] = _controls(window)
    frames["timeline"] = _rect(window.frameGeometry())
    window.conversations_action.setChecked(True)
    settle(app)
    states["conversations"] = _controls(window)
    frames["conversations"] = _rect(window.frameGeometry())
    screen = window.screen().availableGeometry()
    report = {
        "framed": framed,
        "frames": frames,
        "frame_folded": folded_frame,
        "screen": _rect(screen),
        "frame": _rect(window.frameGeometry()),
        "window": _rect(QRect(window.mapToGlobal(window.rect().topLeft()), window.size())),
        "states": states,
        "pages_scroll": _pages_scroll(window),
    }
    print(json.dumps(report))
    window.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
