"""What every sandbox backend guarantees, attacked the same way under each (`sandbox`).

Model code tries to read the user's files, other sessions and the database, to write outside its
scratch folder, to reach the network by TCP, UDP and Unix sockets, to start processes, and to
find keys in its environment. Each attack runs in a real worker of the backend under test; the
test checks what happened outside the sandbox, not only what the cell printed.
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from rlm_desktop import paths
from rlm_desktop.engine.sandbox.process import WorkerProcess
from tests.engine.sandboxes import launcher_for

PROBE = (
    "def probe(name, action):\n"
    "    try:\n"
    "        shown = action()\n"
    "        print('ALLOWED', name, repr(shown)[:80])\n"
    "    except BaseException as error:\n"
    "        print('DENIED', name, type(error).__name__)\n"
)


async def nothing(op: str, args: dict[str, object]) -> str:
    return ""


@pytest.fixture
async def attacker(sandbox: str, tmp_path: Path) -> AsyncIterator[WorkerProcess]:
    launcher = launcher_for(sandbox, tmp_path / "run")
    worker = WorkerProcess(
        "ctx",
        [],
        scratch_dir=tmp_path / "run" / "w0",
        memory_limit_mb=512,
        output_cap_chars=100_000,
        handler=nothing,
        launcher=launcher,
    )
    await worker.start()
    yield worker
    await worker.close()
    await launcher.close()


async def probes(worker: WorkerProcess, attacks: str) -> dict[str, str]:
    """Each probe's verdict by name (ALLOWED or DENIED)."""
    outcome = await worker.execute(PROBE + attacks, 30)
    assert outcome.error is None, outcome.error
    verdicts = {}
    for line in outcome.stdout.splitlines():
        verdict, _, rest = line.partition(" ")
        if verdict in ("ALLOWED", "DENIED"):
            verdicts[rest.split(" ")[0]] = verdict
    return verdicts


async def test_files_outside_the_sandbox_cannot_be_read(
    attacker: WorkerProcess, tmp_path: Path
) -> None:
    secret = tmp_path / "home" / ".ssh" / "id_ed25519"
    secret.parent.mkdir(parents=True)
    secret.write_text("PRIVATE KEY")
    other_session = tmp_path / "other-run" / "w0" / "notes.txt"
    other_session.parent.mkdir(parents=True)
    other_session.write_text("another session's notes")
    database = paths.database_path()
    database.parent.mkdir(parents=True, exist_ok=True)
    database.write_text("SQLite format 3")
    verdicts = await probes(
        attacker,
        f"probe('secret', lambda: open({str(secret)!r}).read())\n"
        f"probe('other-session', lambda: open({str(other_session)!r}).read())\n"
        f"probe('database', lambda: open({str(database)!r}, 'rb').read())\n"
        f"probe('listing', lambda: __import__('os').listdir({str(tmp_path)!r}))\n",
    )
    assert verdicts == dict.fromkeys(["secret", "other-session", "database", "listing"], "DENIED")


