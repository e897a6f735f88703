"""The trace inspector (*Messages* in a call's details): every request of the call with the
exact messages it sent, each with its tokens, and what came back, read from the saved session."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from rlm_desktop.review.trace import RULE
from rlm_desktop.ui.window.main_window import MainWindow
from tests.qt_fixtures import qloop as qloop
from tests.qt_fixtures import window as window
from tests.review.recorded_runs import FANOUT
from tests.ui.test_replay import recorded


def test_the_messages_tab_shows_what_each_request_of_a_call_sent_and_got(
    window: MainWindow, qtbot: QtBot
) -> None:
    done = recorded(qtbot, FANOUT)
    assert window.open_session(done.session_id)
    ws = window.workspace
    root = ws.model.tree.root
    assert root is not None
    ws.tree_panel.select(root)
    details = ws.details
    details.tabs.setCurrentWidget(details.messages)
    text = details.messages.toPlainText()
    assert text.startswith("Request 1: turn 1 · ")
    assert "Request 2: turn 2 · " in text
    assert f"{RULE} system (~" in text  # the system prompt, as the first request sent it
    assert FANOUT.query in text
    assert "llm_query_batched" in text  # the reply the first turn got back
    assert text.count(f"{RULE} reply {RULE}") == 2

    sub_call = root.children[0]
    ws.tree_panel.select(sub_call)
    text = details.messages.toPlainText()
    assert text.startswith("Request 1: a call · ")
    assert f"{RULE} user (~" in text
    assert "a summary" in text
