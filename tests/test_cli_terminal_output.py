"""What a model, a provider or a document wrote prints inert on a terminal, in every command.

An attacker who steers the model (a prompt injection in a document) chooses the answer; a
provider chooses its error messages. Printed raw, either could set the window title (OSC 0),
clear the screen, write the clipboard (OSC 52), overwrite a line with CR or reverse text with
U+202E. Output is read here as bytes, so a raw CR cannot hide behind universal newlines.
"""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import tty
from pathlib import Path

import pytest

from tests.cli import CLI, ROOT, isolated_env, run_python, start_cli
from tests.conftest import TEST_MODEL
from tests.scripted_rlm import repl, scripted
from tests.scripted_server import Reply, ScriptedServer

ORDINARY = "Totals by region:\n\tNorth: 12\n  Sud: café, 東京, ✓ 🎉 (Zoë’s count)\nThat is all."
"""An answer of several lines, a tab and non-ASCII text: it must print exactly as it is."""
ATTACKS = {
    "\x1b]0;pwned title\x07": "\\x1b]0;pwned title\\x07",  # OSC 0: the window's title
    "\x1b[2J": "\\x1b[2J",  # clear the screen
    "\x1b]52;c;cm0gLXJmIH4=\x07": "\\x1b]52;c;cm0gLXJmIH4=\\x07",  # OSC 52: write the clipboard
    "fake total\roverwritten": "fake total\\roverwritten",  # CR: overwrite the line
    "abc\u202edef": "abc\\u202edef",  # right-to-left override
    "\x9b31mred": "\\x9b31mred",  # C1 CSI, one byte
}
HOSTILE = ORDINARY + "\n" + " ".join(ATTACKS)
SHOWN = ORDINARY + "\n" + " ".join(ATTACKS.values())
QUESTION = "Totals?\x1b]0;asked\x07\u202e"
QUESTION_SHOWN = "Totals?\\x1b]0;asked\\x07\\u202e"
DOCUMENT_NAME = "notes\x1b]0;doc\x07.txt"
RAW = {"\x1b": "\\x1b", "\x07": "\\x07", "\r": "\\r", "\u202e": "\\u202e", "\x9b": "\\x9b"}
"""Each raw character the attacks use, and how it reads escaped."""


def escaped(text: str) -> str:
    """`text` with each character of `RAW` escaped."""
    return "".join(RAW.get(char, char) for char in text)


def cli(home: Path, *args: str) -> tuple[int, str, str]:
    """`rlm-desktop *args`: exit code, stdout and stderr decoded from their exact bytes."""
    done = subprocess.run(
        [sys.executable, "-m", CLI, *args],
        cwd=ROOT,
        env=isolated_env(home),
        capture_output=True,
        timeout=60,
        check=False,
    )
    out, err = (part.decode("utf-8", "surrogateescape") for part in (done.stdout, done.stderr))
    return done.returncode, out, err


def assert_inert(text: str) -> None:
    """No raw control character, escape or bidi override of the attacks is in `text`."""
    assert not [char for char in RAW if char in text], ascii(text)


def run_args(server: ScriptedServer, document: Path, *extra: str) -> list[str]:
    return [
        "run", "--query", QUESTION, "--doc", str(document), "--model", TEST_MODEL,
        "--api-base", server.base_url, "--mode", "rlm", *extra,
    ]  # fmt: skip


@pytest.fixture
def document(tmp_path: Path) -> Path:
    path = tmp_path / DOCUMENT_NAME
    path.write_text("North: 12\nSud: 30\n", encoding="utf-8")
    return path


@pytest.fixture
def hostile_server(scripted_server: ScriptedServer) -> ScriptedServer:
    scripted_server.respond_with(scripted(root=[repl(f"FINAL({HOSTILE!r})")]))
    return scripted_server


def test_run_prints_a_hostile_answer_inert_and_an_ordinary_one_as_it_is(
    hostile_server: ScriptedServer, document: Path, isolated_home: Path
) -> None:
    code, out, err = cli(isolated_home, *run_args(hostile_server, document))

    assert code == 0, err
    assert out == SHOWN + "\n"
    assert_inert(out + err)


def test_json_output_escapes_what_a_terminal_would_act_on_and_parses_the_same(
    hostile_server: ScriptedServer, document: Path, isolated_home: Path
) -> None:
    code, out, err = cli(isolated_home, *run_args(hostile_server, document, "--json"))

    assert code == 0, err
    assert_inert(out + err)
    assert "東京" in out  # still readable: only what a terminal would act on is escaped
    assert "🎉" in out
    result = json.loads(out)
    assert result["answer"] == HOSTILE
    session = result["session_id"]
    for args in (
        ["sessions", "show", session, "--json"],
        ["sessions", "list", "--json"],
        ["sessions", "search", "pwned", "--json"],
        ["sessions", "health", session, "--json"],
    ):
        code, out, err = cli(isolated_home, *args)
        assert code == 0, err
        assert_inert(out + err)
        json.loads(out)
    shown = json.loads(cli(isolated_home, "sessions", "show", session, "--json")[1])
    assert (shown["session"]["answer"], shown["session"]["query"]) == (HOSTILE, QUESTION)
    assert shown["session"]["documents"][0]["name"] == DOCUMENT_NAME


