"""`make screenshots`: the real application under Xvfb, through a scripted run, photographed.

Starts Xvfb (unless a display is already set), a scripted OpenAI-compatible server in this
process, and the main window over a fresh data folder with an in-memory keyring. It runs a
question over the sample log and writes PNGs of the window while the run is going, when it has
finished, the session browser and the settings to `docs/screenshots/`.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "screenshots"
SIZE = (1440, 900)
LARGE_SIZE = (1280, 720)
"""A 2560×1440 screen at twice the scale, in logical pixels."""


def _die_with_parent() -> None:
    """Ask Linux to end Xvfb if this process dies without cleaning up (a crash)."""
    try:
        import ctypes
        import signal

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        return


def start_xvfb(large: bool = False) -> subprocess.Popen[bytes] | None:
    """Start Xvfb on a free display and export DISPLAY; None when a display is already set.
    `large` makes it a 2560×1440 screen."""
    if os.environ.get("DISPLAY") and not os.environ.get("RLM_SCREENSHOTS_OWN_XVFB"):
        return None
    if shutil.which("Xvfb") is None:
        sys.exit("Xvfb is missing: apt-get install xvfb (and the libxcb-* set in docs/development.md)")
    read, write = os.pipe()
    server = subprocess.Popen(
        [
            "Xvfb",
            "-displayfd",
            str(write),
            "-screen",
            "0",
            "2560x1440x24" if large else f"{SIZE[0] + 160}x{SIZE[1] + 100}x24",
            "-nolisten",
            "tcp",
        ],
        pass_fds=(write,),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        preexec_fn=_die_with_parent,
    )
    os.close(write)
    with os.fdopen(read) as pipe:
        number = pipe.readline().strip()
    os.environ["DISPLAY"] = f":{number}"
    return server


def responder(sub_delay_s: float) -> Any:
    """Scripted replies: look at the log, fan out over chunks, dig into one, answer."""
    from tests.scripted_rlm import scripted
    from tests.scripted_server import Reply

    turn_1 = (
        "Let me look at the shape of the log first.\n```repl\n"
        "log = context if isinstance(context, str) else context[0]\nlines = log.splitlines()\n"
        "print(len(lines), 'lines')\nprint(lines[0])\n"
        "errors = [l for l in lines if ' ERROR ' in l]\nprint(len(errors), 'ERROR lines')\n```"
    )
    turn_2 = (
        "I will ask a sub-model about each hour-long chunk, and dig into the payments errors.\n"
        "```repl\nchunks = ['\\n'.join(lines[i:i + 400]) for i in range(0, len(lines), 400)]\n"
        "notes = llm_query_batched([f'List incidents (start, end, cause) in:\\n{c}' "
        "for c in chunks])\nfor n, note in enumerate(notes):\n    print(n, note)\n"
        "payments = rlm_query('When did the payments pool exhaustion start and end?', "
        "context='\\n'.join(l for l in lines if 'payments' in l))\nprint(payments)\n```"
    )
    answer = (
        "Five incidents:\\n1. payments pool exhausted 02:13:05-02:41:50\\n"
        "2. auth certificate expired 09:00:00-09:12:30\\n3. search-3 OOM-killed at 14:37:22\\n"
        "4. api-gateway latency spike 18:04:30-18:20:00 (deploy v2.41.0)\\n"
        "5. payments upload failed at 21:47:09 (507, /data/receipts full)"
    )
    cited = (
        "sources=[next(l for l in lines if 'PoolTimeout' in l), "
        "next(l for l in lines if ' 507 ' in l)]"
    )
    turn_3 = f'I have all five.\n```repl\nFINAL("{answer}", {cited})\n```'
    child = (
        "```repl\nfirst = [l for l in context.splitlines() if 'PoolTimeout' in l]\n"
        "print(first[0][:19], first[-1][:19])\n"
        "FINAL(llm_query('Summarise the outage window: ' + first[0] + first[-1]))\n```"
    )

    def sub(prompt: str) -> str | Reply:
        if prompt.startswith("Summarise the outage"):
            return "02:13:05 to 02:41:50 UTC"
        return Reply(
            content=f"No incident in this chunk ({len(prompt):,} characters read).",
            delay_s=sub_delay_s,
        )

    child_prompt = "When did the payments pool exhaustion start and end?"
    return scripted({child_prompt: [child]}, sub, root=[turn_1, turn_2, turn_3])


async def pump(seconds: float) -> None:
    """Let the window work for a while."""
    await asyncio.sleep(seconds)


async def wait_for(condition: Any, limit_s: float = 60.0) -> None:
    """Wait until `condition()` is true."""
    deadline = time.monotonic() + limit_s
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("the scripted run did not get there in time")
        await asyncio.sleep(0.05)


def save(widget: Any, name: str) -> Path:
    """Write a PNG of `widget`."""
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"{name}.png"
    widget.grab().save(str(path))
    print(f"wrote {path.relative_to(ROOT)}")
    return path


async def scripted_run(
    window: Any, server: Any, question: str, delay: float, shoot: str | None
) -> None:
    """Run `question` over the sample log; photograph it mid-run when `shoot` is given."""
    from rlm_desktop.paths import resource

    server.respond_with(responder(delay))
    ws = window.workspace
    controls = ws.controls
    controls.endpoint.setCurrentIndex(controls.endpoint.findData(server.base_url))
    controls.model.setEditText("openai/test-model")
    controls.mode.setCurrentIndex(controls.mode.findData("rlm"))
    controls.question.setPlainText(question)
    if not ws.documents.documents():
        ws.documents.add_paths([resource("samples", "server.log")])
        await wait_for(lambda: not ws.documents.loading)
    window.start_run()
    if shoot:
        await wait_for(lambda: ws.model.tree.sub_calls_running >= 6)
        await pump(0.8)
        save(window, shoot)
    await wait_for(lambda: not window.starter.running)


async def main_async(window: Any, server: Any) -> None:
    """The photo session."""
    from rlm_desktop.paths import resource

    ws = window.workspace
    save(window, "welcome")
    window.prefs.set_base_url("local", server.base_url)
    window.starter.apply_preferences()
    window.pages.setCurrentWidget(ws)
    await window.starter.refresh_models()
    await scripted_run(window, server, "How many ERROR lines are in the log?", 0.0, None)
    await scripted_run(window, server, "Which request returned HTTP 507, and when?", 0.0, None)
    ws.documents.add_paths([resource("samples", "memos")])
    await wait_for(lambda: not ws.documents.loading)
    ws.documents.select_row(0)
    await scripted_run(
        window,
        server,
        "Which incidents happened in this log, and when did each start and end?",
        2.5,
        "running",
    )
    root = ws.model.tree.root
    ws.tree_panel.select(root)
    await pump(0.5)
    save(window, "finished")
    await wait_for(lambda: bool(ws.answer.sources))
    ws.answer.choose_source(1)
    await pump(0.5)
    save(window, "answer-sources")
    child = next(n for n in ws.model.tree.walk() if n.kind == "rlm" and n.level == 1)
    ws.tree_panel.select(child)
    ws.detail_tabs.call_chosen()  # as a click in the tree does: the call's console
    await pump(0.3)
    save(window, "child-call")
    dialog = window.show_sessions()
    await pump(0.5)
    save(dialog, "sessions")
    dialog.reject()
    settings = window.show_settings("providers")
    await pump(0.5)
    save(settings, "settings")
    settings.tabs.setCurrentIndex(settings.PAGES.index("defaults"))
    await pump(0.3)
    save(settings, "settings-defaults")
    settings.tabs.setCurrentWidget(settings.sandbox)
    await pump(1.0)
    save(settings, "settings-sandbox")
    settings.tabs.setCurrentWidget(settings.profiles)
    await pump(0.3)
    save(settings, "settings-profiles")
    settings.tabs.setCurrentWidget(settings.appearance)
    settings.appearance.theme.setCurrentIndex(settings.appearance.theme.findData("dark"))
    settings.accept()
    ws.tree_panel.select(root)
    await pump(0.5)
    save(window, "finished-dark")
    await the_first_hour(window, server)
    await review_windows(window)
    await batches_view(window, server)
    await recorded_run(window)


async def recorded_run(window: Any) -> None:
    """The welcome page's recorded run, opened and played at its readable pace, part-way."""
    window.resize(*SIZE)
    window.watch_recording()
    opening = window.trajectories.opening
    await wait_for(lambda: opening is not None and opening.done())
    await pump(24.0)  # the root's notes on the memos are in, its child is at work
    window.workspace.replay.pause()
    await pump(0.3)
    save(window, "imported-run")
    window.leave_review()


