"""`rlm-desktop run` as a user runs it: a subprocess, its exit code, stdout and stderr."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.cli import interrupt_once, run_cli, start_cli, unprivileged
from tests.engine.scripting import (
    ANNOUNCE_PID,
    QUERY,
    TEST_MODEL,
    UNKNOWN_HOST_URL,
    announced_pids,
    closed_port_url,
    repl,
    scripted,
    still_alive,
)
from tests.scripted_server import Reply, ScriptedServer

DESIGN_KEYS = {
    "session_id",
    "status",
    "answer",
    "cost_usd",
    "input_tokens",
    "output_tokens",
    "turns",
    "sub_calls",
    "max_depth_reached",
    "wall_s",
}


Cli = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def cli(isolated_home: Path) -> Cli:
    """`rlm-desktop run *args` in the test's own data folder; `env` adds variables."""

    def run(
        *args: str, env: dict[str, str] | None = None, **options: object
    ) -> subprocess.CompletedProcess[str]:
        return run_cli("run", *args, home=isolated_home, env=env, timeout=60, **options)

    return run


def served(server: ScriptedServer, *args: str) -> list[str]:
    return ["--model", TEST_MODEL, "--api-base", server.base_url, "--query", QUERY, *args]


def assert_one_line_error(result: subprocess.CompletedProcess[str], mentions: str) -> None:
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    (line,) = result.stderr.splitlines()
    assert line.startswith("rlm-desktop run: ")
    assert mentions in line


@pytest.fixture
def document(tmp_path: Path) -> Path:
    path = tmp_path / "ledger.txt"
    path.write_text("".join(f"line {i}: amount {i % 7}\n" for i in range(300)), encoding="utf-8")
    return path


def missing(folder: Path) -> Path:
    return folder / "no-such-file.txt"


def binary_content(folder: Path) -> Path:
    path = folder / "blob.txt"
    path.write_bytes(bytes(range(256)) * 20)
    return path


def binary_kind(folder: Path) -> Path:
    path = folder / "scan.gif"  # a kind of file that is never read (images are OCR'd; GIFs not)
    path.write_bytes(b"GIF89a" + bytes(200))
    return path


def pipe(folder: Path) -> Path:
    path = folder / "pipe.txt"
    os.mkfifo(path)
    return path


def empty_folder(folder: Path) -> Path:
    path = folder / "empty"
    path.mkdir()
    return path


def below_a_file(folder: Path) -> Path:
    (folder / "plain.txt").write_text("text", encoding="utf-8")
    return folder / "plain.txt" / "inside.txt"


@pytest.mark.parametrize(
    "make",
    [missing, binary_content, binary_kind, pipe, empty_folder, below_a_file],
    ids=lambda make: make.__name__,
)
def test_a_bad_document_is_one_line_and_exit_2(
    tmp_path: Path, make: Callable[[Path], Path], cli: Cli
) -> None:
    path = make(tmp_path)
    result = cli("--query", QUERY, "--doc", str(path), "--model", TEST_MODEL, "--json")
    assert_one_line_error(result, str(path))


def test_an_unreadable_document_is_one_line_and_exit_2(tmp_path: Path, cli: Cli) -> None:
    path = tmp_path / "locked.txt"
    path.write_text("secret", encoding="utf-8")
    path.chmod(0)
    result = cli("--query", QUERY, "--doc", str(path), "--model", TEST_MODEL, **unprivileged())
    assert_one_line_error(result, str(path))
    assert "ermission" in result.stderr


@pytest.mark.parametrize(
    ("flags", "mentions"),
    [
        (["--max-depth", "0"], "--max-depth"),
        (["--profile", "nope"], "unknown profile"),
        (["--concurrency", "0"], "--concurrency"),
        (["--price", "openai/test-model=cheap"], "--price line 1"),
    ],
)
def test_bad_settings_are_one_line_and_exit_2(
    document: Path, flags: list[str], mentions: str, cli: Cli
) -> None:
    result = cli("--query", QUERY, "--doc", str(document), "--model", TEST_MODEL, *flags)
    assert_one_line_error(result, mentions)


