"""The evaluation page across pages and restarts: its fields come back on a new page over the same
settings file (a value that no longer holds falls back to its default), and its past evaluations
are listed from the store, newest first, a stopped one as partial; choosing one shows its runs,
table and chart as they were after the run, without running anything, and a partial one
resumes from there."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from rlm_desktop import paths
from rlm_desktop.engine.profiles import ProfileDraft, delete_user_profile, save_user_profile
from rlm_desktop.evaluation.runner import TrialFinished
from rlm_desktop.evaluation.task_sets import TaskSpec, generate
from rlm_desktop.store import Store
from rlm_desktop.ui.evaluation.dialog import EvaluationDialog
from rlm_desktop.ui.shared.preferences import Preferences
from tests.evaluation.scripting import MODELS, fill_form, numeric_tasks_file, responder
from tests.memory_keyring import MemoryKeyring
from tests.qt_fixtures import qloop as qloop
from tests.scripted_server import ScriptedServer

SPEC = TaskSpec(kinds=("needle",), lengths=(200,), seed=4, count=2)
MODEL = "openai/root-model"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    store = Store(tmp_path / "sessions.db")
    yield store
    store.close()


@pytest.fixture
def settings_file() -> str:
    """The app's settings file (in the test's own data folder), as every page opens it."""
    return str(paths.data_dir() / "settings.ini")


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    server = ScriptedServer(models=MODELS, latency_s=0.2).start()
    server.respond_with(responder(generate(SPEC)))
    yield server
    server.stop()


def open_page(qtbot: QtBot, store: Store) -> EvaluationDialog:
    """A new page, reading the app's settings file through a new `Preferences` object of its
    own, as after a restart."""
    page = EvaluationDialog(store, MODEL, None, "")
    qtbot.addWidget(page)
    page.resize(1024, 640)
    page.show()
    qtbot.waitExposed(page)
    return page


def shown(page: EvaluationDialog) -> dict[str, object]:
    """What the page's form widgets show."""
    form = page.form
    return {
        "kinds": tuple(kind for kind, box in form.kinds.items() if box.isChecked()),
        "task_file": form.task_file.text(),
        "lengths": form.lengths.text(),
        "count": form.count.value(),
        "seed": form.seed.value(),
        "settings": tuple(form.settings.toPlainText().splitlines()),
        "api_base": form.api_base.text(),
        "prices": form.prices.text(),
        "max_cost": form.max_cost.value(),
        "concurrency": form.concurrency.value(),
    }


def test_the_fields_come_back_on_a_new_page(
    qtbot: QtBot, store: Store, settings_file: str, tmp_path: Path
) -> None:
    page = open_page(qtbot, store)
    tasks = numeric_tasks_file(tmp_path / "mine")
    form = page.form
    form.kinds["needle"].setChecked(False)
    form.kinds["pairs"].setChecked(True)
    form.kinds["code"].setChecked(True)
    form.task_file.setText(str(tasks))
    form.lengths.setText("300, 900")
    form.count.setValue(3)
    form.seed.setValue(42)
    form.settings.setPlainText(
        "small:model=openai/a,mode=rlm,depth=3,profile=small\nplain:model=openai/b,mode=direct"
    )
    form.api_base.setText("http://127.0.0.1:9/v1")
    form.prices.setText("openai/a = 1, 2; openai/b = 0.5, 1")
    form.max_cost.setValue(7.5)
    form.concurrency.setValue(3)
    page.close()

    expected = {
        "kinds": ("pairs", "code"),
        "task_file": str(tasks),
        "lengths": "300, 900",
        "count": 3,
        "seed": 42,
        "settings": (
            "small:model=openai/a,mode=rlm,depth=3,profile=small",
            "plain:model=openai/b,mode=direct",
        ),
        "api_base": "http://127.0.0.1:9/v1",
        "prices": "openai/a = 1, 2; openai/b = 0.5, 1",
        "max_cost": 7.5,
        "concurrency": 3,
    }
    again = open_page(qtbot, store)
    assert shown(again) == expected
    again.form.seed.setValue(7)  # left alone for a moment, without closing: kept as well
    qtbot.waitUntil(lambda: Preferences(settings_file).get_int("evaluation/seed") == 7)
    again.close()