async def review_windows(window: Any) -> None:
    """What a reviewer and a presenter open: the timeline, a replay mid-way and presented, the
    conversations, the dashboard, two runs compared, and the evaluation page (the batches
    follow, `batches_view`)."""
    from rlm_desktop.paths import database_path
    from rlm_desktop.store import Store

    window.resize(*SIZE)
    store = Store(database_path())
    try:
        sessions = {row["query"]: row["id"] for row in store.list_sessions()}
    finally:
        store.close()
    incidents = sessions["Which incidents happened in this log, and when did each start and end?"]
    first = sessions["How many ERROR lines are in the log?"]
    window.open_session(incidents)
    window.timeline_action.trigger()
    await pump(1.5)
    save(window, "timeline")
    window.timeline_action.trigger()
    window.replay_session(incidents)
    await pump(1.2)
    window.workspace.replay.pause()
    await pump(0.3)
    save(window, "replay")
    window.presentation_action.trigger()
    await pump(1.5)
    save(window, "presentation")
    window.presentation_action.trigger()
    await pump(0.8)
    window.conversations_action.setChecked(True)
    window.open_session(incidents)
    await pump(1.0)
    save(window, "conversations")
    window.conversations_action.setChecked(False)
    dashboard = window.show_dashboard()
    await pump(1.5)
    save(dashboard, "dashboard")
    dashboard.close()
    compared = window.compare_sessions(first, incidents)
    await pump(1.5)
    save(compared, "compare")
    compared.close()
    evaluation = window.show_evaluation()
    await pump(0.8)
    save(evaluation, "evaluation")
    evaluation.close()