def test_no_document_is_one_line_and_exit_2(cli: Cli) -> None:
    assert_one_line_error(cli("--query", QUERY, "--model", TEST_MODEL), "--doc")


def test_json_prints_one_object_and_keeps_secrets_from_model_code(
    scripted_server: ScriptedServer, document: Path, isolated_home: Path, cli: Cli
) -> None:
    turns = [repl("import os\nprint(dict(os.environ))"), repl("FINAL('The total is 42.')")]
    scripted_server.respond_with(scripted({QUERY: turns}))
    secrets = {"OPENAI_API_KEY": "sk-test-secret", "MY_SERVICE_TOKEN": "tok-4242-private"}
    result = cli(
        *served(scripted_server, "--doc", str(document), "--mode", "rlm", "--json"), env=secrets
    )

    assert result.returncode == 0, result.stderr
    assert len(result.stdout.strip().splitlines()) == 1
    output = json.loads(result.stdout)
    assert set(output) >= DESIGN_KEYS
    assert (output["status"], output["answer"], output["turns"]) == (
        "completed",
        "The total is 42.",
        2,
    )
    assert output["input_tokens"] > 0
    assert output["max_depth_reached"] == 1
    assert (isolated_home / "sessions.db").exists()
    sent = repr(scripted_server.chat_requests())
    assert "'HOME':" in sent
    assert "sk-test-secret" not in sent
    assert "tok-4242-private" not in sent
    headers = [value for h in scripted_server.headers for value in h.values()]
    assert not any("sk-test-secret" in value for value in headers)  # not OpenAI's key to --api-base
    assert "sk-test-secret" not in result.stderr


def test_a_run_without_an_answer_exits_1(
    scripted_server: ScriptedServer, document: Path, cli: Cli
) -> None:
    scripted_server.respond_with(scripted({QUERY: [repl("print(1)"), "Still not sure."]}))
    result = cli(
        *served(scripted_server, "--doc", str(document), "--mode", "rlm", "--max-turns", "1")
    )

    assert result.returncode == 1, result.stderr
    assert result.stdout == (
        "No answer (turn limit): no answer within 1 turn\n\n"
        "The model's last words, not an answer:\nStill not sure.\n"
    )
    assert "Traceback" not in result.stderr


def test_a_timed_out_run_says_why_first_and_bounds_the_model_s_last_words(
    scripted_server: ScriptedServer, document: Path, cli: Cli
) -> None:
    rambling = "I will keep thinking about the ledger.\n" * 150
    reply = Reply(content=rambling + repl("import time\ntime.sleep(90)"), chunk_chars=4096)
    scripted_server.respond_with(scripted({QUERY: [reply]}))
    args = served(scripted_server, "--doc", str(document), "--mode", "rlm", "--timeout", "12")
    shown = cli(*args)
    as_json = json.loads(cli(*args, "--json").stdout)

    assert shown.returncode == 1, shown.stderr
    why, last_words = shown.stdout.split("\n\n", 1)
    assert why.startswith("No answer (timed out): the run passed its 12 s time limit")
    assert last_words.startswith("The model's last words, not an answer:\nI will keep thinking")
    assert len(last_words) < 800
    assert "more characters)" in last_words
    assert as_json["status"] == "timeout"
    assert as_json["answer_kind"] == "last_reply"
    assert as_json["answer"].startswith(rambling.strip())


def test_a_run_past_its_time_limit_is_a_timeout(
    scripted_server: ScriptedServer, document: Path, cli: Cli
) -> None:
    scripted_server.respond_with(scripted({QUERY: [repl("import time\ntime.sleep(30)")]}))
    args = served(scripted_server, "--doc", str(document), "--mode", "rlm", "--timeout", "0.5")
    result = cli(*args, "--json")

    assert result.returncode == 1, result.stderr
    assert json.loads(result.stdout)["status"] == "timeout"


