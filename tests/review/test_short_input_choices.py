"""`short_input` speaks to whoever asked for RLM mode on a short input, not to runs that took RLM
mode for another reason: an evaluation's trials and follow-up questions."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from rlm_desktop import paths
from rlm_desktop.engine import Credentials
from rlm_desktop.evaluation.opening import create_evaluation
from rlm_desktop.evaluation.options import EvaluationOptions
from rlm_desktop.evaluation.settings import parse_setting
from rlm_desktop.evaluation.task_sets import TaskSpec, generate
from rlm_desktop.review.health import session_health
from rlm_desktop.store import Store
from tests.evaluation.scripting import MODELS, responder
from tests.review.health_runs import NOTE, QUERY, recorded, rules
from tests.scripted_rlm import repl, scripted
from tests.scripted_server import ScriptedServer

SHORT_INPUT = ("short_input", "direct_would_do")
FINISH = repl('FINAL("Sector 3 holds 9 crates.")', "Done.")
FOLLOW_UP = "And how many does sector 4 hold?"


@pytest.fixture
def store() -> Iterator[Store]:
    """The test's own session database."""
    opened = Store(paths.database_path())
    yield opened
    opened.close()


def no_key(model: str, api_base: str | None) -> Credentials:
    return Credentials()


async def test_an_evaluation_trial_in_rlm_mode_on_a_short_task_is_not_flagged(
    store: Store,
) -> None:
    server = ScriptedServer(models=MODELS).start()
    spec = TaskSpec(kinds=("needle",), lengths=(200,), seed=5, count=1)
    server.respond_with(responder(generate(spec)))
    try:
        evaluation = create_evaluation(
            store,
            spec,
            [parse_setting("good:model=openai/good-model,mode=rlm,depth=1")],
            EvaluationOptions(api_base=server.base_url),
            folders=paths.engine_folders(),
            credentials=no_key,
        )
        (trial,) = await evaluation.run()
    finally:
        server.stop()
    assert trial.status == "completed"
    assert trial.session_id is not None
    session = store.session(trial.session_id)["session"]
    assert (session["mode"], session["settings"]["evaluation_id"]) == (
        "rlm",
        evaluation.evaluation_id,
    )
    assert SHORT_INPUT not in rules(session_health(store, trial.session_id))


async def test_a_user_who_chose_rlm_for_a_short_input_is_still_told(
    store: Store, scripted_server: ScriptedServer
) -> None:
    session_id = await recorded(
        store, scripted_server, scripted({QUERY: [FINISH]}), documents=[NOTE], mode="rlm"
    )
    assert SHORT_INPUT in rules(session_health(store, session_id))


async def test_a_follow_up_that_auto_mode_ran_in_the_repl_is_not_flagged(
    store: Store, scripted_server: ScriptedServer
) -> None:
    script = scripted({QUERY: [FINISH], FOLLOW_UP: [FINISH]})
    first = await recorded(store, scripted_server, script, documents=[NOTE], mode="rlm")
    second = await recorded(
        store,
        scripted_server,
        script,
        documents=[NOTE],
        query=FOLLOW_UP,
        mode="auto",
        follows=first,
    )
    session = store.session(second)["session"]
    assert (session["mode"], session["chosen_mode"], session["status"]) == (
        "auto",
        "rlm",
        "completed",
    )
    assert SHORT_INPUT not in rules(session_health(store, second))
