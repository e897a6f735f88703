"""The answer card tells how the run ended: its title, icon and colours follow the status."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from PySide6.QtGui import QPalette
from pytestqt.qtbot import QtBot

from rlm_desktop.engine import events as ev
from rlm_desktop.ui.appearance.theme import LIGHT, style_sheet
from rlm_desktop.ui.run.answer_panel import AnswerPanel
from rlm_desktop.ui.window.main_window import MainWindow
from tests.scripted_server import Reply, ScriptedServer


def _finished(status: ev.RunStatus, answer: str = "", error: str | None = None) -> ev.RunFinished:
    """As the engine ends a run: only a completed one has an answer; another keeps the model's
    last words (`RunFinished.answer_kind`)."""
    kind: ev.AnswerKind = "answer" if status == "completed" else "last_reply" if answer else "none"
    return ev.RunFinished(
        answer_kind=kind,
        run_id="r",
        status=status,
        answer=answer,
        cost_usd=0.01,
        input_tokens=100,
        output_tokens=10,
        turns=2,
        sub_calls=3,
        max_depth_reached=1,
        wall_s=2.0,
        unpriced=False,
        error=error,
    )


@pytest.mark.parametrize(
    ("status", "title", "tone", "colour"),
    [
        ("completed", "Answer", "ok", LIGHT.ok),
        ("cancelled", "No answer (cancelled)", "stopped", LIGHT.warning),
        ("max_turns", "No answer (turn limit)", "limit", LIGHT.warning),
        ("budget_exceeded", "No answer (over budget)", "limit", LIGHT.warning),
        ("timeout", "No answer (timed out)", "limit", LIGHT.warning),
        ("error", "No answer (error)", "error", LIGHT.error),
    ],
)
def test_the_card_follows_how_the_run_ended(
    qtbot: QtBot, status: ev.RunStatus, title: str, tone: str, colour: str
) -> None:
    panel = AnswerPanel()
    qtbot.addWidget(panel)
    panel.setStyleSheet(style_sheet(LIGHT))
    panel.show_result(
        _finished(status, answer="42", error=None if status == "completed" else "why")
    )
    assert panel.title.text() == title
    assert panel.tone == tone
    assert panel.property("tone") == tone
    assert not panel.icon.pixmap().isNull()
    assert panel.title.palette().color(QPalette.ColorRole.WindowText).name() == colour
    assert panel.palette().color(QPalette.ColorRole.Window).name() == (
        LIGHT.answer_bg if status == "completed" else LIGHT.card
    )
    assert ("why" in panel.text.toPlainText()) is (status != "completed")


def test_a_new_run_after_a_failure_starts_green_again(qtbot: QtBot) -> None:
    panel = AnswerPanel()
    qtbot.addWidget(panel)
    panel.setStyleSheet(style_sheet(LIGHT))
    panel.show_result(_finished("error", error="HTTP 500"))
    panel.clear()
    panel.show_result(_finished("completed", answer="42"))
    assert panel.title.palette().color(QPalette.ColorRole.WindowText).name() == LIGHT.ok


def test_markup_in_an_answer_or_an_error_is_shown_as_text_not_rendered(qtbot: QtBot) -> None:
    """A model's answer keeps its Markdown but not raw HTML; a provider's error is plain text."""
    panel = AnswerPanel()
    qtbot.addWidget(panel)
    page = "the server's reply is not a chat completion ('<html><body>Welcome</body></html>')"
    panel.show_result(_finished("error", error=page))
    assert panel.text.toPlainText() == page

    answer = "**Three** incidents: see <b>the log</b> and model_name_v2 (not *italic*)"
    answered_late = _finished("budget_exceeded", answer=answer, error="HTTP 404: gpt_4_x not found")
    panel.show_result(dataclasses.replace(answered_late, answer_kind="answer", refused_calls=2))
    shown = panel.text.toPlainText()
    assert shown.startswith("Three incidents: see <b>the log</b> and model_name_v2")
    assert shown.endswith("HTTP 404: gpt_4_x not found")
    first = panel.text.document().begin().begin().fragment()
    assert (first.text(), first.charFormat().font().bold()) == ("Three", True)  # Markdown kept


@pytest.mark.parametrize(
    ("kind", "label"),
    [
        ("last_reply", "The model's last words, not an answer:"),
        ("draft", 'The model\'s draft (answer["content"]), not a final answer:'),
    ],
)
def test_a_run_without_an_answer_says_why_first_then_a_labelled_excerpt(
    qtbot: QtBot, kind: ev.AnswerKind, label: str
) -> None:
    panel = AnswerPanel()
    qtbot.addWidget(panel)
    rambling = "The ledger shows amounts.\n" * 1300  # 33 KB of a small model repeating itself
    finished = dataclasses.replace(
        _finished("timeout", answer=rambling, error="the run passed its 600 s time limit"),
        answer_kind=kind,
    )
    panel.show_result(finished)

    why, left = panel.text.toPlainText().split("\n\n", 1)
    assert why == "the run passed its 600 s time limit"
    assert left.startswith(f"{label}\nThe ledger shows amounts.")
    assert len(left) < 800
    assert panel.title.text() == "No answer (timed out)"


def test_a_failure_after_retries_says_so_on_its_card(
    window: MainWindow, qtbot: QtBot, scripted_server: ScriptedServer, tmp_path: Path
) -> None:
    from tests.ui.test_end_to_end import prepare
    from tests.ui.test_follow_up import run_and_wait

    scripted_server.respond_with(
        lambda _request: Reply(status=500, content="down", headers={"Retry-After": "0"})
    )
    notes = tmp_path / "notes.txt"
    notes.write_text("a note\n", encoding="utf-8")
    prepare(window, qtbot, scripted_server, "What does the note say?", [notes])
    run_and_wait(window, qtbot)
    card = window.workspace.answer
    retried = sum(node.retries for node in window.workspace.model.tree.walk())
    assert retried > 0
    assert card.tone == "error"
    assert f"{retried:,} requests were sent again before the run gave up" in (
        card.text.toPlainText()
    )


def test_an_image_the_answer_names_is_never_loaded(qtbot: QtBot, tmp_path: Path) -> None:
    """An answer is the model's, and the model read untrusted documents: a Markdown image of a
    local file must not put that file on the screen (a QTextBrowser would load it)."""
    from PySide6.QtCore import QUrl
    from PySide6.QtGui import QColor, QImage

    picture = tmp_path / "private.png"
    image = QImage(40, 40, QImage.Format.Format_RGB32)
    image.fill(QColor("red"))
    assert image.save(str(picture))
    url = QUrl.fromLocalFile(str(picture))
    panel = AnswerPanel()
    qtbot.addWidget(panel)
    panel.show_result(
        _finished("completed", answer=f"Here: ![x]({url.toString()}) and ![y](private.png)")
    )
    panel.grab()  # laying the answer out is when Qt reads the files its images name
    assert panel.text.toPlainText() == (f"Here: [image: {url.toString()}] and [image: private.png]")
    # No image is left to lay out (asking the document for one would itself read the file).
    assert "\ufffc" not in panel.text.toPlainText()


def test_a_short_answer_keeps_its_figures_under_it_and_a_long_one_takes_the_room(
    qtbot: QtBot,
) -> None:
    """A new user saw a card 60% empty under a short answer, its figures at the bottom."""
    panel = AnswerPanel()
    qtbot.addWidget(panel)
    panel.resize(500, 420)
    panel.show()
    panel.show_result(_finished("completed", "42"))
    qtbot.wait(20)
    assert panel.stats.geometry().top() < panel.height() / 2  # right under the answer
    assert panel.text.verticalScrollBar().maximum() == 0
    long = "\n\n".join(f"{n}. a finding with its date and cause" for n in range(60))
    panel.show_result(_finished("completed", long))
    qtbot.wait(20)
    assert panel.text.height() >= 0.6 * 420  # the room goes to the answer, which scrolls
    assert panel.text.verticalScrollBar().maximum() > 0