def test_an_interrupt_exits_130_and_stops_the_workers(
    scripted_server: ScriptedServer, document: Path, tmp_path: Path, isolated_home: Path
) -> None:
    code = f"import time\n{ANNOUNCE_PID}\ntime.sleep(60)"
    scripted_server.respond_with(scripted({QUERY: [repl(code)]}))
    args = served(scripted_server, "--doc", str(document), "--mode", "rlm", "--json")
    process = start_cli(
        "run", *args, home=isolated_home, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    out, err = interrupt_once(process, lambda: announced_pids(scripted_server), "the cell's start")
    found = announced_pids(scripted_server)

    assert process.returncode == 130, err
    assert json.loads(out)["status"] == "cancelled"
    assert "Traceback" not in err
    assert asyncio.run(still_alive(found)) == set()


@pytest.mark.parametrize(
    ("flags", "line"),
    [
        (["--max-cost", "0"], "rlm-desktop run: --max-cost must be > 0"),
        (["--timeout", "nan"], "rlm-desktop run: --timeout must be > 0 seconds"),
        (["--query", " "], "rlm-desktop run: --query is empty: ask a question"),
    ],
)
def test_the_engines_settings_are_named_by_their_flags(
    document: Path, flags: list[str], line: str, cli: Cli
) -> None:
    result = cli("--query", QUERY, "--doc", str(document), "--model", TEST_MODEL, *flags)
    assert_one_line_error(result, line)
    assert result.stderr == line + "\n"


@pytest.mark.parametrize(
    ("env", "advice"),
    [
        ({"LOCAL_LLM_API_KEY": "sk-wrong"}, "; the key sent was $LOCAL_LLM_API_KEY"),
        ({}, "; no key was set: set LOCAL_LLM_API_KEY"),
    ],
    ids=["from-the-environment", "none"],
)
def test_a_refused_key_is_one_line_saying_which_key_to_fix(
    scripted_server: ScriptedServer, document: Path, cli: Cli, env: dict[str, str], advice: str
) -> None:
    scripted_server.enqueue(Reply(status=401, content="Incorrect API key provided"))
    result = cli(*served(scripted_server, "--doc", str(document), "--mode", "rlm"), env=env)

    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    last = result.stderr.splitlines()[-1]
    assert last.startswith("rlm-desktop run: HTTP 401: ")
    assert last.endswith(" — check the API key" + advice)


def test_an_unexpected_error_is_one_line_and_exit_1(
    scripted_server: ScriptedServer, document: Path, isolated_home: Path, cli: Cli
) -> None:
    """The data folder's scratch folder is read-only, so no REPL folder can be made in it."""
    scratch = isolated_home / "scratch"
    scratch.mkdir(parents=True)
    scratch.chmod(0o555)
    scripted_server.respond_with(scripted({QUERY: [repl("FINAL('never run')")]}))
    args = served(scripted_server, "--doc", str(document), "--mode", "rlm", "--json")
    try:
        result = cli(*args, **unprivileged())
    finally:
        scratch.chmod(0o755)

    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    output = json.loads(result.stdout)
    assert output["status"] == "error"
    assert output["error"].startswith("internal error: PermissionError: ")
    assert result.stderr.splitlines()[-1] == f"rlm-desktop run: {output['error']}"


def test_the_command_lines_defaults_are_the_engines() -> None:
    from rlm_desktop.cli import build_parser
    from rlm_desktop.commands.run import config_from_args
    from rlm_desktop.engine import RunConfig

    args = build_parser().parse_args(["run", "--query", "q"])
    assert config_from_args(args) == RunConfig(query="q")


@pytest.mark.parametrize(
    ("make_url", "address"),
    [(closed_port_url, None), (lambda: UNKNOWN_HOST_URL, "nonexistent.invalid:80")],
    ids=["refused", "unknown-host"],
)
def test_a_server_that_cannot_be_reached_fails_fast_with_exit_1(
    document: Path, cli: Cli, make_url: Callable[[], str], address: str | None
) -> None:
    url = make_url()
    address = address or url.removeprefix("http://").removesuffix("/v1")
    args = ["--query", QUERY, "--doc", str(document), "--model", TEST_MODEL, "--api-base", url]
    started = time.monotonic()
    result = cli(*args, "--json")
    wall_s = time.monotonic() - started

    assert result.returncode == 1, result.stderr
    assert result.stdout == ""
    assert (
        result.stderr == f"rlm-desktop run: cannot connect to {address} — is the server running?\n"
    )
    assert wall_s < 5  # the "fails in under 2 s", with room for a loaded machine


@pytest.mark.parametrize(
    ("flags", "line"),
    [
        (
            ["--sub-model", "Summarise each chunk in one line"],
            "--sub-model 'Summarise each chunk in one line' is a sentence, not a model name: "
            "name a litellm model, e.g. openai/gpt-5-mini",
        ),
        (["--model", "openai/gpt-4o"], "--model 'openai/gpt-4o' is not served at "),
        (["--model", "test-model"], "--model 'test-model' needs a provider prefix: "),
    ],
    ids=["sentence-as-sub-model", "not-served", "no-prefix"],
)
def test_a_bad_model_exits_2_before_anything_is_sent(
    scripted_server: ScriptedServer, document: Path, cli: Cli, flags: list[str], line: str
) -> None:
    scripted_server.respond_with(scripted({QUERY: [repl("FINAL('never asked')")]}))
    result = cli(*served(scripted_server, "--doc", str(document), "--mode", "rlm", *flags))

    assert_one_line_error(result, "rlm-desktop run: " + line)
    assert result.stderr.startswith("rlm-desktop run: " + line)
    assert scripted_server.chat_requests() == []


def test_a_missing_key_exits_2_saying_where_to_put_it(document: Path, cli: Cli) -> None:
    result = cli("--query", QUERY, "--doc", str(document), "--model", "openai/gpt-5-mini")

    assert_one_line_error(result, "OPENAI_API_KEY")
    assert result.stderr == (
        "rlm-desktop run: OpenAI needs an API key: set OPENAI_API_KEY, "
        "or save it in the app (Settings → Providers)\n"
    )


def test_files_a_folder_leaves_out_are_named_with_their_reasons(
    scripted_server: ScriptedServer, tmp_path: Path, cli: Cli
) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "ledger.txt").write_text("line 1: amount 3\n", encoding="utf-8")
    (folder / "dump.bin").write_bytes(b"\x00\x01\x02" * 500)
    scripted_server.respond_with(scripted({QUERY: [repl("FINAL('3')")]}))
    result = cli(*served(scripted_server, "--doc", str(folder), "--mode", "rlm", "--json"))

    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["answer"] == "3"
    left_out = [line for line in result.stderr.splitlines() if "left out" in line]
    assert len(left_out) == 1
    assert "dump.bin" in left_out[0]
    assert "not a text document" in left_out[0]