BATCH_ROWS = (
    ("heron", "What is Project Heron's budget, and when does it go live?", "memos",
     "EUR 950,000, going live in September 2025 (the 5 March memo revised the 8 January plan)."),
    ("utrecht", "Which warehouse closes, and on what date?", "memos",
     "Utrecht, on 31 August 2025, after a two-month lease extension."),
    ("hub", "Which hub handled the most parcels in Q1 2025?", "kestrel",
     "Rotterdam, with 897,270 parcels (the Hubs sheet)."),
    ("pilot", "Where will the routing pilot run, and from when?", "kestrel",
     "Ghent, from 2 June 2025 (slide 3's speaker notes)."),
    ("scans", "What do the scanned delivery notes say?", "scans", ""),
)  # fmt: skip
"""The screenshot's batch: a question, its documents and the scripted answer per row (the
last row's folder holds nothing loadable)."""


async def batches_view(window: Any, server: Any) -> None:
    """A batch of questions over the samples, run as `rlm-desktop batch` runs it, then the
    Batches view with a row chosen."""
    from rlm_desktop import paths
    from rlm_desktop.batch.opening import create_batch, plan_batch
    from rlm_desktop.commands.run import credentials_for
    from rlm_desktop.evaluation.options import EvaluationOptions
    from rlm_desktop.evaluation.settings import parse_setting
    from rlm_desktop.store import Store
    from tests.scripted_rlm import repl, scripted

    folder = Path(tempfile.mkdtemp(prefix="rlm-batch-"))
    for name in ("memos", "kestrel"):
        shutil.copytree(paths.resource("samples", name), folder / name)
    (folder / "scans").mkdir()
    (folder / "scans" / "notes.bin").write_bytes(bytes(range(256)) * 8)
    lines = ["id,question,documents"] + [f'{r},"{q}",{d}' for r, q, d, _a in BATCH_ROWS]
    questions = folder / "questions.csv"
    questions.write_text("\n".join(lines) + "\n", encoding="utf-8")
    server.respond_with(scripted({q: [repl(f"FINAL({a!r})")] for _r, q, _d, a in BATCH_ROWS if a}))
    options = EvaluationOptions(
        api_base=server.base_url, prices={"openai/test-model": (0.25e-6, 2e-6)}, concurrency=2,
        max_cost_usd=1.0,
    )  # fmt: skip
    setting = parse_setting("rows:model=openai/test-model,mode=rlm,depth=1")
    store = Store(paths.database_path())
    try:
        plan = plan_batch(questions, setting, options, folders=paths.engine_folders())
        batch = create_batch(
            store, plan, folders=paths.engine_folders(), credentials=credentials_for
        )
        await batch.run()
    finally:
        store.close()
    view = window.show_batches()
    view.table.selectRow(0)
    await pump(0.8)
    save(view, "batches")
    view.close()


async def office_files(window: Any) -> None:
    """The samples' workbook, deck and mail export, the deck previewed at the slide whose notes
    hold the decision."""
    from rlm_desktop.paths import resource

    documents = window.workspace.documents
    documents.clear()
    documents.add_paths([resource("samples", "kestrel")])
    await wait_for(lambda: not documents.loading)
    names = [entry.name for entry in documents.model.entries]
    deck = names.index("kestrel/heron-steering.pptx")
    documents.select_row(deck)
    documents.parts.setCurrentIndex(2)
    documents.parts.activated.emit(2)
    await pump(0.5)
    save(documents, "documents-parts")


