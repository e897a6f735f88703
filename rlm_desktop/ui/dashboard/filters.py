"""The dashboard's filters: a date range, a model, a profile and a status; `changed` fires
whenever one of them does."""

from __future__ import annotations

from datetime import datetime, time, timedelta

from PySide6.QtCore import QDate, Signal
from PySide6.QtWidgets import QComboBox, QDateEdit, QHBoxLayout, QLabel, QWidget

from rlm_desktop import formatting as fmt
from rlm_desktop.review.history import FilterChoices, HistoryFilter

ANY_DATE = QDate(2000, 1, 1)
"""A date edit at this date shows "any" and does not filter."""


def _date_edit(name: str) -> QDateEdit:
    edit = QDateEdit()
    edit.setAccessibleName(name)
    edit.setCalendarPopup(True)
    edit.setDisplayFormat("yyyy-MM-dd")
    edit.setMinimumDate(ANY_DATE)
    edit.setSpecialValueText("any")
    edit.setDate(ANY_DATE)
    return edit


def _midnight(date: QDate) -> float:
    return datetime.combine(date.toPython(), time()).timestamp()  # type: ignore[arg-type]


class FilterBar(QWidget):
    """Filters over the saved runs; `current()` reads them as a `HistoryFilter`."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.since = _date_edit("Runs started from")
        self.until = _date_edit("Runs started until")
        self.model = QComboBox()
        self.model.setAccessibleName("Model")
        self.profile = QComboBox()
        self.profile.setAccessibleName("Profile")
        self.status = QComboBox()
        self.status.setAccessibleName("Status")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for caption, widget in (
            ("From", self.since),
            ("to", self.until),
            ("Model", self.model),
            ("Profile", self.profile),
            ("Status", self.status),
        ):
            layout.addWidget(QLabel(caption))
            layout.addWidget(widget)
        layout.addStretch(1)
        for edit in (self.since, self.until):
            edit.dateChanged.connect(lambda _date: self.changed.emit())
        for combo in (self.model, self.profile, self.status):
            combo.currentIndexChanged.connect(lambda _index: self.changed.emit())

    def offer(self, choices: FilterChoices) -> None:
        """Fill the lists with what saved runs have, keeping what was chosen (no `changed`)."""
        self.blockSignals(True)
        for combo, anything, values, show in (
            (self.model, "any model", choices.models, fmt.model_name),
            (self.profile, "any profile", choices.profiles, lambda v: v or "(none)"),
            (self.status, "any status", choices.statuses, fmt.status_text),
        ):
            kept = combo.currentData()
            combo.blockSignals(True)
            combo.clear()
            combo.addItem(anything, None)
            for value in values:
                combo.addItem(show(value), value)
            combo.setCurrentIndex(max(0, combo.findData(kept)) if kept is not None else 0)
            combo.blockSignals(False)
        self.blockSignals(False)

    def choose(self, **values: str | None) -> None:
        """Pick `model`, `profile` or `status` by value (None: any), as a user would."""
        for name, value in values.items():
            combo: QComboBox = getattr(self, name)
            index = 0 if value is None else combo.findData(value)
            if index < 0:
                raise ValueError(f"no saved run has {name} {value!r}")
            combo.setCurrentIndex(index)

    def current(self) -> HistoryFilter:
        """The filters as chosen."""
        since, until = self.since.date(), self.until.date()
        return HistoryFilter(
            since=None if since == ANY_DATE else _midnight(since),
            until=None
            if until == ANY_DATE
            else _midnight(until) + timedelta(days=1).total_seconds(),
            model=self.model.currentData(),
            profile=self.profile.currentData(),
            status=self.status.currentData(),
        )
