"""Live zoom: Ctrl+= and Ctrl+− make the interface's text a point larger or smaller at once,
Ctrl+0 returns it to the size the font has without a choice. The choice is the Interface size
setting, saved as it changes. A step that would make the window larger than its screen's
available area (its frame counted) is not taken, and the status bar says why."""

from __future__ import annotations

from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QApplication, QMainWindow

from rlm_desktop.ui.appearance.theme import apply_fonts
from rlm_desktop.ui.shared.preferences import Preferences
from rlm_desktop.ui.window.layout_memory import room_on_screen

SMALLEST_POINTS = 6
LARGEST_POINTS = 32
TOO_LARGE = "Larger text would not fit this screen: the window would be wider or taller than it."


class Zoom:
    """Changes the interface size of `window` live (`zoom_in`, `zoom_out`, `reset`)."""

    def __init__(self, window: QMainWindow, prefs: Preferences) -> None:
        self._window = window
        self._prefs = prefs
        app = QApplication.instance()
        assert isinstance(app, QApplication)
        self._app = app
        general = QFontDatabase.systemFont(QFontDatabase.SystemFont.GeneralFont)
        self._default_points = general.pointSize()  # the platform's, whatever was chosen

    @property
    def points(self) -> int:
        """The interface's size now, in points."""
        return self._app.font().pointSize()

    def zoom_in(self) -> bool:
        """One point larger; False (and a note in the status bar) when that would not fit."""
        return self._set(min(LARGEST_POINTS, self.points + 1))

    def zoom_out(self) -> bool:
        """One point smaller."""
        return self._set(max(SMALLEST_POINTS, self.points - 1))

    def reset(self) -> bool:
        """The size the font has without a choice."""
        return self._set(self._default_points, chosen=0)

    def _set(self, points: int, chosen: int | None = None) -> bool:
        before = self.points
        if points == before:
            return False
        self._apply(points)
        if points > before and not self._fits():
            self._apply(before)
            self._window.statusBar().showMessage(TOO_LARGE, 6000)
            return False
        self._prefs.set("appearance/ui_font_size", points if chosen is None else chosen)
        self._window.statusBar().showMessage(f"Interface size {points} pt", 2000)
        return True

    def _apply(self, points: int) -> None:
        prefs = self._prefs
        apply_fonts(
            self._app,
            prefs.get_str("appearance/ui_font"),
            points,
            prefs.get_str("appearance/code_font"),
            prefs.get_int("appearance/code_font_size"),
        )
        for _ in range(3):
            self._app.processEvents()  # layouts take the new font before the size is judged

    def _fits(self) -> bool:
        window = self._window
        room = room_on_screen(window)
        least = window.minimumSizeHint()
        return least.width() <= room.width() and least.height() <= room.height()
