"""Live zoom: Ctrl+= and Ctrl+− make the interface's text a point larger or smaller at once,
Ctrl+0 returns it to the size the font has without a choice. The choice is the Interface size
setting, saved as it changes. A step that would make the window larger than its screen's
available area (its frame counted) is not taken, and the status bar says why."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QSize
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QApplication, QMainWindow

from rlm_desktop.ui.appearance.theme import (
    LARGEST_POINTS,
    SMALLEST_POINTS,
    apply_fonts,
    monospace_font,
)
from rlm_desktop.ui.shared.preferences import Preferences
from rlm_desktop.ui.window.layout_memory import room_on_screen

TOO_LARGE = "Larger text would not fit this screen: the window would be wider or taller than it."


class Zoom:
    """Changes the interface size of `window` live (`zoom_in`, `zoom_out`, `reset`)."""

    def __init__(
        self, window: QMainWindow, prefs: Preferences, least: Callable[[], QSize] | None = None
    ) -> None:
        """`least` is the window's size with nothing scrolled (its least size by default)."""
        self._window = window
        self._least = least or window.minimumSizeHint
        self._prefs = prefs
        app = QApplication.instance()
        assert isinstance(app, QApplication)
        self._app = app
        general = QFontDatabase.systemFont(QFontDatabase.SystemFont.GeneralFont)
        self._default_points = general.pointSize()  # the platform's, whatever was chosen
        self.persist = True
        """Whether a step is saved as the Interface size (not while presenting)."""

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

    def enlarge_to(self, points: int, room: Callable[[], bool] = lambda: True) -> int:
        """The largest size up to `points` that fits and leaves `room` true, the code growing
        by as many points (unsaved); the size reached. Each size tried costs the whole window's
        restyling (about half a second at 2x): the largest first, as it fits most screens, then
        by halving the range."""
        start, code = self.points, monospace_font().pointSize()
        low, high = start, min(points, LARGEST_POINTS)
        if high > low:
            self._apply(high, min(LARGEST_POINTS, code + high - start))
            if self._fits() and room():
                return high
            high -= 1
        while low < high:
            middle = (low + high + 1) // 2
            self._apply(middle, min(LARGEST_POINTS, code + middle - start))
            if self._fits() and room():
                low = middle
            else:
                high = middle - 1
        if self.points != low:
            self._apply(low, min(LARGEST_POINTS, code + low - start))
        return low

    def restore(self, points: int) -> None:
        """Go back to `points` and the chosen code size (unsaved): those from before
        `enlarge_to`."""
        self._apply(points)

    def _set(self, points: int, chosen: int | None = None) -> bool:
        if points == self.points:
            return False
        if not self._step(points):
            self._window.statusBar().showMessage(TOO_LARGE, 6000)
            return False
        if self.persist:
            self._prefs.set("appearance/ui_font_size", points if chosen is None else chosen)
        self._window.statusBar().showMessage(f"Interface size {points} pt", 2000)
        return True

    def _step(self, points: int, code_points: int | None = None) -> bool:
        """Apply `points` (and `code_points`, else the chosen code size); a larger size that
        does not fit is taken back (False)."""
        before, code_before = self.points, monospace_font().pointSize()
        self._apply(points, code_points)
        if points > before and not self._fits():
            self._apply(before, code_before if code_points is not None else None)
            return False
        return True

    def _apply(self, points: int, code_points: int | None = None) -> None:
        prefs = self._prefs
        apply_fonts(
            self._app,
            prefs.get_str("appearance/ui_font"),
            points,
            prefs.get_str("appearance/code_font"),
            prefs.get_int("appearance/code_font_size") if code_points is None else code_points,
        )
        for _ in range(3):
            self._app.processEvents()  # layouts take the new font before the size is judged

    def _fits(self) -> bool:
        window = self._window
        room = room_on_screen(window)
        least = self._least()
        return least.width() <= room.width() and least.height() <= room.height()
