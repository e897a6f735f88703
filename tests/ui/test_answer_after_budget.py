"""The answer card says so when the model answered after a budget cap had refused some calls."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from rlm_desktop.engine import events as ev
from rlm_desktop.ui.run.answer_panel import AnswerPanel


def test_an_answer_after_refused_calls_is_kept_and_named_so(qtbot: QtBot) -> None:
    panel = AnswerPanel()
    qtbot.addWidget(panel)
    panel.show_result(
        ev.RunFinished(
            run_id="r", status="budget_exceeded", answer="The total is 42.", cost_usd=0.99,
            input_tokens=100, output_tokens=10, turns=3, sub_calls=40, max_depth_reached=1,
            wall_s=2.0, unpriced=False, refused_calls=80,
            error="answered after the budget ran out (80 calls refused)",
        )
    )  # fmt: skip

    assert panel.title.text() == "Answer (the budget refused 80 calls)"
    assert panel.tone == "limit"
    assert "The total is 42." in panel.text.toPlainText()
    assert panel.answer == "The total is 42."
