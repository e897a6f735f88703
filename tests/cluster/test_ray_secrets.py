"""The provider key on its way through a Ray cluster: it reaches the provider from the node, and
is written nowhere on the node (Ray's logs and session files) nor readable by model code there,
which looks for it everywhere it can (its environment, every process's, the files under /tmp)."""

from __future__ import annotations

import json
import secrets
import sqlite3
from pathlib import Path

from tests.cli import run_cli
from tests.cluster.conftest import LocalCluster, ray_files_text
from tests.scripted_rlm import repl, scripted
from tests.scripted_server import ScriptedServer

HUNT = r"""
import glob, os, re
seen = [repr(dict(os.environ))]
for path in ["/proc/self/environ", *glob.glob("/proc/[0-9]*/environ"), *glob.glob("/proc/[0-9]*/cmdline")]:
    try:
        seen.append(open(path, "rb").read().decode("latin-1"))
    except OSError:
        pass
for root, _dirs, files in os.walk("/tmp"):
    for name in files:
        try:
            seen.append(open(os.path.join(root, name), "rb").read(2_000_000).decode("latin-1"))
        except OSError:
            pass
text = "\n".join(seen)
hits = sorted(set(re.findall(r"sk-raytest-[0-9a-f]+|gAAAAA[A-Za-z0-9_=-]{20,}", text)))
print("HITS", [hit[::-1] for hit in hits], "read", len(seen))
"""


def test_the_key_reaches_the_provider_and_nothing_on_the_node_keeps_or_shows_it(
    ray_cluster: LocalCluster, tmp_path: Path
) -> None:
    key = f"sk-raytest-{secrets.token_hex(12)}"
    server = ScriptedServer().start()
    try:
        server.respond_with(scripted(root=[repl(HUNT), repl("FINAL('done')")]))
        home = tmp_path / "home"
        done = run_cli("eval", "--task", "needle", "--length", "300", "--count", "1",
                       "--setting", "hunt:model=openai/test-model,mode=rlm,depth=1",
                       "--api-base", server.base_url, "--ray", ray_cluster.address, "--json",
                       home=home, env={"LOCAL_LLM_API_KEY": key}, timeout=300)  # fmt: skip
        assert done.returncode == 0, done.stderr
        sent = [h.get("authorization") or h.get("Authorization") for h in server.headers]
        assert sent
        assert all(value == f"Bearer {key}" for value in sent)
    finally:
        server.stop()
    on_node = ray_files_text(ray_cluster.temp_dir)
    assert "RLM_DESKTOP_SEALED_API_KEY" in on_node  # the sealed form is what Ray logged
    assert key not in on_node
    with sqlite3.connect(home / "sessions.db") as db:
        (stdout,) = db.execute("SELECT stdout FROM cells WHERE stdout LIKE 'HITS%'").fetchone()
        dump = "\n".join(db.iterdump())
    assert stdout.startswith("HITS [] read "), stdout
    assert int(stdout.split()[-1]) > 1  # the code did look
    assert key not in dump
    assert key[::-1] not in dump
    assert key not in done.stdout + done.stderr
    assert json.loads(done.stdout)["executor"] == "ray"