def test_sessions_commands_print_answers_questions_and_names_inert(
    hostile_server: ScriptedServer, document: Path, isolated_home: Path
) -> None:
    code, out, err = cli(isolated_home, *run_args(hostile_server, document, "--json"))
    assert code == 0, err
    session = json.loads(out)["session_id"]

    code, shown, err = cli(isolated_home, "sessions", "show", session)
    assert code == 0, err
    assert_inert(shown + err)
    assert f"\nAnswer:\n{SHOWN}\n" in shown
    assert f"Question: {QUESTION_SHOWN}\n" in shown
    assert "Document: notes\\x1b]0;doc\\x07.txt " in shown

    for args, expected in (
        (["sessions", "list"], QUESTION_SHOWN),
        (["sessions", "search", "pwned"], "\\x1b]0;[pwned] title\\x07"),  # match marked
        (["sessions", "health", session], "notes\\x1b]0;doc\\x07.txt: "),
    ):
        code, out, err = cli(isolated_home, *args)
        assert code == 0, err
        assert_inert(out + err)
        assert expected in out, out


PROVIDER_SAYS = "Incorrect API key \x1b]0;pwned\x07\x1b[2J\u202eyek\x9b2J"


def test_a_providers_error_message_prints_inert_on_stderr(
    scripted_server: ScriptedServer, document: Path, isolated_home: Path
) -> None:
    scripted_server.enqueue(
        Reply(status=429, content="slow down \x1b]52;c;cm0=\x07", headers={"Retry-After": "0"}),
        Reply(status=401, content=PROVIDER_SAYS),
    )
    code, out, err = cli(isolated_home, *run_args(scripted_server, document))

    assert code == 1, err
    assert_inert(out + err)
    assert "slow down \\x1b]52;c;cm0=\\x07" in err  # the retry's progress line
    last = err.splitlines()[-1]
    assert last.startswith("rlm-desktop run: HTTP 401: ")
    assert "Incorrect API key \\x1b]0;pwned\\x07\\x1b[2J\\u202eyek\\x9b2J" in last


def test_a_usage_error_quoting_the_command_line_prints_inert(isolated_home: Path) -> None:
    code, out, err = cli(isolated_home, "run", "--query", "q", "\x1b]0;pwned\x07\x9b2J")

    assert code == 2
    assert_inert(out + err)
    assert "unrecognized arguments: \\x1b]0;pwned\\x07\\x9b2J" in err


LOGGING = """
import logging, sys, warnings
from rlm_desktop.cli import inert_stderr
with inert_stderr():
    handler = logging.StreamHandler()  # as litellm makes its own, after the app started
    logging.getLogger("provider").addHandler(handler)
    logging.getLogger("provider").warning("from a provider: %s", "\\x1b]0;log\\x07\\u202e")
    logging.getLogger("ours").warning("last resort: \\x1b[2J")
    warnings.warn("warned \\x9b2J")
    sys.stderr.write("line one\\r\\nline two\\n")
"""


def test_log_records_and_warnings_on_stderr_print_inert(isolated_home: Path) -> None:
    done = run_python("-c", LOGGING, home=isolated_home)

    assert done.returncode == 0, done.stderr
    assert_inert(done.stderr)
    assert "from a provider: \\x1b]0;log\\x07\\u202e\n" in done.stderr
    assert "last resort: \\x1b[2J\n" in done.stderr
    assert "warned \\x9b2J" in done.stderr
    assert done.stderr.endswith("line one\nline two\n")


def read_on_a_terminal(home: Path, *args: str) -> tuple[int, str, str]:
    """`rlm-desktop *args` with its stdout on a pseudo-terminal (raw: no CR added to newlines)."""
    leader, follower = pty.openpty()
    tty.setraw(follower)
    process = start_cli(*args, home=home, stdout=follower, stderr=subprocess.PIPE)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    _out, err = process.communicate(timeout=60)
    return process.returncode, b"".join(chunks).decode("utf-8", "surrogateescape"), err


def test_an_export_is_exact_in_a_file_or_pipe_and_inert_on_a_terminal(
    hostile_server: ScriptedServer, document: Path, isolated_home: Path, tmp_path: Path
) -> None:
    code, out, err = cli(isolated_home, *run_args(hostile_server, document, "--json"))
    assert code == 0, err
    session = json.loads(out)["session_id"]
    target = tmp_path / "session.md"
    code, _out, err = cli(isolated_home, "sessions", "export", session, "--format", "md", "-o",
                          str(target))  # fmt: skip
    assert code == 0, err
    exact = target.read_bytes()
    assert b"\\x1b]0;pwned title\\x07" in exact  # a file marks what the session holds
    assert b"\x1b" not in exact

    piped = subprocess.run(
        [sys.executable, "-m", CLI, "sessions", "export", session, "--format", "md"],
        cwd=ROOT, env=isolated_env(isolated_home), capture_output=True, timeout=60, check=False,
    )  # fmt: skip
    assert (piped.returncode, piped.stdout) == (0, exact)

    code, shown, err = read_on_a_terminal(isolated_home, "sessions", "export", session, "--format",
                                          "md")  # fmt: skip
    assert code == 0, err
    assert_inert(shown)
    assert shown == escaped(exact.decode("utf-8"))
    assert ORDINARY in shown

    code, shown, err = read_on_a_terminal(isolated_home, "sessions", "export", session, "--format",
                                          "otlp-proto")  # fmt: skip
    assert (code, shown) == (2, "")
    assert err.startswith("rlm-desktop sessions: otlp-proto is binary")
    assert "-o FILE" in err
