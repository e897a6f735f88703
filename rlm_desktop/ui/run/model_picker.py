"""The model pickers: editable combo boxes that show a model by its short name and send its id.

A local server lists its model by path (`openai//tmp/models/gemma-3-270m-q4_k_m.gguf`); the
picker shows `gemma-3-270m-q4_k_m` (`formatting.model_name`), with the id in its tooltip, and
hands the id to the run. A short name two listed ids share is not used: both show whole. Text
typed by hand is taken as typed.
"""

from __future__ import annotations

from collections import Counter

from PySide6.QtCore import QStringListModel, Qt
from PySide6.QtWidgets import QComboBox, QCompleter

from rlm_desktop import formatting as fmt

LISTED = 40
"""How many names the drop-down lists (the completer offers them all)."""


def short_names(models: list[str]) -> dict[str, str]:
    """The id each usable short name stands for: one per path-like id, unless another listed id
    has the same short name or is that name."""
    shorts = {model: fmt.model_name(model) for model in models}
    counts = Counter(shorts.values())
    return {
        short: model
        for model, short in shorts.items()
        if short != model and counts[short] == 1 and short not in shorts
    }


class ModelPicker(QComboBox):
    """An editable combo box of litellm model names that completes on any part of the name."""

    def __init__(self, name: str, placeholder: str, shown_names: QStringListModel) -> None:
        super().__init__()
        self._ids: dict[str, str] = {}
        self.setEditable(True)
        self.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.setAccessibleName(name)
        self.setMinimumContentsLength(14)
        self.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        line = self.lineEdit()
        assert line is not None
        line.setPlaceholderText(placeholder)
        completer = QCompleter(shown_names, self)
        completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        completer.setFilterMode(Qt.MatchFlag.MatchContains)
        completer.setMaxVisibleItems(14)
        self.setCompleter(completer)
        self.currentTextChanged.connect(self._show_id)

    def set_names(self, models: list[str], shorts: dict[str, str]) -> None:
        """List `models` by the names `shorts` gives them (`short_names`); the choice stays."""
        chosen = self.model_id()
        self.blockSignals(True)
        self.clear()
        self._ids = dict(shorts)
        shown = {model: short for short, model in shorts.items()}
        for model in models[:LISTED]:
            self.addItem(shown.get(model, model), model)
        self.set_model_id(chosen)
        self.blockSignals(False)
        self._show_id()

    def model_id(self) -> str:
        """The model the picker names, as the run sends it."""
        text = self.currentText().strip()
        return self._ids.get(text, text)

    def set_model_id(self, model: str) -> None:
        """Name `model` in the box, by its short name when it has one."""
        short = fmt.model_name(model)
        if short != model and self._ids.get(short, model) == model:
            self._ids[short] = model
            self.setEditText(short)
        else:
            self.setEditText(model)

    def _show_id(self) -> None:
        model = self.model_id()
        self.setToolTip(model if model != self.currentText().strip() else "")
