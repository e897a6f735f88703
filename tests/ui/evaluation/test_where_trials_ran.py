"""Where each trial ran, on the evaluation page: while it runs, the line beside each setting's
bar says which task runs where; the runs table gives each run's node ("this machine" here) and
marks a retried trial; a past evaluation reopened shows the same from its stored results,
cluster nodes included."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pytestqt.qtbot import QtBot

from rlm_desktop import formatting as fmt
from rlm_desktop import paths
from rlm_desktop.evaluation.options import EvaluationOptions
from rlm_desktop.evaluation.records import EvaluationRecords
from rlm_desktop.evaluation.runner import EvaluationEvent, TrialPlaced
from rlm_desktop.evaluation.settings import parse_setting
from rlm_desktop.evaluation.task_sets import generate
from rlm_desktop.evaluation.trial import TrialResult
from rlm_desktop.store import Store
from rlm_desktop.ui.evaluation.results import RUN_COLUMNS
from tests.evaluation.scripting import MODELS, fill_form, responder
from tests.memory_keyring import MemoryKeyring
from tests.qt_fixtures import qloop as qloop
from tests.scripted_server import ScriptedServer
from tests.ui.evaluation.pages import SPEC, open_page, ran_on

NODES = ("ray vm-1 (node 3fa2c1d0)", "ray vm-2 (node 9b7e0a11)")


@pytest.fixture
def store() -> Iterator[Store]:
    store = Store(paths.database_path())
    yield store
    store.close()


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    server = ScriptedServer(models=MODELS, latency_s=0.1).start()
    server.respond_with(responder(generate(SPEC)))
    yield server
    server.stop()


def test_a_local_evaluation_says_this_machine_live_and_reopened(
    qtbot: QtBot,
    qloop: object,
    memory_keyring: MemoryKeyring,
    store: Store,
    server: ScriptedServer,
) -> None:
    page = open_page(qtbot, store)
    fill_form(page, server, SPEC)
    seen: list[tuple[str, str]] = []

    def beside_the_bar(event: EvaluationEvent) -> None:
        if isinstance(event, TrialPlaced):  # the page has shown it by now
            seen.append((event.task_id, page.results.places[event.setting].text()))

    assert page.start()
    qtbot.waitUntil(lambda: page.evaluation is not None, timeout=30_000)
    assert page.evaluation is not None
    evaluation_id = page.evaluation.evaluation_id
    page.evaluation.add_listener(beside_the_bar)
    qtbot.waitUntil(lambda: not page.running, timeout=120_000)
    assert seen  # the first placement may come before the listener; the later ones do not
    for task_id, line in seen:
        assert line == f"running {task_id} on {fmt.THIS_MACHINE}"
    assert ran_on(page) == [fmt.THIS_MACHINE] * 4
    assert {name: label.text() for name, label in page.results.places.items()} == {
        "good": f"ran on {fmt.THIS_MACHINE}",
        "bad": f"ran on {fmt.THIS_MACHINE}",
    }
    page.close()

    again = open_page(qtbot, store)
    assert again.show_past(evaluation_id)
    assert ran_on(again) == [fmt.THIS_MACHINE] * 4
    assert again.results.places["good"].text() == f"ran on {fmt.THIS_MACHINE}"
    again.close()


def trial(task_id: str, node: str, attempts: int = 1, session_id: str | None = "s") -> TrialResult:
    return TrialResult(
        evaluation_id="e-ray", setting="cluster", task_id=task_id, kind="needle", length=200,
        session_id=session_id and f"{session_id}-{task_id}", status="completed", score=1.0,
        cost_usd=0.01, input_tokens=100, output_tokens=10, wall_s=2.0, sub_calls=0,
        unpriced=False, answer="1234567", gold="1234567", executor="ray", node=node,
        attempts=attempts,
    )  # fmt: skip


def test_stored_results_from_a_cluster_name_their_nodes_and_retries(
    qtbot: QtBot, store: Store
) -> None:
    records = EvaluationRecords(store)
    setting = parse_setting("cluster:model=openai/good-model,mode=rlm,depth=1")
    records.create("e-ray", SPEC.to_json(), [setting.to_json()], EvaluationOptions().to_json())
    stored = [
        trial("needle-a", NODES[0]),
        trial("needle-b", NODES[1], attempts=2),
        trial("needle-c", "", session_id=None),  # never reached a node: refused
    ]
    for result in stored:
        records.save(result)

    page = open_page(qtbot, store)
    assert page.show_past("e-ray")
    assert ran_on(page) == [NODES[0], f"{NODES[1]} · retried", ""]
    column = RUN_COLUMNS.index("ran on")
    assert "died" in page.runs.item(1, column).toolTip()
    assert page.runs.item(0, column).toolTip() == ""
    assert page.results.places["cluster"].text() == (
        f"ran on {NODES[0]}, {NODES[1]} · 1 trial retried"
    )
    page.close()
