"""A model on the user's own server runs under the starter's dollar cap: counted at $0, and said."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from rlm_desktop.ui.window.main_window import MainWindow
from tests.scripted_rlm import repl, scripted
from tests.scripted_server import ScriptedServer
from tests.ui.test_end_to_end import memos, prepare


def test_an_unpriced_local_model_runs_and_the_user_is_told(
    window: MainWindow, qtbot: QtBot, scripted_server: ScriptedServer
) -> None:
    scripted_server.respond_with(scripted(root=[repl("FINAL('7 zebrafish')")]))
    prepare(window, qtbot, scripted_server, "How many zebrafish?", memos(1))
    assert window.workspace.controls.request().budget.max_cost_usd  # the starter's cap is on
    assert window.start_run()
    notice = window.workspace.controls.error
    qtbot.waitUntil(lambda: "counted at $0" in notice.text(), timeout=20_000)
    assert notice.text().startswith("openai/test-model on your own server")
    assert notice.isVisibleTo(window)
    assert notice.wordWrap()  # the whole sentence, wrapped
    qtbot.waitUntil(
        lambda: "7 zebrafish" in window.workspace.answer.text.toPlainText(), timeout=60_000
    )
    assert scripted_server.chat_requests()


def test_a_price_the_user_gave_wins_and_nothing_is_assumed(
    window: MainWindow, qtbot: QtBot, scripted_server: ScriptedServer
) -> None:
    from rlm_desktop.engine.pricing import parse_prices
    from rlm_desktop.ui.run.starter import build_config, free_local_models

    prepare(window, qtbot, scripted_server, "How many zebrafish?", memos(1))
    request = window.workspace.controls.request()
    assert free_local_models(request, {}) == ["openai/test-model"]
    given = "openai/test-model = 2.5, 10"
    assert free_local_models(request, parse_prices(given)) == []
    assert (
        build_config(request, given).prices["openai/test-model"]
        == parse_prices(given)["openai/test-model"]
    )
    assert build_config(request, "").prices["openai/test-model"] == (0.0, 0.0)
