"""The preview's part picker: a document's sheets, slides, pages or chapters, to jump to one."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QWidget

from rlm_desktop.engine.context import ContextSection

_KIND_WORDS = {"sheet": "Sheet", "slide": "Slide", "page": "Page", "chapter": "Chapter"}


def part_label(section: ContextSection) -> str:
    """How the picker names a part: `Sheet Sales`, `Slide 3 · Pricing`, `Page 2 · OCR 93%`."""
    label = f"{_KIND_WORDS.get(section.kind, section.kind.title())} {section.label}"
    if section.title and section.title != section.label:
        label += f" · {section.title}"
    if section.ocr_confidence is not None:
        label += f" · OCR {section.ocr_confidence:.0%}"
    return label


class PartPicker(QComboBox):
    """Lists the parts of the document previewed; `chosen` gives the part's start offset.

    Hidden for a document without parts, and for one whose only part is the whole text.
    """

    chosen = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Go to part")
        self.setToolTip("Go to a sheet, slide, page or chapter of the document previewed")
        self.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.setMinimumContentsLength(12)
        self.activated.connect(self._activated)
        self.setVisible(False)

    def show_parts(self, sections: Sequence[ContextSection]) -> None:
        """List `sections` (none: hide the picker)."""
        self.clear()
        for section in sections:
            self.addItem(part_label(section), section.start)
        self.setVisible(len(sections) > 1)

    def show_part_at(self, offset: int) -> None:
        """Show the part that holds `offset` as the one chosen (without going to it)."""
        starts = [self.itemData(index) for index in range(self.count())]
        held = [
            index
            for index, start in enumerate(starts)
            if isinstance(start, int) and start <= offset
        ]
        if held:
            self.setCurrentIndex(held[-1])

    def _activated(self, index: int) -> None:
        start = self.itemData(index)
        if isinstance(start, int):
            self.chosen.emit(start)
