"""What the window remembers of its layout, and keeping it on the screen it is shown on."""

from __future__ import annotations

from PySide6.QtCore import QPoint, QRect, QSize, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QMainWindow, QWidget

from rlm_desktop.ui.shared.preferences import Preferences
from rlm_desktop.ui.window.workspace import Workspace

FIRST_SIZE = QSize(1440, 900)
"""The window's size at its first start, where the screen has room for it."""
SCREEN = "window/screen"
"""The available size of the screen the window was left on, "WIDTHxHEIGHT"."""
SIZE = "window/size"
"""The window's size as it was left (its normal size when maximised), "WIDTHxHEIGHT"."""
MAXIMIZED = "window/maximized"


class WindowLayout:
    """Saves and restores the geometry, splitters, tree columns, budget row and code wrapping."""

    def __init__(self, window: QMainWindow, workspace: Workspace, prefs: Preferences) -> None:
        self.window = window
        self.workspace = workspace
        self.prefs = prefs
        self._frame = QSize(0, 0)

    def restore(self) -> None:
        """The first size, then whatever was remembered, kept inside the screen."""
        self.window.resize(FIRST_SIZE)
        geometry = self.prefs.window_state("geometry")
        restored = geometry is not None and self.window.restoreGeometry(geometry)
        size = _size(self.prefs.get_str(SIZE))
        if size is not None:
            if not restored:  # Qt refuses a geometry saved on a screen of another size
                self.window.resize(size)
            self._scale_to_screen()
        if self.prefs.get_bool(MAXIMIZED):
            self.window.setWindowState(self.window.windowState() | Qt.WindowState.WindowMaximized)
        for splitter in self.workspace.splitters():
            state = self.prefs.window_state(splitter.objectName())
            if state is not None:
                splitter.restoreState(state)
        header = self.prefs.window_state("treeHeader")
        if header is not None:
            self.workspace.tree_panel.view.header().restoreState(header)
        self.workspace.controls.budget.set_open(self.prefs.get_bool("window/budget_open"))
        self.workspace.console.wrap.setChecked(self.prefs.get_bool("window/wrap_code"))
        self.fit_to_screen()

    def _scale_to_screen(self) -> None:
        """On a screen of another size than the one the window was left on, keep the share of
        the screen it took (left filling a small screen, it fills a larger one too); a
        maximised window stays maximised."""
        window = self.window
        if window.isMaximized() or window.isFullScreen():
            return
        was = _size(self.prefs.get_str(SCREEN))
        now = available_area(window).size()
        if was is None or was == now:
            return
        size = window.size()
        window.resize(
            round(size.width() * now.width() / was.width()),
            round(size.height() * now.height() / was.height()),
        )

    def fit_to_screen(self) -> None:
        """Keep the window, frame and all, inside its screen's available area: a small screen,
        or a size remembered from a larger one. A maximised window is the screen's already."""
        window = self.window
        if window.isMaximized() or window.isFullScreen():
            return
        area = available_area(window)
        self._frame = window.frameGeometry().size() - window.size()
        window.resize(window.size().boundedTo(room_on_screen(window)))
        outer = window.frameGeometry()
        x = min(max(outer.x(), area.x()), area.x() + area.width() - outer.width())
        y = min(max(outer.y(), area.y()), area.y() + area.height() - outer.height())
        if (x, y) != (outer.x(), outer.y()):
            window.move(QPoint(x, y))

    def frame_changed(self) -> None:
        """Fit again when the window manager's frame around the window is not the one it was
        fitted with: a window manager frames a window after it is shown, so the first fit could
        not count the title bar (the status bar had hung below a 640-pixel screen)."""
        window = self.window
        if window.isMaximized() or window.isFullScreen():
            return
        if window.frameGeometry().size() - window.size() != self._frame:
            self.fit_to_screen()

    def save(self) -> None:
        """Remember the layout (written with the other settings, in one write)."""
        states = {"geometry": self.window.saveGeometry()}
        states.update((s.objectName(), s.saveState()) for s in self.workspace.splitters())
        states["treeHeader"] = self.workspace.tree_panel.view.header().saveState()
        switches = {
            "budget_open": self.workspace.controls.budget.is_open,
            "wrap_code": self.workspace.console.wrap.isChecked(),
        }
        self.prefs.set_window(states, switches)
        area = available_area(self.window).size()
        normal = self.window.normalGeometry().size()
        self.prefs.set_many(
            {
                SCREEN: f"{area.width()}x{area.height()}",
                SIZE: f"{normal.width()}x{normal.height()}",
                MAXIMIZED: self.window.isMaximized(),
            }
        )


def available_area(window: QWidget) -> QRect:
    """The available geometry of the screen `window` is on (the primary one before it is)."""
    screen = window.screen() or QGuiApplication.primaryScreen()
    return screen.availableGeometry()


def room_on_screen(window: QWidget) -> QSize:
    """The most `window` may measure inside its frame and stay within its screen's available
    area."""
    return available_area(window).size() - (window.frameGeometry().size() - window.size())


def _size(text: str) -> QSize | None:
    """`WIDTHxHEIGHT` as a size (None for anything else)."""
    width, _x, height = text.partition("x")
    if not (width.isdigit() and height.isdigit()) or not int(width) or not int(height):
        return None
    return QSize(int(width), int(height))
