"""`rlm-desktop run` over a folder holds no copy of its documents beside the worker's, and
loses none of them: a restarted worker, the store and the sources check read them back.

The app's own resident memory is read (psutil) at the moment model code asks a sub-call, while
its worker holds the whole `context`; the scripted server answers the sub-call.
"""

from __future__ import annotations

import hashlib
import json
import random
import string
import subprocess
from pathlib import Path

import psutil

from tests.cli import start_cli
from tests.engine.scripting import QUERY, TEST_MODEL, repl, scripted
from tests.scripted_server import ScriptedServer

MB = 1_000_000
FILE_CHARS = 50_000
KEY = "tok-4242-private"
"""A secret-looking environment value a document holds: the store scrubs it from its copy."""
LAST_QUOTE = "the last report closes with this sentence, seven herons"
DIGEST = (
    "import hashlib\n"
    "digest = hashlib.sha256('\\x00'.join(context).encode('utf-8', 'surrogatepass')).hexdigest()\n"
    "print(digest, len(context))\n"
)
MEASURE = "llm_query('measure the app now')\n"


def make_folder(folder: Path, megabytes: int) -> list[str]:
    """`megabytes` MB of 50 KB files of varied words, one holding `KEY`, the last ending with
    `LAST_QUOTE`; their texts in load order."""
    folder.mkdir()
    chance = random.Random(46)
    words = ["".join(chance.choices(string.ascii_lowercase, k=6)) for _ in range(3_000)]
    texts = []
    count = max(2, megabytes * MB // FILE_CHARS)
    for number in range(count):
        text = f"report {number}\n" + " ".join(chance.choices(words, k=FILE_CHARS // 7))
        if number == 1:
            text += f"\nthe service token is {KEY}\n"
        if number == count - 1:
            text += f"\n{LAST_QUOTE}\n"
        (folder / f"report-{number:05}.txt").write_text(text, encoding="utf-8")
        texts.append(text)
    return texts


def sha256_of(texts: list[str]) -> str:
    return hashlib.sha256("\x00".join(texts).encode("utf-8", "surrogatepass")).hexdigest()


def run_over(
    server: ScriptedServer, folder: Path, home: Path
) -> tuple[subprocess.CompletedProcess[str], int]:
    """Run the script below over `folder`; the result and the app's resident bytes at the
    sub-call (made after its worker was killed and restarted with the documents again).

    The first cell rewrites `context` and kills its own worker; the second digests `context`
    and asks the sub-call; the third answers, quoting the last document.
    """
    turns = [
        repl("context.clear()\ncontext.append('rewritten')\nimport os, signal\n"
             "os.kill(os.getpid(), signal.SIGKILL)"),
        repl(DIGEST + MEASURE),
        repl(f"FINAL(digest, sources=[{LAST_QUOTE!r}])"),
    ]  # fmt: skip
    measured: list[int] = []
    command: list[subprocess.Popen[str]] = []

    def sub(prompt: str) -> str:
        measured.append(psutil.Process(command[0].pid).memory_info().rss)
        return "measured"

    server.respond_with(scripted({QUERY: turns}, sub=sub))
    args = ["run", "--model", TEST_MODEL, "--api-base", server.base_url, "--query", QUERY]
    command.append(
        start_cli(
            *args, "--doc", str(folder), "--mode", "rlm", "--json",
            home=home, env={"MY_SERVICE_TOKEN": KEY},
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
    )
    out, err = command[0].communicate(timeout=240)
    assert len(measured) == 1, err
    return subprocess.CompletedProcess(command[0].args, command[0].returncode, out, err), measured[0]


def test_a_restarted_worker_sees_every_document_as_loaded_while_the_app_holds_none(
    scripted_server: ScriptedServer, tmp_path: Path
) -> None:
    """60 MB of documents: after model code emptied `context` and killed its worker, the new
    worker holds every document byte for byte as loaded (the one with a key too: the store's
    copy is scrubbed, the worker's is the document), the answer's quote from the last document
    is found, and the app's own memory grew by far less than the documents beside a run over
    two small ones."""
    small = make_folder(tmp_path / "small", 0)
    big = make_folder(tmp_path / "big", 60)
    text_bytes = sum(len(text) for text in big)

    small_run, small_rss = run_over(scripted_server, tmp_path / "small", tmp_path / "home-small")
    assert small_run.returncode == 0, small_run.stderr
    result, big_rss = run_over(scripted_server, tmp_path / "big", tmp_path / "home-big")

    assert result.returncode == 0, result.stderr
    output = json.loads(result.stdout)
    assert output["answer"] == sha256_of(big)
    assert json.loads(small_run.stdout)["answer"] == sha256_of(small)
    (source,) = output["sources"]
    assert (source["match"], source["document_index"]) == ("exact", len(big) - 1)
    assert KEY not in (tmp_path / "home-big" / "sessions.db").read_bytes().decode("latin-1")
    grown = big_rss - small_rss
    assert grown < text_bytes / 4, f"the app grew {grown / MB:.0f} MB over {text_bytes / MB:.0f} MB"
