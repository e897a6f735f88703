"""The replay bar: play/pause, speed, stepping by event and by turn, and a scrubber over the
run's time. It only shows a `ReplayPlayer`'s state and says what was asked of it."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QSignalBlocker, Qt, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QSlider,
    QStyle,
    QToolButton,
    QWidget,
)

from rlm_desktop import formatting as fmt
from rlm_desktop.review.replay import NORMAL_SPEED, SPEEDS, ReplayPlayer, Speed
from rlm_desktop.ui.appearance.theme import inked
from rlm_desktop.ui.shared.widgets import ElidedLabel, tool_button

SCRUB_STEPS_PER_S = 1000
"""The scrubber moves in milliseconds of run time."""
STEPS = ("previous_turn", "previous_event", "next_event", "next_turn")
"""What the step buttons ask for, named after their text."""


class ReplayBar(QWidget):
    """Controls of a replay. `seek_requested` carries run seconds; `speed_chosen` a `Speed`."""

    play_requested = Signal()
    step_requested = Signal(str)
    """One of `STEPS`."""
    speed_chosen = Signal(object)
    seek_requested = Signal(float)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Replay")
        self._glyphs: dict[QToolButton, QStyle.StandardPixmap] = {}
        """Each transport button's glyph, inked again in the text colour when the theme changes."""
        self.play_button = tool_button("Play", "Play the run back", self.play_requested.emit)
        pixmaps = QStyle.StandardPixmap
        self.previous_turn_button = self._button(
            "Previous turn", "Back to the end of the previous turn", pixmaps.SP_MediaSkipBackward
        )
        self.previous_button = self._button(
            "Previous event", "Back by one event", pixmaps.SP_MediaSeekBackward
        )
        self.next_button = self._button(
            "Next event", "Forward by one event", pixmaps.SP_MediaSeekForward
        )
        self.next_turn_button = self._button(
            "Next turn", "On to the end of the next turn", pixmaps.SP_MediaSkipForward
        )
        self.play_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self._set_glyph(self.play_button, QStyle.StandardPixmap.SP_MediaPlay)
        self.speed = QComboBox()
        self.speed.setAccessibleName("Replay speed")
        self.speed.setToolTip("How fast the run plays; skip waits cuts every quiet stretch short")
        for speed in SPEEDS:
            self.speed.addItem(speed.label, speed)
        self.speed.setCurrentIndex(SPEEDS.index(NORMAL_SPEED))
        self.speed.currentIndexChanged.connect(self._speed_changed)
        self.scrubber = QSlider(Qt.Orientation.Horizontal)
        self.scrubber.setAccessibleName("Replay position")
        self.scrubber.setToolTip("Drag to any moment of the run")
        self.scrubber.valueChanged.connect(self._scrubbed)
        self.clock = QLabel()
        self.clock.setAccessibleName("Replay time")
        self.where = ElidedLabel()
        self.where.setObjectName("muted")
        self.where.setAccessibleName("Replay position in events and turns")

        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for button in (
            self.previous_turn_button,
            self.previous_button,
            self.play_button,
            self.next_button,
            self.next_turn_button,
        ):
            layout.addWidget(button)
        layout.addWidget(self.speed)
        layout.addWidget(self.scrubber, 1)
        layout.addWidget(self.clock)
        layout.addWidget(self.where, 2)

    def _button(self, text: str, tip: str, pixmap: QStyle.StandardPixmap) -> QToolButton:
        button = tool_button(text, tip, self._step)
        button.setObjectName(text.lower().replace(" ", "_"))
        self._set_glyph(button, pixmap)
        button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonIconOnly)
        return button

    def _set_glyph(self, button: QToolButton, glyph: QStyle.StandardPixmap) -> None:
        self._glyphs[button] = glyph
        ink = self.palette().color(QPalette.ColorRole.ButtonText)
        button.setIcon(inked(self.style().standardIcon(glyph), ink))

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 (Qt's name)
        """Ink the glyphs again for a new theme."""
        super().changeEvent(event)
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.StyleChange):
            for button, glyph in self._glyphs.items():
                self._set_glyph(button, glyph)

    def _step(self) -> None:
        button = self.sender()
        if isinstance(button, QToolButton):
            self.step_requested.emit(button.objectName())

    def _speed_changed(self, _index: int) -> None:
        self.speed_chosen.emit(self.chosen_speed())

    def _scrubbed(self, value: int) -> None:
        self.seek_requested.emit(value / SCRUB_STEPS_PER_S)

    def choose_speed(self, speed: Speed) -> None:
        """Pick `speed`, adding it to the list when it is not one of the usual ones."""
        index = self.speed.findText(speed.label)
        if index < 0:
            self.speed.addItem(speed.label, speed)
            index = self.speed.count() - 1
        self.speed.setCurrentIndex(index)

    def chosen_speed(self) -> Speed:
        """The speed picked in the list."""
        speed = self.speed.currentData()
        return speed if isinstance(speed, Speed) else NORMAL_SPEED

    def show_state(self, player: ReplayPlayer) -> None:
        """Bring every control up to date with `player`."""
        playing = player.playing
        self.play_button.setText("Pause" if playing else "Play")
        self.play_button.setToolTip("Pause the replay" if playing else "Play the run back")
        pixmap = (
            QStyle.StandardPixmap.SP_MediaPause if playing else QStyle.StandardPixmap.SP_MediaPlay
        )
        self._set_glyph(self.play_button, pixmap)
        total = len(player.events)
        self.previous_button.setEnabled(player.position > 0)
        self.previous_turn_button.setEnabled(player.position > 0)
        self.next_button.setEnabled(not player.at_end)
        self.next_turn_button.setEnabled(not player.at_end)
        with QSignalBlocker(self.scrubber):
            self.scrubber.setMaximum(int(player.duration * SCRUB_STEPS_PER_S))
            self.scrubber.setValue(int(player.time * SCRUB_STEPS_PER_S))
        self.clock.setText(f"{fmt.seconds(player.time)} / {fmt.seconds(player.duration)}")
        last = player.last_event
        self.where.setText(
            f"event {player.position:,} of {total:,} · "
            f"turn {player.turns_begun:,} of {player.turns:,}" + (f" · {last}" if last else "")
        )