def test_a_direct_call_past_the_local_server_s_window_is_one_line_naming_the_model_shortly(
    scripted_server: ScriptedServer, tmp_path: Path, cli: Cli
) -> None:
    """llama.cpp lists its model by path and says its window in /props: both are used."""
    gguf = "/tmp/models/gemma-3-270m-q4_k_m.gguf"
    scripted_server.models = (gguf,)
    scripted_server.routes["/props"] = {"default_generation_settings": {"n_ctx": 32_768}}
    long = tmp_path / "long.txt"
    long.write_text("word " * 31_000, encoding="utf-8")
    args = ["--model", f"openai/{gguf}", "--api-base", scripted_server.base_url, "--query", QUERY]
    result = cli(*args, "--doc", str(long), "--mode", "direct")

    assert_one_line_error(
        result,
        "do not fit gemma-3-270m-q4_k_m's window (32,768 tokens, as its server's llama.cpp /props "
        "says) with room for the reply; use rlm or auto",
    )
    assert scripted_server.chat_requests() == []


def test_progress_tells_each_root_reply_its_speed_and_where_it_was_cut(
    scripted_server: ScriptedServer, document: Path, cli: Cli
) -> None:
    writing = Reply(
        content=repl("print('counted')") + "\nOutput: imagined\n" * 100,
        chunk_chars=4,
        chunk_delay_s=0.005,
    )
    scripted_server.respond_with(scripted({QUERY: [writing, repl("FINAL('ok')")]}))
    result = cli(*served(scripted_server, "--doc", str(document), "--mode", "rlm"))

    assert result.returncode == 0, result.stderr
    (first, _second) = [line for line in result.stderr.splitlines() if "reply of" in line]
    assert first.startswith("[c1] reply of ")
    assert "tokens/s" in first
    assert first.endswith("read up to its code block")


