"""The evaluation page opened as a user opens it, over the app's settings file and a real store
file, and the scripted server that answers its needle tasks."""

from __future__ import annotations

import socket

from pytestqt.qtbot import QtBot

from rlm_desktop.evaluation.task_sets import TaskSpec
from rlm_desktop.store import Store
from rlm_desktop.ui.evaluation.dialog import EvaluationDialog
from rlm_desktop.ui.evaluation.results import RUN_COLUMNS

SPEC = TaskSpec(kinds=("needle",), lengths=(200,), seed=4, count=2)
MODEL = "openai/root-model"


def open_page(qtbot: QtBot, store: Store) -> EvaluationDialog:
    """A new page, reading the app's settings file afresh, as after a restart."""
    page = EvaluationDialog(store, MODEL, None, "")
    qtbot.addWidget(page)
    page.resize(1024, 640)
    page.show()
    qtbot.waitExposed(page)
    return page


def run_on_ray(page: EvaluationDialog, address: str) -> None:
    """Choose "Ray cluster" at `address` in the form."""
    field = page.form.run_on
    field.choice.setCurrentIndex(field.choice.findData("ray"))
    field.ray_address.setText(address)


def ran_on(page: EvaluationDialog) -> list[str]:
    """The "ran on" cell of every row of the runs table."""
    column = RUN_COLUMNS.index("ran on")
    return [page.runs.item(row, column).text() for row in range(page.runs.rowCount())]


def closed_port() -> int:
    """A port of 127.0.0.1 nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
