"""The runner in process: cancelled mid-way it keeps what finished, and reopened it runs only
the rest; a user's task folder loads its documents as the app does."""

from __future__ import annotations

from pathlib import Path

from rlm_desktop import paths
from rlm_desktop.engine import Credentials
from rlm_desktop.evaluation.opening import create_evaluation, reopen_evaluation
from rlm_desktop.evaluation.options import EvaluationOptions
from rlm_desktop.evaluation.runner import EvaluationEvent, TrialFinished, TrialStarted
from rlm_desktop.evaluation.settings import parse_setting
from rlm_desktop.evaluation.task_sets import TaskSpec, generate
from rlm_desktop.evaluation.user_tasks import user_tasks
from rlm_desktop.store import Store
from tests.evaluation.scripting import MODELS, responder
from tests.scripted_server import ScriptedServer


def no_key(model: str, api_base: str | None) -> Credentials:
    return Credentials()


async def test_cancelled_evaluation_keeps_what_finished_and_resumes_the_rest() -> None:
    server = ScriptedServer(models=MODELS, latency_s=0.2).start()
    spec = TaskSpec(kinds=("needle",), lengths=(200,), seed=5, count=3)
    server.respond_with(responder(generate(spec)))
    settings = [parse_setting("good:model=openai/good-model,mode=rlm,depth=1"),
                parse_setting("model=openai/bad-model,mode=direct")]  # fmt: skip
    options = EvaluationOptions(api_base=server.base_url, concurrency=2)
    store = Store(paths.database_path())
    try:
        evaluation = create_evaluation(
            store, spec, settings, options, folders=paths.engine_folders(), credentials=no_key
        )
        assert [s.name for s in evaluation.settings] == ["good", "bad-model/direct"]
        seen: list[EvaluationEvent] = []

        def stop_after_two(event: EvaluationEvent) -> None:
            seen.append(event)
            if sum(isinstance(e, TrialFinished) for e in seen) == 2:
                evaluation.cancel()

        evaluation.add_listener(stop_after_two)
        first = await evaluation.run()
        assert evaluation.cancelled
        assert len(first) == 2
        assert len(evaluation.pending()) == 4
        started = [e.session_id for e in seen if isinstance(e, TrialStarted)]
        cut_short = set(started) - {r.session_id for r in first}
        for session_id in cut_short:
            assert store.session(session_id)["session"]["status"] == "cancelled"

        again = reopen_evaluation(
            store, evaluation.evaluation_id, {}, folders=paths.engine_folders(), credentials=no_key
        )
        assert len(again.pending()) == 4
        results = await again.run()
    finally:
        store.close()
        server.stop()
    assert not again.cancelled
    assert len(results) == 6
    assert {(r.setting, r.task_id): r.session_id for r in results[:2]} == {
        (r.setting, r.task_id): r.session_id for r in first
    }
    by_setting = {
        name: [r.score for r in results if r.setting == name]
        for name in ("good", "bad-model/direct")
    }
    assert by_setting == {"good": [1.0] * 3, "bad-model/direct": [0.0] * 3}
    assert all(r.status == "completed" for r in results)


def test_user_task_folder_loads_document_paths(tmp_path: Path) -> None:
    folder = tmp_path / "suite"
    folder.mkdir()
    (folder / "notes.md").write_text("# Notes\nThe launch is on 12 May.\n")
    (folder / "tasks.jsonl").write_text(
        '{"id": "launch", "question": "When is the launch?", "answer": "12 May", '
        '"documents": ["notes.md", {"name": "extra.txt", "text": "nothing here"}]}\n'
    )
    (task,) = user_tasks(folder)
    assert (task.id, task.kind, task.scoring, task.answer) == ("launch", "user", "exact", "12 May")
    assert [name for name, _text in task.documents] == ["notes.md", "extra.txt"]
    assert "12 May" in task.documents[0][1]
    assert task.length > 0