async def test_nothing_is_written_outside_the_scratch_folder(
    attacker: WorkerProcess, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.txt"
    verdicts = await probes(
        attacker,
        f"probe('outside', lambda: open({str(outside)!r}, 'w').write('x'))\n"
        "probe('tmp', lambda: open('/tmp/rlm-sandbox-escape.txt', 'w').write('x'))\n"
        "open('notes.txt', 'w').write('kept')\n"
        "probe('scratch', lambda: open('notes.txt').read() == 'kept' or 1 / 0)\n",
    )
    assert verdicts == {"outside": "DENIED", "tmp": "DENIED", "scratch": "ALLOWED"}
    assert not any(map(Path.exists, (outside, Path("/tmp/rlm-sandbox-escape.txt"))))


async def test_no_network_by_tcp_udp_or_unix_socket(
    attacker: WorkerProcess, tmp_path: Path
) -> None:
    tcp = socket.create_server(("127.0.0.1", 0))
    tcp.setblocking(False)
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    udp.setblocking(False)
    unix_path = tmp_path / "app.sock"
    unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    unix.bind(str(unix_path))
    unix.listen()
    unix.setblocking(False)
    tcp_port, udp_port = tcp.getsockname()[1], udp.getsockname()[1]
    try:
        verdicts = await probes(
            attacker,
            "def tcp():\n"
            "    import socket\n"
            f"    socket.create_connection(('127.0.0.1', {tcp_port}), timeout=2).send(b'hi')\n"
            "def udp():\n"
            "    import socket\n"
            "    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
            f"    s.sendto(b'hi', ('127.0.0.1', {udp_port}))\n"
            "def unix():\n"
            "    import socket\n"
            "    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
            f"    s.connect({str(unix_path)!r})\n"
            "    s.send(b'hi')\n"
            "probe('tcp', tcp)\nprobe('udp', udp)\nprobe('unix', unix)\n",
        )
        assert verdicts == {"tcp": "DENIED", "udp": "DENIED", "unix": "DENIED"}
        for listener in (tcp, unix):
            with pytest.raises(BlockingIOError):
                listener.accept()
        with pytest.raises(BlockingIOError):
            udp.recv(10)
    finally:
        for opened in (tcp, udp, unix):
            opened.close()


async def test_a_process_model_code_starts_escapes_nothing(
    attacker: WorkerProcess, tmp_path: Path
) -> None:
    """The wasm sandbox starts no process at all; the kernel sandbox holds the processes model
    code starts as it holds the worker. Either way they reach nothing outside."""
    secret = tmp_path / "secret.txt"
    secret.write_text("PRIVATE-4242")
    marker = tmp_path / "ran.txt"
    outcome = await attacker.execute(
        "import os\n"
        "try:\n"
        f"    os.system('cat {secret} > {marker}; echo ran >> {marker}')\n"
        "except BaseException as error:\n"
        "    print('system', type(error).__name__)\n"
        "try:\n"
        "    import subprocess\n"
        f"    print(subprocess.run(['cat', {str(secret)!r}], capture_output=True).stdout)\n"
        "except BaseException as error:\n"
        "    print('subprocess', type(error).__name__)\n",
        30,
    )
    assert outcome.error is None, outcome.error
    assert "PRIVATE-4242" not in outcome.stdout
    assert not marker.exists()


async def test_keys_in_the_apps_environment_never_reach_model_code(
    sandbox: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret-4242")
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-4242-private")
    launcher = launcher_for(sandbox, tmp_path / "run")
    worker = WorkerProcess(
        "ctx",
        [],
        scratch_dir=tmp_path / "run" / "w0",
        memory_limit_mb=512,
        output_cap_chars=100_000,
        handler=nothing,
        launcher=launcher,
    )
    try:
        await worker.start()
        shown = await worker.execute("import os\nprint(dict(os.environ))", 20)
    finally:
        await worker.close()
        await launcher.close()
    assert "HOME" in shown.stdout
    assert "sk-test-secret-4242" not in shown.stdout
    assert "tok-4242-private" not in shown.stdout


async def test_a_folder_opened_to_model_code_is_read_only(sandbox: str, tmp_path: Path) -> None:
    opened = tmp_path / "opened"
    opened.mkdir()
    (opened / "note.txt").write_text("shared with the model")
    launcher = launcher_for(sandbox, tmp_path / "run", allow_read=(str(opened),))
    worker = WorkerProcess(
        "ctx",
        [],
        scratch_dir=tmp_path / "run" / "w0",
        memory_limit_mb=512,
        output_cap_chars=100_000,
        handler=nothing,
        launcher=launcher,
    )
    try:
        await worker.start()
        verdicts = await probes(
            worker,
            f"probe('read', lambda: open({str(opened / 'note.txt')!r}).read())\n"
            f"probe('write', lambda: open({str(opened / 'note.txt')!r}, 'w').write('x'))\n"
            f"probe('create', lambda: open({str(opened / 'new.txt')!r}, 'w').write('x'))\n"
            f"probe('remove', lambda: __import__('os').remove({str(opened / 'note.txt')!r}))\n",
        )
    finally:
        await worker.close()
        await launcher.close()
    assert verdicts == {"read": "ALLOWED", "write": "DENIED", "create": "DENIED", "remove": "DENIED"}
    assert (opened / "note.txt").read_text() == "shared with the model"
    assert not (opened / "new.txt").exists()
