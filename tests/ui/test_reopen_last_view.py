"""A restart reopens the view the window was left in: the saved session in view, read-only as
the Sessions dialog opens it (also the run that had just finished), or a new run's question."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from rlm_desktop import paths
from rlm_desktop.store import Store
from rlm_desktop.ui.window.detail_tabs import CALL
from rlm_desktop.ui.window.main_window import MainWindow
from tests.qt_fixtures import opened_window
from tests.scripted_rlm import repl, scripted
from tests.scripted_server import ScriptedServer
from tests.ui.test_compare_window import _record_lasting
from tests.ui.test_end_to_end import memos, prepare


def _reviewing(window: MainWindow) -> str:
    run = window.workspace.model.tree.run
    return run.run_id if window.workspace.reviewing is not None else ""


def test_a_session_under_review_is_reopened(window: MainWindow, qtbot: QtBot) -> None:
    _record_lasting("reviewed-run", 3.0, 1_700_000_000.0)
    assert window.open_session("reviewed-run")
    window.close()
    with opened_window(qtbot) as again:
        qtbot.waitUntil(lambda: _reviewing(again) == "reviewed-run", timeout=10_000)
        assert again.workspace.review_bar.isVisibleTo(again)
        assert again.workspace.model.tree.root is not None


def test_the_run_just_finished_is_reopened_read_only(
    window: MainWindow, qtbot: QtBot, scripted_server: ScriptedServer
) -> None:
    scripted_server.respond_with(scripted(root=[repl("FINAL('7 zebrafish')")]))
    prepare(window, qtbot, scripted_server, "How many zebrafish?", memos(1))
    assert window.start_run()
    qtbot.waitUntil(lambda: not window.starter.running, timeout=60_000)
    finished = window.workspace.model.tree.run.run_id
    window.close()
    with opened_window(qtbot) as again:
        qtbot.waitUntil(lambda: _reviewing(again) == finished, timeout=10_000)
        assert "7 zebrafish" in again.workspace.answer.text.toPlainText()


def test_a_new_runs_question_comes_back(window: MainWindow, qtbot: QtBot) -> None:
    window.workspace.controls.question.setPlainText("Which memo names the launch date?")
    window.close()
    with opened_window(qtbot) as again:
        question = again.workspace.controls.question
        qtbot.waitUntil(lambda: question.toPlainText() != "", timeout=10_000)
        assert question.toPlainText() == "Which memo names the launch date?"
        assert again.workspace.reviewing is None


def test_a_session_deleted_since_is_passed_over(window: MainWindow, qtbot: QtBot) -> None:
    _record_lasting("deleted-run", 3.0, 1_700_000_000.0)
    assert window.open_session("deleted-run")
    window.close()
    store = Store(paths.database_path())
    store.delete("deleted-run")
    store.close()
    with opened_window(qtbot) as again:
        qtbot.waitUntil(lambda: again.painted, timeout=10_000)
        qtbot.wait(200)
        assert again.workspace.reviewing is None
        assert not again.workspace.controls.error.isVisibleTo(again)


def test_the_session_comes_back_at_the_call_and_tab_it_was_left_at(
    window: MainWindow, qtbot: QtBot
) -> None:
    _record_lasting("left-at-a-call", 3.0, 1_700_000_000.0)
    assert window.open_session("left-at-a-call")
    tree = window.workspace.model.tree
    child = next(node for node in tree.walk() if node.parent is not None)
    window.workspace.tree_panel.select(child)
    window.workspace.detail_tabs.show_tab(CALL)
    window.close()
    with opened_window(qtbot) as again:
        qtbot.waitUntil(lambda: _reviewing(again) == "left-at-a-call", timeout=10_000)
        qtbot.waitUntil(lambda: again.workspace.detail_tabs.currentIndex() == CALL, timeout=5000)
        chosen = again.workspace.tree_panel.selected()
        assert chosen is not None
        assert chosen.call_id == child.call_id


def test_a_damaged_memory_of_the_view_is_passed_over(window: MainWindow, qtbot: QtBot) -> None:
    _record_lasting("damaged-memory", 3.0, 1_700_000_000.0)
    assert window.open_session("damaged-memory")
    window.close()
    window.prefs.set_many({"window/last_call": "../../etc/passwd", "window/last_tab": "99"})
    with opened_window(qtbot) as again:
        qtbot.waitUntil(lambda: _reviewing(again) == "damaged-memory", timeout=10_000)
        assert 0 <= again.workspace.detail_tabs.currentIndex() < again.workspace.detail_tabs.count()


def test_the_workspaces_documents_survive_a_session_reopened_over_them(
    window: MainWindow, qtbot: QtBot
) -> None:
    """At start the workspace's documents load while the last session reopens: they belong to
    the new run's list, which "Back to a new run" brings back, not to the saved session's."""
    _record_lasting("over-the-documents", 3.0, 1_700_000_000.0)
    window.workspace.documents.add_paths(memos(3))
    qtbot.waitUntil(lambda: not window.workspace.documents.loading, timeout=20_000)
    assert window.open_session("over-the-documents")
    window.close()
    with opened_window(qtbot) as again:
        qtbot.waitUntil(lambda: _reviewing(again) == "over-the-documents", timeout=10_000)
        documents = again.workspace.documents
        qtbot.waitUntil(lambda: not documents.loading, timeout=20_000)
        again.leave_review()
        assert len(documents.documents()) == 3