async def the_first_hour(window: Any, server: Any) -> None:
    """What a newcomer meets: a small screen, a filtered tree, skipped files, a failed run."""
    from tests.scripted_server import Reply

    ws = window.workspace
    settings = window.show_settings("appearance")
    settings.appearance.theme.setCurrentIndex(settings.appearance.theme.findData("light"))
    settings.accept()
    ws.tree_panel.filter.setText("outage window")
    await pump(0.8)
    save(window, "filtered-tree")
    ws.tree_panel.filter.clear()
    window.resize(1024, 640)
    await pump(0.8)
    save(window, "small-screen")
    window.resize(*SIZE)
    ws.documents.clear()
    ws.documents.add_paths([messy_folder()])
    await wait_for(lambda: not ws.documents.loading)
    ws.documents.skipped.toggle.click()
    await pump(0.5)
    save(ws.documents, "skipped-files")
    await office_files(window)
    server.respond_with(lambda _request: Reply(status=400, content="context length exceeded"))
    ws.controls.question.setPlainText("Which incidents happened in this log?")
    window.start_run()
    await wait_for(lambda: ws.answer.isVisible())
    await pump(0.5)
    save(window, "failed-run")


def messy_folder() -> Path:
    """A folder as people have them: notes, a log, and files the loader must leave out."""
    folder = Path(tempfile.mkdtemp(prefix="rlm-messy-")) / "project"
    folder.mkdir()
    (folder / "notes.md").write_text("# Notes\n\nThe launch moved to March.\n", encoding="utf-8")
    (folder / "server.log").write_text("2025-03-14T02:13:05Z ERROR payments pool\n" * 40)
    (folder / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8)
    (folder / "report.pdf").write_bytes(b"%PDF-1.7\n% damaged in transfer\n" + b"\x00" * 64)
    (folder / "dump.bin").write_bytes(b"\x00\x01\x02" * 2000)
    (folder / ".gitignore").write_text("build/\n", encoding="utf-8")
    (folder / "build").mkdir()
    (folder / "build" / "out.txt").write_text("generated\n", encoding="utf-8")
    return folder


async def large_screen(window: Any, server: Any) -> None:
    """The same run on a 2560×1440 screen at twice the scale, maximised: the answer, then a
    call's console."""
    ws = window.workspace
    window.showMaximized()
    window.prefs.set_base_url("local", server.base_url)
    window.starter.apply_preferences()
    window.pages.setCurrentWidget(ws)
    await window.starter.refresh_models()
    await scripted_run(
        window,
        server,
        "Which incidents happened in this log, and when did each start and end?",
        0.5,
        None,
    )
    await pump(1.0)
    save(window, "large-answer")
    ws.tree_panel.select(ws.model.tree.root)
    ws.detail_tabs.call_chosen()
    await pump(0.5)
    save(window, "large-console")


def main() -> int:
    """Take the screenshots (`--large`: those of a 2560×1440 screen at twice the scale); the
    process exit code."""
    large = "--large" in sys.argv[1:]
    if large:
        os.environ["QT_SCALE_FACTOR"] = "2"
    xvfb = start_xvfb(large)
    home = tempfile.mkdtemp(prefix="rlm-screenshots-")
    os.environ.update(
        QT_QPA_PLATFORM="xcb", RLM_DESKTOP_HOME=home, LITELLM_LOCAL_MODEL_COST_MAP="True"
    )
    try:
        import keyring
        import qasync

        from rlm_desktop.ui.app import create_application
        from rlm_desktop.ui.window.main_window import MainWindow
        from tests.memory_keyring import MemoryKeyring
        from tests.scripted_server import ScriptedServer

        keyring.set_keyring(MemoryKeyring())
        app = create_application([sys.argv[0]])
        loop = qasync.QEventLoop(app)
        asyncio.set_event_loop(loop)
        server = ScriptedServer(models=("test-model", "llama-3.1-8b-instruct")).start()
        window = MainWindow(warm_up=False)
        window.resize(*(LARGE_SIZE if large else SIZE))
        window.show()
        try:
            with loop:
                loop.run_until_complete(
                    large_screen(window, server) if large else main_async(window, server)
                )
        finally:
            window.shutdown()
            server.stop()
    finally:
        if xvfb is not None:
            xvfb.terminate()
            xvfb.wait(timeout=10)
        shutil.rmtree(home, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