def test_a_remembered_value_that_no_longer_holds_falls_back(
    qtbot: QtBot, store: Store, settings_file: str, tmp_path: Path
) -> None:
    profiles = paths.user_profiles_dir()
    save_user_profile(profiles, ProfileDraft(name="mine", prompt="Use the REPL.", patterns=("*",)))
    folder = tmp_path / "shared-tasks"
    tasks = numeric_tasks_file(folder)
    page = open_page(qtbot, store)
    defaults = shown(page)  # nothing remembered yet
    page.form.task_file.setText(str(tasks))
    page.form.kinds["needle"].setChecked(False)
    page.form.seed.setValue(11)
    page.form.settings.setPlainText("mine:model=openai/a,mode=rlm,depth=2,profile=mine")
    page.close()
    delete_user_profile(profiles, "mine")  # the profile and the task set are gone since
    shutil.rmtree(folder)
    damaged = {  # and an older or hand-edited file holds values the form cannot take
        "evaluation/lengths": "4000, lots",
        "evaluation/count": "-3",
        "evaluation/concurrency": "999",
        "evaluation/prices": "openai/a = cheap",
        "evaluation/max_cost_usd": "nan",
    }
    Preferences(settings_file).set_many(damaged)

    again = open_page(qtbot, store)
    fields = shown(again)
    assert fields["task_file"] == ""
    assert fields["kinds"] == defaults["kinds"]  # no task left: the default kind
    assert fields["settings"] == ("mine:model=openai/a,mode=rlm,depth=2",)  # chosen by model now
    assert fields["seed"] == 11  # what still holds is kept
    fallen_back = ("lengths", "count", "concurrency", "prices", "max_cost")
    assert {name: fields[name] for name in fallen_back} == {
        name: defaults[name] for name in fallen_back
    }
    again.close()


def cells(page: EvaluationDialog) -> list[list[str]]:
    table = page.summary
    return [
        [table.item(row, column).text() for column in range(table.columnCount())]
        for row in range(table.rowCount())
    ]


def test_past_evaluations_are_listed_and_reopen_with_their_charts(
    qtbot: QtBot,
    qloop: asyncio.AbstractEventLoop,
    memory_keyring: MemoryKeyring,
    store: Store,
    server: ScriptedServer,
) -> None:
    page = open_page(qtbot, store)
    assert page.past.empty.isVisibleTo(page)  # nothing evaluated yet: it says so
    assert not page.past.list.isVisibleTo(page)
    fill_form(page, server, SPEC)
    with qtbot.waitSignal(page.finished_evaluation, timeout=120_000) as finished:
        assert page.start()
    complete_id = str(finished.args[0])
    after_run = (cells(page), dict(page.plot.points), page.runs.rowCount())
    assert after_run[2] == 4
    assert page.past.entries[0].id == complete_id  # listed on the page that ran it as well

    assert page.start()  # a second one, stopped after its first trial
    qtbot.waitUntil(lambda: page.evaluation is not None, timeout=30_000)
    assert page.evaluation is not None
    partial_id = page.evaluation.evaluation_id
    page.evaluation.add_listener(
        lambda event: page.stop() if isinstance(event, TrialFinished) else None
    )
    qtbot.waitUntil(lambda: not page.running, timeout=120_000)
    page.close()

    again = open_page(qtbot, store)
    listed = again.past.entries
    assert [p.id for p in listed] == [partial_id, complete_id]  # newest first
    assert [p.state for p in listed] == ["partial", "complete"]
    assert listed[1].trials == "4 of 4 trials"
    assert listed[1].score_line == "good 1.00 · bad 0.00"
    assert "partial" in again.past.list.item(0).text()
    assert again.runs.rowCount() == 0  # nothing shown before one is chosen

    again.past.list.setCurrentRow(1)
    assert (cells(again), dict(again.plot.points), again.runs.rowCount()) == after_run
    again.tabs.setCurrentWidget(again.plot)
    assert not again.plot.plot.grab().isNull()
    assert "complete" in again.message.text()
    assert "bootstrap" in again.footer.text()
    assert again.start_button.text() == "&Start"

    again.past.list.setCurrentRow(0)
    assert "partial" in again.message.text()
    assert "not run yet" in again.footer.text()
    assert again.start_button.text() == "&Resume"
    assert not again.form.isEnabled()
    done_before = again.runs.rowCount()
    assert 1 <= done_before < 4
    assert sum(bar.value() for bar in again.bars.values()) == done_before

    with qtbot.waitSignal(again.finished_evaluation, timeout=120_000):
        assert again.start()  # resumes it: only what it had not run
    assert again.runs.rowCount() == 4
    assert [p.state for p in again.past.entries] == ["complete", "complete"]
    assert again.plot.points["good"][1] == 1.0
    again.close()
