"""The evaluation form's "Run on" choice: this machine or a Ray cluster at an address, kept
for the next page like the other fields; a cluster that cannot be joined (nothing answers at
its address, or Ray is not installed here) is one line on the page, with the form as it was and
nothing recorded."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from rlm_desktop import paths
from rlm_desktop.evaluation.records import EvaluationRecords
from rlm_desktop.evaluation.task_sets import generate
from rlm_desktop.store import Store
from rlm_desktop.ui.shared.preferences import Preferences
from tests.cli import run_python
from tests.evaluation.scripting import MODELS, fill_form, responder
from tests.memory_keyring import MemoryKeyring
from tests.qt_fixtures import qloop as qloop
from tests.qt_free import run_without
from tests.scripted_server import ScriptedServer
from tests.ui.evaluation.pages import SPEC, closed_port, open_page, run_on_ray

RAY_MISSING = "pip install 'rlm-desktop[cluster]'"


@pytest.fixture
def store() -> Iterator[Store]:
    store = Store(paths.database_path())
    yield store
    store.close()


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    server = ScriptedServer(models=MODELS).start()
    server.respond_with(responder(generate(SPEC)))
    yield server
    server.stop()


def test_the_run_on_choice_comes_back_on_a_new_page(qtbot: QtBot, store: Store) -> None:
    page = open_page(qtbot, store)
    field = page.form.run_on
    assert field.run_on() == "here"  # nothing remembered yet: this machine
    assert page.form.ray_address() is None
    assert not field.ray_address.isEnabled()
    run_on_ray(page, "10.0.0.5:6379")
    assert field.ray_address.isEnabled()
    page.close()

    again = open_page(qtbot, store)
    assert again.form.run_on.run_on() == "ray"
    assert again.form.ray_address() == "10.0.0.5:6379"
    field = again.form.run_on
    field.choice.setCurrentIndex(field.choice.findData("here"))
    again.close()

    third = open_page(qtbot, store)
    assert third.form.ray_address() is None
    assert third.form.run_on.ray_address.text() == "10.0.0.5:6379"  # kept for next time
    third.close()
    settings = Preferences(str(paths.data_dir() / "settings.ini"))
    settings.set_many({"evaluation/run_on": "the moon", "evaluation/ray_address": "  "})
    fourth = open_page(qtbot, store)
    assert fourth.form.run_on.run_on() == "here"
    assert fourth.form.run_on.ray_address.text() == "auto"
    fourth.close()


def test_a_cluster_without_an_address_says_what_to_fix(qtbot: QtBot, store: Store) -> None:
    page = open_page(qtbot, store)
    run_on_ray(page, " ")
    assert not page.start()
    assert page.message.text() == (
        "The Ray cluster's address is missing: auto, local or the head's HOST:PORT"
    )
    assert EvaluationRecords(store).all() == []
    page.close()


def test_an_address_nothing_answers_at_is_one_line_and_nothing_is_recorded(
    qtbot: QtBot,
    qloop: object,
    memory_keyring: MemoryKeyring,
    store: Store,
    server: ScriptedServer,
) -> None:
    page = open_page(qtbot, store)
    fill_form(page, server, SPEC)
    address = f"127.0.0.1:{closed_port()}"
    run_on_ray(page, address)
    before = page.form.fields()
    assert page.start()
    qtbot.waitUntil(lambda: not page.running, timeout=20_000)
    message = page.message.text()
    assert message.startswith(f"Not started: nothing answers at {address} (")
    assert "\n" not in message
    assert page.form.isEnabled()
    assert page.form.fields() == before
    assert page.start_button.isEnabled()
    assert page.cluster.joined is None
    assert EvaluationRecords(store).all() == []
    assert page.runs.rowCount() == 0
    page.close()


def test_stop_before_it_has_started_records_nothing(
    qtbot: QtBot,
    qloop: object,
    memory_keyring: MemoryKeyring,
    store: Store,
    server: ScriptedServer,
) -> None:
    page = open_page(qtbot, store)
    fill_form(page, server, SPEC)
    assert page.start()
    page.stop()  # while its models are being checked
    assert page.message.text() == "Stopped before it started: nothing was recorded."
    assert page.start_button.isEnabled()
    assert page.form.isEnabled()
    qtbot.waitUntil(lambda: not page.running, timeout=20_000)
    assert page.evaluation is None
    assert EvaluationRecords(store).all() == []
    page.close()


NO_RAY_PAGE = """
import asyncio, json, types
import qasync
from PySide6.QtWidgets import QApplication
from rlm_desktop import paths
from rlm_desktop.evaluation.records import EvaluationRecords
from rlm_desktop.evaluation.task_sets import TaskSpec
from rlm_desktop.store import Store
from rlm_desktop.ui.evaluation.dialog import EvaluationDialog
from tests.evaluation.scripting import fill_form
from tests.ui.evaluation.pages import run_on_ray

app = QApplication([])
store = Store(paths.database_path())
page = EvaluationDialog(store, "openai/good-model", None, "")
fill_form(page, types.SimpleNamespace(base_url={base_url!r}), TaskSpec(("needle",), (200,), 4, 2))
run_on_ray(page, "local")
before = page.form.fields()


async def start():
    assert page.start()
    while page.running:
        await asyncio.sleep(0.05)


qasync.run(start())
print(json.dumps({{
    "message": page.message.text(),
    "form_kept": page.form.isEnabled() and page.form.fields() == before,
    "recorded": len(EvaluationRecords(store).all()),
}}))
"""


def test_without_ray_installed_the_page_says_how_to_add_it(
    server: ScriptedServer, isolated_home: Path
) -> None:
    done = run_without(
        NO_RAY_PAGE.format(base_url=server.base_url), ["ray"], home=isolated_home, timeout=60
    )
    assert done.returncode == 0, done.stderr
    shown = json.loads(done.stdout.splitlines()[-1])
    assert shown["message"] == (
        "Not started: running on a Ray cluster needs Ray, which is not installed here: "
        f"{RAY_MISSING}"
    )
    assert shown["form_kept"]
    assert shown["recorded"] == 0


OPEN_PAGES = """
import sys
from PySide6.QtWidgets import QApplication
from rlm_desktop.ui.window.main_window import MainWindow

app = QApplication([])
window = MainWindow(warm_up=False)
evaluation, batches = window.show_evaluation(), window.show_batches()
evaluation.form.run_on.choice.setCurrentIndex(1)
app.processEvents()
print(sorted(name for name in sys.modules if name.partition(".")[0] == "ray"))
"""


def test_the_pages_open_without_importing_ray(isolated_home: Path) -> None:
    done = run_python("-c", OPEN_PAGES, home=isolated_home, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "[]"