def test_sources_are_checked_in_json_and_told_in_text(
    scripted_server: ScriptedServer, document: Path, cli: Cli
) -> None:
    made_up = "line 12: amount 99 was written off by the auditors"
    final = repl(f'FINAL("The amount is 5.", sources=["line 12: amount 5", {made_up!r}])')
    scripted_server.respond_with(scripted({QUERY: [final]}))
    result = cli(*served(scripted_server, "--doc", str(document), "--mode", "rlm", "--json"))
    assert result.returncode == 0, result.stderr
    sources = json.loads(result.stdout)["sources"]
    text = document.read_text(encoding="utf-8")
    at = text.index("line 12: amount 5")
    assert [(s["quote"], s["document"], s["start"], s["end"], s["match"]) for s in sources] == [
        ("line 12: amount 5", "ledger.txt", at, at + 17, "exact"),
        (made_up, None, None, None, "not_found"),
    ]
    assert {"quote", "document", "document_index", "start", "end", "match", "score"} <= set(
        sources[0]
    )
    shown = cli(*served(scripted_server, "--doc", str(document), "--mode", "rlm"))
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.strip() == "The amount is 5."
    assert "rlm-desktop run: sources: 1 of 2 found in the documents" in shown.stderr
    assert f"source [2] is not in the documents (the model may have made it up): “{made_up}”" in (
        shown.stderr
    )


def test_a_run_says_what_it_loaded_and_json_stays_quiet(
    scripted_server: ScriptedServer, tmp_path: Path, cli: Cli
) -> None:
    """A big folder used to load in silence for seconds: the run says what it loaded, how many
    tokens and how long it took, on stderr, before the run's own lines (one line, not a
    counter, when stderr is not a terminal); `--json` keeps stderr to what went wrong."""
    folder = tmp_path / "memos"
    folder.mkdir()
    for number in range(120):
        (folder / f"memo-{number}.txt").write_text(f"memo {number}: all well.\n" * 40)
    (folder / "blob.txt").write_bytes(bytes(range(256)) * 20)
    scripted_server.respond_with(scripted({QUERY: [repl("FINAL('all well')")]}))

    result = cli(*served(scripted_server, "--doc", str(folder), "--mode", "rlm"))
    quiet = cli(*served(scripted_server, "--doc", str(folder), "--mode", "rlm", "--json"))

    assert result.returncode == 0, result.stderr
    loaded = [line for line in result.stderr.splitlines() if line.startswith("loaded ")]
    assert len(loaded) == 1, result.stderr
    assert loaded[0].startswith("loaded 120 documents (")
    assert "tokens, 1 left out) in " in loaded[0]
    assert "\r" not in result.stderr
    assert result.stderr.index("loaded 120") < result.stderr.index("RLM call")
    assert quiet.returncode == 0, quiet.stderr
    assert "loaded " not in quiet.stderr
